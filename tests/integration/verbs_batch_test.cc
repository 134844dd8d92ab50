// libibverbs backend: prepared operations posted in batches (Endpoint::prepare / postBatch,
// perftest's post list). The backend keeps one prepared chain of work requests per endpoint and
// patches only wr_id and flags per post; these tests switch ops between batches (the chain is
// rebuilt), overfill the send queue (partial counts, the hidden signaled post) and check every
// payload, in order. Skips without an RDMA device; runs for real in the soft-RoCE VM.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "transport/backends.h"
#include "transport/transport.h"
#include "verbs_test_util.h"

namespace rdmabench::transport {
namespace {

using namespace verbstest;

constexpr uint32_t kSize = 64;

// Polls `dev` until `n` completions arrived; returns them in arrival order.
std::vector<Completion> waitN(Device& dev, size_t n) {
  std::vector<Completion> out;
  while (out.size() < n)
    out.push_back(waitOk(dev));
  return out;
}

TEST(VerbsBatch, SwitchingPreparedOpsDeliversEachPayloadInOrder) {
  SKIP_WITHOUT_VERBS();
  DeviceOptions o = baseOptions();
  o.txDepth = 16;
  o.rxDepth = 128;
  Loopback lb(o);
  constexpr uint32_t kMsgs = 40;
  std::vector<uint8_t> bufA(4 * kSize), bufB(kMsgs * kSize);
  fillPattern(bufA.data(), kSize, 1);
  fillPattern(bufA.data() + kSize, kSize, 2);
  auto mrA = lb.a->registerMemory(bufA.data(), bufA.size());
  auto mrB = lb.b->registerMemory(bufB.data(), bufB.size());

  // Receive k lands in its own slot of B (one prepared op per slot, batches of one).
  for (uint32_t k = 0; k < kMsgs; ++k) {
    PreparedOp r = lb.eb[0]->prepare(OpKind::kRecv, *mrB, k * kSize, kSize);
    BatchPost p{k, true};
    ASSERT_EQ(lb.eb[0]->postBatch(r, &p, 1), 1u) << k;
  }
  // Two send ops (payload 1 and payload 2); batches of 5 alternate between them.
  const PreparedOp s1 = lb.ea[0]->prepare(OpKind::kSend, *mrA, 0, kSize);
  const PreparedOp s2 = lb.ea[0]->prepare(OpKind::kSend, *mrA, kSize, kSize);
  uint32_t sent = 0, sendCompletions = 0;
  Deadline deadline(kWaitMs);
  while (sent < kMsgs) {
    ASSERT_FALSE(deadline.expired()) << "sent " << sent;
    const PreparedOp& op = (sent / 5) % 2 == 0 ? s1 : s2;
    BatchPost b[5];
    const uint32_t want = 5 - sent % 5;
    for (uint32_t i = 0; i < want; ++i)
      b[i] = BatchPost{sent + i, sent + i + 1 == kMsgs};  // only the last one is signaled
    sent += lb.ea[0]->postBatch(op, b, want);
    Completion c[8];
    size_t n = lb.a->poll(c, 8);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_TRUE(c[i].ok()) << lb.a->errorText(c[i]);
      EXPECT_EQ(c[i].context, kMsgs - 1);
      ++sendCompletions;
    }
  }
  std::vector<Completion> got = waitN(*lb.b, kMsgs);
  for (uint32_t k = 0; k < kMsgs; ++k) {
    EXPECT_EQ(got[k].context, k) << "receives complete in post order";
    EXPECT_EQ(got[k].bytes, kSize);
    EXPECT_TRUE(checkPattern(bufB.data() + k * kSize, kSize, (k / 5) % 2 == 0 ? 1 : 2))
        << "message " << k << " carries the payload of the op it was posted with";
  }
  EXPECT_LE(sendCompletions, 1u) << "only the last post was signaled";
  if (sendCompletions == 0) {
    EXPECT_EQ(waitOk(*lb.a).context, kMsgs - 1);
  }
}

TEST(VerbsBatch, BatchLargerThanTheQueueIsAcceptedInPartAndDrainsUnsignaled) {
  SKIP_WITHOUT_VERBS();
  DeviceOptions o = baseOptions();
  o.txDepth = 16;
  o.rxDepth = 64;
  Loopback lb(o);
  std::vector<uint8_t> bufA(kSize), bufB(kSize);
  auto mrA = lb.a->registerMemory(bufA.data(), bufA.size());
  auto mrB = lb.b->registerMemory(bufB.data(), bufB.size());
  const PreparedOp r = lb.eb[0]->prepare(OpKind::kRecv, *mrB, 0, kSize);
  std::vector<BatchPost> recvs(40);
  for (uint32_t k = 0; k < 40; ++k)
    recvs[k] = BatchPost{k, true};
  ASSERT_EQ(lb.eb[0]->postBatch(r, recvs.data(), 40), 40u) << "40 receives: two chains";

  // 20 unsignaled sends into a queue of 16: 16 accepted; the one filling the last slot is
  // signaled underneath, so the queue drains although no completion is reported.
  const PreparedOp s = lb.ea[0]->prepare(OpKind::kSend, *mrA, 0, kSize);
  std::vector<BatchPost> b(20);
  for (uint32_t k = 0; k < 20; ++k)
    b[k] = BatchPost{100 + k, false};
  ASSERT_EQ(lb.ea[0]->postBatch(s, b.data(), 20), 16u);
  Deadline deadline(kWaitMs);
  uint32_t posted = 16;
  size_t reported = 0;
  while (posted < 20) {
    ASSERT_FALSE(deadline.expired()) << "send queue never drained";
    Completion c[8];
    reported += lb.a->poll(c, 8);
    b[19].signaled = true;
    posted += lb.ea[0]->postBatch(s, b.data() + posted, 20 - posted);
  }
  EXPECT_EQ(reported, 0u) << "unsignaled batch posts must not report completions";
  EXPECT_EQ(waitOk(*lb.a).context, 119u);
  std::vector<Completion> got = waitN(*lb.b, 20);
  for (uint32_t k = 0; k < 20; ++k)
    EXPECT_EQ(got[k].context, k);

  // A write batch, then a read batch on the same endpoint: the chain is rebuilt per op.
  std::vector<uint8_t> src(2 * kSize), dst(4 * kSize, 0);
  fillPattern(src.data(), src.size(), 9);
  auto mrSrc = lb.a->registerMemory(src.data(), src.size());
  auto mrDst = lb.b->registerMemory(dst.data(), dst.size());
  const RemoteRegion remote = mrDst->exportRegion();
  const PreparedOp w = lb.ea[0]->prepare(OpKind::kWrite, *mrSrc, 0, 2 * kSize, &remote, kSize);
  BatchPost wb[3] = {{200, false}, {201, false}, {202, true}};
  ASSERT_EQ(lb.ea[0]->postBatch(w, wb, 3), 3u);
  EXPECT_EQ(waitOk(*lb.a).context, 202u);
  EXPECT_TRUE(checkPattern(dst.data() + kSize, 2 * kSize, 9));
  std::fill(src.begin(), src.end(), 0);
  const PreparedOp rd = lb.ea[0]->prepare(OpKind::kRead, *mrSrc, 0, 2 * kSize, &remote, kSize);
  BatchPost rb[2] = {{300, false}, {301, false}};  // reads always complete
  ASSERT_EQ(lb.ea[0]->postBatch(rd, rb, 2), 2u);
  std::vector<Completion> reads = waitN(*lb.a, 2);
  EXPECT_EQ(reads[0].context, 300u);
  EXPECT_EQ(reads[1].context, 301u);
  EXPECT_EQ(reads[1].op, OpKind::kRead);
  EXPECT_TRUE(checkPattern(src.data(), 2 * kSize, 9));
}

// Runs (postRun): one context per run, only the run's last post may complete; a run larger
// than the queue is cut to a prefix that drains without a completion; runs and per-post
// batches alternate on one endpoint (two prepared chains); payloads arrive in order.
TEST(VerbsBatch, RunsCompleteOnceWithTheirContext) {
  SKIP_WITHOUT_VERBS();
  DeviceOptions o = baseOptions();
  o.txDepth = 16;
  o.rxDepth = 128;
  Loopback lb(o);
  std::vector<uint8_t> bufA(kSize), bufB(kSize);
  fillPattern(bufA.data(), kSize, 4);
  auto mrA = lb.a->registerMemory(bufA.data(), bufA.size());
  auto mrB = lb.b->registerMemory(bufB.data(), bufB.size());
  const PreparedOp r = lb.eb[0]->prepare(OpKind::kRecv, *mrB, 0, kSize);
  std::vector<BatchPost> recvs(64);
  for (uint32_t k = 0; k < 64; ++k)
    recvs[k] = BatchPost{k, true};
  ASSERT_EQ(lb.eb[0]->postBatch(r, recvs.data(), 64), 64u);
  const PreparedOp s = lb.ea[0]->prepare(OpKind::kSend, *mrA, 0, kSize);
  ASSERT_EQ(lb.ea[0]->postRun(s, 500, 5, false), 5u);
  ASSERT_EQ(lb.ea[0]->postRun(s, 501, 5, true), 5u);
  EXPECT_EQ(waitOk(*lb.a).context, 501u);
  // 20 into a queue of 16: a prefix of 16, none reported, the queue still drains.
  uint32_t posted = lb.ea[0]->postRun(s, 600, 20, true);
  EXPECT_EQ(posted, 16u);
  Deadline deadline(kWaitMs);
  size_t reported = 0;
  while (posted < 20) {
    ASSERT_FALSE(deadline.expired()) << "send queue never drained";
    Completion c[8];
    reported += lb.a->poll(c, 8);
    posted += lb.ea[0]->postRun(s, 600, 20 - posted, true);
  }
  EXPECT_EQ(reported, 0u) << "a cut run reports nothing";
  EXPECT_EQ(waitOk(*lb.a).context, 600u);
  // A per-post batch, then a run again: each keeps its own chain.
  BatchPost b[3] = {{700, true}, {701, false}, {702, true}};
  ASSERT_EQ(lb.ea[0]->postBatch(s, b, 3), 3u);
  ASSERT_EQ(lb.ea[0]->postRun(s, 703, 7, true), 7u);
  EXPECT_EQ(waitOk(*lb.a).context, 700u);
  EXPECT_EQ(waitOk(*lb.a).context, 702u);
  EXPECT_EQ(waitOk(*lb.a).context, 703u);
  std::vector<Completion> got = waitN(*lb.b, 40);
  for (uint32_t k = 0; k < 40; ++k)
    EXPECT_EQ(got[k].context, k);
  EXPECT_TRUE(checkPattern(bufB.data(), kSize, 4));
}

// A run of writes to a wrong remote key: every post fails, each reported with its run's
// context (the first with the remote access error, the rest flushed), nothing is lost.
TEST(VerbsBatch, FailedRunsReportEveryPostWithTheRunContext) {
  SKIP_WITHOUT_VERBS();
  DeviceOptions o = baseOptions();
  o.txDepth = 16;
  Loopback lb(o);
  std::vector<uint8_t> src(kSize), dst(kSize);
  auto mrSrc = lb.a->registerMemory(src.data(), src.size());
  auto mrDst = lb.b->registerMemory(dst.data(), dst.size());
  RemoteRegion remote = mrDst->exportRegion();
  ASSERT_FALSE(remote.key.empty());
  remote.key[0] ^= 0xff;  // the wrong rkey
  const PreparedOp w = lb.ea[0]->prepare(OpKind::kWrite, *mrSrc, 0, kSize, &remote, 0);
  ASSERT_EQ(lb.ea[0]->postRun(w, 800, 4, false), 4u);
  ASSERT_EQ(lb.ea[0]->postRun(w, 801, 4, true), 4u);
  std::vector<Completion> got;
  Deadline deadline(kWaitMs);
  while (got.size() < 8 && !deadline.expired()) {
    Completion c[8];
    size_t n = lb.a->poll(c, 8);
    got.insert(got.end(), c, c + n);
  }
  ASSERT_EQ(got.size(), 8u);
  for (size_t k = 0; k < 8; ++k) {
    EXPECT_FALSE(got[k].ok()) << k;
    EXPECT_EQ(got[k].context, k < 4 ? 800u : 801u) << k;
    EXPECT_EQ(got[k].op, OpKind::kWrite) << k;
  }
  EXPECT_EQ(got[0].status, CompletionStatus::kError);
  EXPECT_EQ(got[7].status, CompletionStatus::kFlushed);
}

}  // namespace
}  // namespace rdmabench::transport
