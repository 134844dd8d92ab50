// The ofi backend's op-context pool (lib/transport/ofi/completion_pool.h) without a provider:
// send-side completions are reported in post order whatever order they complete in, receives
// as they complete, and slots are recycled.

#include "transport/ofi/completion_pool.h"

#include <gtest/gtest.h>

#include <vector>

namespace rdmabench::transport::ofi {
namespace {

struct FakeContext {
  void* internal[8];  // the size of fi_context2
};
using Pool = CompletionPool<FakeContext>;

ConnQueues queues(uint32_t txDepth) {
  ConnQueues q;
  q.txRing.resize(txDepth);
  return q;
}

std::vector<uint64_t> drainReady(Pool& pool) {
  std::vector<uint64_t> users;
  uint32_t idx = 0;
  while (pool.popReady(idx)) {
    users.push_back(pool[idx].user);
    pool.release(idx);
  }
  return users;
}

TEST(OfiCompletionPool, SendSideCompletionsAreReportedInPostOrder) {
  Pool pool;
  pool.init(8);
  ConnQueues q = queues(4);
  uint32_t a = pool.allocate(0, OpKind::kSend, 100, 10, true);
  pool.pushTx(q, a);
  uint32_t b = pool.allocate(0, OpKind::kWrite, 101, 20, true);
  pool.pushTx(q, b);
  uint32_t c = pool.allocate(0, OpKind::kRead, 102, 30, true);
  pool.pushTx(q, c);

  pool.complete(q, c, 30, 0);  // the last one first: nothing is ready yet
  pool.complete(q, b, 20, 0);
  EXPECT_TRUE(drainReady(pool).empty());
  EXPECT_EQ(q.txCount, 3u);

  pool.complete(q, a, 10, 0);  // the head completes: all three, in post order
  EXPECT_EQ(drainReady(pool), (std::vector<uint64_t>{100, 101, 102}));
  EXPECT_EQ(q.txCount, 0u);
  EXPECT_EQ(pool.freeCount(), 8u);
}

TEST(OfiCompletionPool, ReceivesAreReadyAtOnceWithTheirLength) {
  Pool pool;
  pool.init(4);
  ConnQueues q = queues(2);
  uint32_t s = pool.allocate(0, OpKind::kSend, 1, 64, true);
  pool.pushTx(q, s);
  uint32_t r = pool.allocate(0, OpKind::kRecv, 2, 4096, true);
  ++q.recvCount;
  pool.complete(q, r, 17, 0);  // a receive does not wait for the send posted before it
  EXPECT_EQ(q.recvCount, 0u);
  uint32_t idx = 0;
  ASSERT_TRUE(pool.popReady(idx));
  EXPECT_EQ(idx, r);
  EXPECT_EQ(pool[idx].bytes, 17u);  // received length, not the posted size
  EXPECT_EQ(pool[idx].op, OpKind::kRecv);
  EXPECT_FALSE(pool.popReady(idx));
}

TEST(OfiCompletionPool, FailedReceiveKeepsPostedSizeAndStatus) {
  Pool pool;
  pool.init(2);
  ConnQueues q = queues(1);
  uint32_t r = pool.allocate(3, OpKind::kRecv, 7, 256, true);
  ++q.recvCount;
  pool[r].errorId = 9;
  pool.complete(q, r, 9999, -5);
  uint32_t idx = 0;
  ASSERT_TRUE(pool.popReady(idx));
  EXPECT_EQ(pool[idx].status, -5);
  EXPECT_EQ(pool[idx].bytes, 256u);
  EXPECT_EQ(pool[idx].conn, 3u);
  EXPECT_EQ(pool[idx].errorId, 9u);
}

TEST(OfiCompletionPool, ConnectionsAreOrderedIndependently) {
  Pool pool;
  pool.init(8);
  ConnQueues q0 = queues(4);
  ConnQueues q1 = queues(4);
  uint32_t a0 = pool.allocate(0, OpKind::kSend, 10, 1, true);
  pool.pushTx(q0, a0);
  uint32_t a1 = pool.allocate(1, OpKind::kSend, 20, 1, true);
  pool.pushTx(q1, a1);
  pool.complete(q1, a1, 1, 0);  // connection 1 is not held back by connection 0
  EXPECT_EQ(drainReady(pool), (std::vector<uint64_t>{20}));
  pool.complete(q0, a0, 1, 0);
  EXPECT_EQ(drainReady(pool), (std::vector<uint64_t>{10}));
}

TEST(OfiCompletionPool, DoneAtPostSlotIsReportedBehindEarlierPosts) {
  // A signaled inject: libfabric reports nothing, the slot is done when posted.
  Pool pool;
  pool.init(4);
  ConnQueues q = queues(4);
  uint32_t a = pool.allocate(0, OpKind::kSend, 1, 8, true);
  pool.pushTx(q, a);
  uint32_t b = pool.allocate(0, OpKind::kSend, 2, 8, true);
  pool[b].state = SlotState::kDone;
  pool.pushTx(q, b);
  pool.drainTx(q);
  EXPECT_TRUE(drainReady(pool).empty());
  pool.complete(q, a, 8, 0);
  EXPECT_EQ(drainReady(pool), (std::vector<uint64_t>{1, 2}));
}

TEST(OfiCompletionPool, SlotsAreExhaustedAndRecycled) {
  Pool pool;
  pool.init(3);
  std::vector<uint32_t> taken;
  for (int i = 0; i < 3; ++i)
    taken.push_back(pool.allocate(0, OpKind::kRecv, static_cast<uint64_t>(i), 1, true));
  EXPECT_EQ(pool.freeCount(), 0u);
  EXPECT_NE(taken[0], taken[1]);
  EXPECT_NE(taken[1], taken[2]);
  pool.release(taken[1]);
  EXPECT_EQ(pool.freeCount(), 1u);
  EXPECT_EQ(pool.allocate(0, OpKind::kRecv, 9, 1, true), taken[1]);
  EXPECT_EQ(pool[taken[1]].state, SlotState::kPosted);
}

TEST(OfiCompletionPool, IndexOfAcceptsOnlyOwnSlots) {
  Pool pool;
  pool.init(4);
  uint32_t idx = pool.allocate(0, OpKind::kSend, 0, 0, true);
  EXPECT_EQ(pool.indexOf(&pool[idx]), idx);
  EXPECT_EQ(pool.indexOf(&pool[idx].fi), idx);  // libfabric hands back the context pointer
  FakeContext foreign{};
  EXPECT_EQ(pool.indexOf(&foreign), UINT32_MAX);
  EXPECT_EQ(pool.indexOf(nullptr), UINT32_MAX);
}

TEST(OfiCompletionPool, RingWrapsAroundTheTxDepth) {
  Pool pool;
  pool.init(4);
  ConnQueues q = queues(2);
  std::vector<uint64_t> seen;
  for (uint64_t round = 0; round < 5; ++round) {
    uint32_t a = pool.allocate(0, OpKind::kSend, 2 * round, 1, true);
    pool.pushTx(q, a);
    uint32_t b = pool.allocate(0, OpKind::kSend, 2 * round + 1, 1, true);
    pool.pushTx(q, b);
    pool.complete(q, b, 1, 0);
    pool.complete(q, a, 1, 0);
    for (uint64_t u : drainReady(pool))
      seen.push_back(u);
  }
  ASSERT_EQ(seen.size(), 10u);
  for (uint64_t i = 0; i < seen.size(); ++i)
    EXPECT_EQ(seen[i], i);
}

}  // namespace
}  // namespace rdmabench::transport::ofi
