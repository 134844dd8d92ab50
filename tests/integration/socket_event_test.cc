// Socket transport in event mode: what a wake-up reads. Counts the process's recv() calls: the
// definition below interposes libc's recv() for the whole integration binary (the transport
// calls ::recv) and forwards every call to it, counting only while a test asks.
#include <dlfcn.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <vector>

#include "socket_test_util.h"
#include "transport/backends.h"
#include "transport/socket/device.h"

namespace {
std::atomic<bool> gCounting{false};
std::atomic<int> gRecvCalls{0};

using RecvFn = ssize_t (*)(int, void*, size_t, int);
RecvFn realRecv() {
  static const RecvFn real = reinterpret_cast<RecvFn>(dlsym(RTLD_NEXT, "recv"));
  return real;
}
// Resolved at start-up, not on the first recv(): dlsym may allocate, and the allocation tests
// of this binary count allocations around code that calls recv().
const bool kResolved = realRecv() != nullptr;
}  // namespace

extern "C" ssize_t recv(int fd, void* buf, size_t len, int flags) {
  if (gCounting.load(std::memory_order_relaxed)) gRecvCalls.fetch_add(1);
  return realRecv()(fd, buf, len, flags);
}

namespace rdmabench::transport {
namespace {

using testing::connectPair;
using testing::loopbackOptions;

// recv() calls made by one a->poll().
int recvCallsOfPoll(Device& a, Completion* out, size_t max, size_t& got) {
  gRecvCalls = 0;
  gCounting = true;
  got = a.poll(out, max);
  gCounting = false;
  return gRecvCalls.load();
}

// Two event-mode socket devices joined by `peers` connections; 64 bytes per peer registered on
// each side (a's zeroed, b's filled with 7).
struct EventPeers {
  explicit EventPeers(size_t peers)
      : a(open()), b(open()), bufA(64 * peers, 0), bufB(64 * peers, 7) {
    for (size_t i = 0; i < peers; ++i) {
      auto [x, y] = connectPair(*a, *b);
      ea.push_back(std::move(x));
      eb.push_back(std::move(y));
    }
    ma = a->registerMemory(bufA.data(), bufA.size());
    mb = b->registerMemory(bufB.data(), bufB.size());
  }
  static std::unique_ptr<Device> open() {
    DeviceOptions o = loopbackOptions();
    o.progress = ProgressMode::kEvent;
    return socket::openDevice(o);
  }
  std::unique_ptr<Device> a, b;
  std::vector<std::unique_ptr<Endpoint>> ea, eb;
  std::vector<uint8_t> bufA, bufB;
  std::unique_ptr<MemoryRegion> ma, mb;
};

TEST(SocketEvent, WakeUpReadsOnlyTheSocketsEpollReported) {
  // A rank with several peers (a collective's O(log n) endpoints) sleeps in epoll_wait and is
  // woken by one of them: the poll after the wake-up reads that socket only, not one EAGAIN
  // recv() per idle peer; the poll after that (no wait in between) reads every socket again.
  constexpr size_t kPeers = 3;
  ASSERT_TRUE(kResolved) << "dlsym(RTLD_NEXT, recv) failed";
  EventPeers p(kPeers);
  auto& a = p.a;
  auto& b = p.b;
  auto& ea = p.ea;
  auto& eb = p.eb;
  auto& bufA = p.bufA;
  auto& ma = p.ma;
  auto& mb = p.mb;
  for (size_t i = 0; i < kPeers; ++i)
    ASSERT_EQ(ea[i]->postRecv(*ma, 64 * i, 8, i), PostResult::kOk);
  Completion c[8];
  size_t got = 0;
  // Nothing sent yet: every endpoint tries its socket (the counter works: one call each).
  ASSERT_EQ(recvCallsOfPoll(*a, c, 8, got), static_cast<int>(kPeers));
  ASSERT_EQ(got, 0u);

  ASSERT_EQ(eb[1]->postSend(*mb, 64, 8, 100), PostResult::kOk);
  Deadline d(5000);
  size_t sent = 0;
  while (sent == 0 && !d.expired())
    sent = b->poll(c, 8);
  ASSERT_EQ(sent, 1u);

  a->waitForEvent(2000);  // endpoint 1's socket is readable: epoll reports it alone
  EXPECT_EQ(recvCallsOfPoll(*a, c, 8, got), 1);
  ASSERT_EQ(got, 1u);
  EXPECT_TRUE(c[0].ok()) << a->errorText(c[0]);
  EXPECT_EQ(c[0].context, 1u);
  EXPECT_EQ(bufA[64], 7);

  // Every socket is known to be empty now: polls without a wait read none of them ...
  for (uint32_t i = 1; i + 1 < socket::SocketDevice::kQuietPolls; ++i) {
    ASSERT_EQ(recvCallsOfPoll(*a, c, 8, got), 0) << "poll " << i;
    ASSERT_EQ(got, 0u);
  }
  // ... until kQuietPolls polls passed without an epoll_wait: then every socket is read again
  // (a loop that never waits still sees its bytes).
  EXPECT_EQ(recvCallsOfPoll(*a, c, 8, got), static_cast<int>(kPeers));
  EXPECT_EQ(got, 0u);
}

TEST(SocketEvent, StepCostsOneRecvPerMessage) {
  // A collective step in event mode: post, poll (no recv: the sockets are known empty), wait
  // in epoll_wait, poll (one recv, on the socket epoll reported). Repeated steps never issue a
  // recv() that returns EAGAIN.
  constexpr size_t kPeers = 3;
  constexpr int kSteps = 20;
  ASSERT_TRUE(kResolved) << "dlsym(RTLD_NEXT, recv) failed";
  EventPeers p(kPeers);
  auto& a = p.a;
  auto& b = p.b;
  auto& ea = p.ea;
  auto& eb = p.eb;
  auto& ma = p.ma;
  auto& mb = p.mb;
  Completion c[8];
  size_t got = 0;
  for (size_t i = 0; i < kPeers; ++i)
    ASSERT_EQ(ea[i]->postRecv(*ma, 64 * i, 8, i), PostResult::kOk);
  ASSERT_EQ(recvCallsOfPoll(*a, c, 8, got), static_cast<int>(kPeers));  // all found empty
  int recvs = 0;
  for (int step = 0; step < kSteps; ++step) {
    const size_t peer = static_cast<size_t>(step) % kPeers;
    ASSERT_EQ(eb[peer]->postSend(*mb, 64 * peer, 8, 100), PostResult::kOk);
    Deadline d(5000);
    size_t sent = 0;
    while (sent == 0 && !d.expired())
      sent = b->poll(c, 8);
    ASSERT_EQ(sent, 1u);
    recvs += recvCallsOfPoll(*a, c, 8, got);  // before the wait: nothing read
    ASSERT_EQ(got, 0u);
    a->waitForEvent(2000);
    recvs += recvCallsOfPoll(*a, c, 8, got);
    ASSERT_EQ(got, 1u) << "step " << step;
    EXPECT_EQ(c[0].context, peer);
    ASSERT_EQ(ea[peer]->postRecv(*ma, 64 * peer, 8, peer), PostResult::kOk);
  }
  EXPECT_EQ(recvs, kSteps);
}

}  // namespace
}  // namespace rdmabench::transport
