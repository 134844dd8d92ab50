// Socket integration tests of the batch path (Endpoint::prepare / postBatch, issue #26): one
// sendmsg per batch, order and payload of every post, partial counts, one-line prepare errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <sys/uio.h>

#include "common/error.h"
#include "socket_test_util.h"
#include "transport/backends.h"
#include "transport/socket/endpoint.h"

namespace rdmabench::transport {
namespace {

using testing::connectPair;
using testing::fillRandom;
using testing::Harness;
using testing::loopbackOptions;

// --- batch path (prepare / postBatch) ---

// Posts posts[0..n) of `op` on `ep`, polling both devices of `h` whenever the queue is full;
// returns the counts postBatch returned, in order.
std::vector<uint32_t> postAll(Harness& h, Endpoint& ep, const PreparedOp& op,
                              const std::vector<BatchPost>& posts) {
  std::vector<uint32_t> counts;
  uint32_t done = 0;
  Deadline d(20000);
  while (done < posts.size() && !d.expired()) {
    const uint32_t left = static_cast<uint32_t>(posts.size()) - done;
    const uint32_t got = ep.postBatch(op, posts.data() + done, left);
    EXPECT_LE(got, left);
    counts.push_back(got);
    done += got;
    if (done < posts.size()) h.pollOnce();
  }
  EXPECT_EQ(done, posts.size());
  return counts;
}

std::vector<BatchPost> batchOf(uint32_t n, uint64_t context0, bool signalLastOnly) {
  std::vector<BatchPost> b(n);
  for (uint32_t i = 0; i < n; ++i)
    b[i] = {context0 + i, !signalLastOnly || i + 1 == n};
  return b;
}

// `batches` batches of `n` sends of `msg` bytes; batch k sends the pattern of seed k (one
// prepared op per batch, as bw does per size). Receives are posted as one batch too. Checks the
// known answer of every receive, the receive order and the send completions (only the last of
// each batch is signaled: exactly one completion per batch, in post order).
void checkBatchedSends(Harness& h, uint32_t msg, uint32_t n, uint32_t batches) {
  std::vector<uint8_t> src(size_t{msg} * batches), dst(size_t{msg} * n * batches);
  auto ms = h.a->registerMemory(src.data(), src.size());
  auto md = h.b->registerMemory(dst.data(), dst.size());
  for (uint32_t k = 0; k < batches; ++k) {
    SCOPED_TRACE("batch " + std::to_string(k));
    std::vector<uint8_t> pattern(msg);
    fillRandom(pattern, k + 1);
    std::memcpy(&src[size_t{k} * msg], pattern.data(), msg);
    for (uint32_t i = 0; i < n; ++i) {
      PreparedOp r = h.eb->prepare(OpKind::kRecv, *md, (size_t{k} * n + i) * msg, msg);
      ASSERT_EQ(h.eb->postBatch(r, std::vector<BatchPost>{{k * n + i, true}}.data(), 1), 1u);
    }
    PreparedOp s = h.ea->prepare(OpKind::kSend, *ms, size_t{k} * msg, msg);
    postAll(h, *h.ea, s, batchOf(n, 1000 + k * n, true));
    ASSERT_TRUE(h.pollUntil([&] { return h.cb.size() == (k + 1) * n; }));
    for (uint32_t i = 0; i < n; ++i) {
      const Completion& c = h.cb[k * n + i];
      ASSERT_TRUE(c.ok()) << h.b->errorText(c);
      EXPECT_EQ(c.context, k * n + i) << "receive out of order";
      EXPECT_EQ(c.bytes, msg);
      EXPECT_EQ(0, std::memcmp(&dst[(size_t{k} * n + i) * msg], pattern.data(), msg));
    }
    ASSERT_TRUE(h.pollUntil([&] { return h.ca.size() == k + 1; }));
    EXPECT_EQ(h.ca[k].context, 1000 + k * n + n - 1);
  }
}

TEST(SocketTransport, BatchOfSendsDeliversEachMessageInOrderWithItsPayload) {
  for (uint32_t msg : {8u, 4096u, 70000u}) {  // inline, iovec pair, direct read at the target
    SCOPED_TRACE("message " + std::to_string(msg));
    Harness h;
    checkBatchedSends(h, msg, 32, 4);
  }
}

// More posts than IOV_MAX / 2: the batch needs more than one sendmsg() (and the socket buffer
// fills: short writes). All 600 arrive in order; only the last send completes (moderation).
TEST(SocketTransport, BatchCrossingIovMaxArrivesWhole) {
  static_assert(600 * 2 > socket::kMaxIov, "the batch must need more iovecs than one sendmsg");
  DeviceOptions o = loopbackOptions();
  o.txDepth = 1024;
  o.rxDepth = 1024;
  Harness h;
  h.ea.reset();
  h.eb.reset();
  h.a = socket::openDevice(o);
  h.b = socket::openDevice(o);
  std::tie(h.ea, h.eb) = connectPair(*h.a, *h.b);
  const uint32_t kMsg = 4096, kN = 600;  // > inline: two iovecs per post
  std::vector<uint8_t> src(kMsg), dst(size_t{kMsg} * kN);
  fillRandom(src, 7);
  auto ms = h.a->registerMemory(src.data(), src.size());
  auto md = h.b->registerMemory(dst.data(), dst.size());
  for (uint32_t i = 0; i < kN; ++i) {
    PreparedOp r = h.eb->prepare(OpKind::kRecv, *md, size_t{i} * kMsg, kMsg);
    BatchPost b{i, true};
    ASSERT_EQ(h.eb->postBatch(r, &b, 1), 1u);
  }
  PreparedOp s = h.ea->prepare(OpKind::kSend, *ms, 0, kMsg);
  auto posts = batchOf(kN, 5000, true);
  EXPECT_EQ(h.ea->postBatch(s, posts.data(), kN), kN);  // the queue holds all 600
  ASSERT_TRUE(h.pollUntil([&] { return h.cb.size() == kN && h.ca.size() == 1; }));
  for (uint32_t i = 0; i < kN; ++i) {
    ASSERT_TRUE(h.cb[i].ok()) << h.b->errorText(h.cb[i]);
    ASSERT_EQ(h.cb[i].context, i);
    ASSERT_EQ(0, std::memcmp(&dst[size_t{i} * kMsg], src.data(), kMsg)) << "message " << i;
  }
  EXPECT_EQ(h.ca[0].context, 5000u + kN - 1);
  for (int i = 0; i < 10; ++i)
    h.pollOnce();
  EXPECT_EQ(h.ca.size(), 1u);
}

// A batch larger than the free queue: postBatch returns the prefix it took; the rest follows
// after polls, and every message arrives once, in order.
TEST(SocketTransport, BatchLargerThanTheQueueReturnsPartialCounts) {
  DeviceOptions o = loopbackOptions();
  o.txDepth = 4;
  Harness h;
  h.ea.reset();
  h.eb.reset();
  h.a = socket::openDevice(o);
  h.b = socket::openDevice(loopbackOptions());
  std::tie(h.ea, h.eb) = connectPair(*h.a, *h.b);
  const uint32_t kN = 10;
  std::vector<uint8_t> src(64), dst(64 * kN);
  fillRandom(src, 3);
  auto ms = h.a->registerMemory(src.data(), src.size());
  auto md = h.b->registerMemory(dst.data(), dst.size());
  for (uint32_t i = 0; i < kN; ++i)
    ASSERT_EQ(h.eb->postRecv(*md, i * 64, 64, i), PostResult::kOk);
  PreparedOp s = h.ea->prepare(OpKind::kSend, *ms, 0, 64);
  auto posts = batchOf(kN, 100, false);
  EXPECT_EQ(h.ea->postBatch(s, posts.data(), kN), 4u);  // the queue is empty: exactly its depth
  postAll(h, *h.ea, s, std::vector<BatchPost>(posts.begin() + 4, posts.end()));
  ASSERT_TRUE(h.pollUntil([&] { return h.cb.size() == kN && h.ca.size() == kN; }));
  for (uint32_t i = 0; i < kN; ++i) {
    EXPECT_EQ(h.cb[i].context, i);
    EXPECT_EQ(h.ca[i].context, 100 + i);
    EXPECT_EQ(0, std::memcmp(&dst[i * 64], src.data(), 64));
  }
}

// The batch hands its bytes to the kernel itself: the receiver gets them while only the
// receiver polls (a single post would wait for the sender's poll()).
TEST(SocketTransport, BatchLeavesWithoutASenderPoll) {
  Harness h;
  std::vector<uint8_t> src(512), dst(512 * 4);
  fillRandom(src, 9);
  auto ms = h.a->registerMemory(src.data(), src.size());
  auto md = h.b->registerMemory(dst.data(), dst.size());
  for (uint32_t i = 0; i < 4; ++i)
    ASSERT_EQ(h.eb->postRecv(*md, i * 512, 512, i), PostResult::kOk);
  PreparedOp s = h.ea->prepare(OpKind::kSend, *ms, 0, 512);
  auto posts = batchOf(4, 0, true);
  ASSERT_EQ(h.ea->postBatch(s, posts.data(), 4), 4u);
  Completion c[8];
  size_t got = 0;
  Deadline d(10000);
  while (got < 4 && !d.expired())
    got += h.b->poll(c + got, 8 - got);
  ASSERT_EQ(got, 4u);
  for (uint32_t i = 0; i < 4; ++i)
    EXPECT_EQ(0, std::memcmp(&dst[i * 512], src.data(), 512));
}

TEST(SocketTransport, BatchedWritesAndReadsMoveTheRightBytes) {
  Harness h;
  const uint32_t kMsg = 1024, kN = 16;
  std::vector<uint8_t> src(kMsg * kN), dst(kMsg * kN), back(kMsg * kN);
  fillRandom(src, 11);
  auto ms = h.a->registerMemory(src.data(), src.size());
  auto mback = h.a->registerMemory(back.data(), back.size());
  auto md = h.b->registerMemory(dst.data(), dst.size());
  RemoteRegion remote = md->exportRegion();
  for (uint32_t i = 0; i < kN; ++i) {  // one batch of 1 per offset, then all of them at once
    PreparedOp w = h.ea->prepare(OpKind::kWrite, *ms, i * kMsg, kMsg, &remote, i * kMsg);
    BatchPost b{i, i + 1 == kN};
    ASSERT_EQ(h.ea->postBatch(w, &b, 1), 1u);
  }
  ASSERT_TRUE(h.pollUntil([&] { return h.ca.size() == 1; }));
  EXPECT_EQ(src, dst);
  PreparedOp r = h.ea->prepare(OpKind::kRead, *mback, 0, kMsg, &remote, 3 * kMsg);
  auto posts = batchOf(kN, 50, true);  // reads always complete, signaled or not
  postAll(h, *h.ea, r, posts);
  ASSERT_TRUE(h.pollUntil([&] { return h.ca.size() == 1 + kN; }));
  for (uint32_t i = 0; i < kN; ++i)
    EXPECT_EQ(h.ca[1 + i].context, 50 + i);
  EXPECT_EQ(0, std::memcmp(back.data(), &src[3 * kMsg], kMsg));
}

TEST(SocketTransport, PrepareOutOfRangeThrowsOneLineError) {
  Harness h;
  std::vector<uint8_t> buf(4096);
  auto mr = h.a->registerMemory(buf.data(), buf.size());
  auto text = [&](const std::function<void()>& fn) {
    try {
      fn();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(nothing thrown)");
  };
  std::string e = text([&] { (void)h.ea->prepare(OpKind::kSend, *mr, 4000, 97); });
  EXPECT_NE(e.find("prepare send"), std::string::npos) << e;
  EXPECT_NE(e.find("[4000, 4097) outside the registered region of 4096 bytes"), std::string::npos)
      << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  RemoteRegion remote = mr->exportRegion();
  e = text([&] { (void)h.ea->prepare(OpKind::kWrite, *mr, 0, 64, &remote, 4090); });
  EXPECT_NE(e.find("prepare write"), std::string::npos) << e;
  EXPECT_NE(e.find("remote range [4090, 4154) outside the remote region"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  remote.key.resize(4);
  e = text([&] { (void)h.ea->prepare(OpKind::kRead, *mr, 0, 64, &remote, 0); });
  EXPECT_NE(e.find("remote key of 4 bytes"), std::string::npos) << e;
  EXPECT_NO_THROW((void)h.ea->prepare(OpKind::kSend, *mr, 4000, 96));
}

}  // namespace
}  // namespace rdmabench::transport
