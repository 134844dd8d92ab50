// Yield mode of engine::Progress (transport::ProgressMode::kYield): one sched_yield() per empty
// poll, none per poll that completes something, none in the other modes; the deadline still
// fires and names the peer; after a long stall the 100 us back-off replaces the yields. Counts
// the process's sched_yield() calls: the definition below interposes libc's for the whole
// integration binary and forwards every call, counting only while a test asks (as
// socket_event_test.cc does for recv()). The device is the unit tests' fake (a fake clock that
// advances per poll), so nothing depends on the machine's load.
#include <dlfcn.h>
#include <sched.h>

#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "../unit/fake_device.h"
#include "common/error.h"
#include "engine/progress.h"

namespace {
std::atomic<bool> gCounting{false};
std::atomic<int> gYields{0};

using YieldFn = int (*)();
YieldFn realYield() {
  static const YieldFn real = reinterpret_cast<YieldFn>(dlsym(RTLD_NEXT, "sched_yield"));
  return real;
}
// Resolved at start-up (dlsym may allocate; this binary counts allocations elsewhere).
const bool kResolved = realYield() != nullptr;
}  // namespace

extern "C" int sched_yield() noexcept {
  if (gCounting.load(std::memory_order_relaxed)) gYields.fetch_add(1);
  return realYield()();
}

namespace rdmabench::engine {
namespace {

using testing::fakeClockNs;
using testing::FakeDevice;
using testing::fakeNowNs;
using transport::ProgressMode;

constexpr int64_t kMs = 1'000'000;

// Counts the sched_yield() calls of `body`.
template <typename Body>
int yieldsOf(Body&& body) {
  gYields = 0;
  gCounting = true;
  body();
  gCounting = false;
  return gYields.load();
}

TEST(ProgressYield, OneYieldPerEmptyPollOnly) {
  ASSERT_TRUE(kResolved) << "dlsym(RTLD_NEXT, sched_yield) failed";
  for (ProgressMode mode : {ProgressMode::kBusyPoll, ProgressMode::kYield, ProgressMode::kEvent}) {
    fakeClockNs() = 1'000'000'000;
    FakeDevice dev(1'000);  // 1 us per poll
    Progress p(dev, 5000, nullptr, "peer", mode);
    p.setClock(&fakeNowNs);
    EXPECT_EQ(p.mode(), mode);
    size_t completions = 0;
    const int yields = yieldsOf([&] {
      for (int i = 0; i < 50; ++i) {
        dev.schedule(10, transport::Completion{}, true);  // due at the 10th poll from now
        size_t got = 0;
        while (got == 0)
          got = p.pollOnce([](const transport::Completion&) {});
        completions += got;
      }
    });
    EXPECT_EQ(completions, 50u);
    // 10 polls per completion: 9 empty, then the one that delivers it.
    EXPECT_EQ(dev.polls(), 500u) << transport::toString(mode);
    EXPECT_EQ(yields, mode == ProgressMode::kYield ? 450 : 0) << transport::toString(mode);
  }
}

TEST(ProgressYield, TimesOutNamingThePeer) {
  ASSERT_TRUE(kResolved) << "dlsym(RTLD_NEXT, sched_yield) failed";
  fakeClockNs() = 1'000'000'000;
  FakeDevice dev(10'000);  // 10 us per poll: 300 ms are 30000 polls
  Progress p(dev, 300, nullptr, "peer 10.0.0.2", ProgressMode::kYield);
  p.setClock(&fakeNowNs);
  p.setStage("size 8");
  std::string message;
  const int yields = yieldsOf([&] {
    try {
      for (;;)
        p.pollOnce([](const transport::Completion&) {});
    } catch (const TimeoutError& e) {
      message = e.what();
    }
  });
  EXPECT_NE(message.find("no progress for 0.3 s from peer peer 10.0.0.2 during size 8"),
            std::string::npos)
      << message;
  // Every poll was empty and yielded; the deadline was checked every 64 of them.
  EXPECT_EQ(static_cast<uint64_t>(yields), dev.polls());
  EXPECT_GE(dev.polls(), 30'000u);
  EXPECT_LE(dev.polls(), 30'000u + 2 * 64);
}

TEST(ProgressYield, LongStallBacksOffInsteadOfYielding) {
  ASSERT_TRUE(kResolved) << "dlsym(RTLD_NEXT, sched_yield) failed";
  fakeClockNs() = 1'000'000'000;
  FakeDevice dev(10 * kMs);  // 10 ms per poll: the 1 s back-off threshold after ~100 polls
  Progress p(dev, 3000, nullptr, "peer", ProgressMode::kYield);
  p.setClock(&fakeNowNs);
  const int yields = yieldsOf([&] {
    EXPECT_THROW(
        {
          for (;;)
            p.pollOnce([](const transport::Completion&) {});
        },
        TimeoutError);
  });
  // ~300 polls until the 3 s timeout. The stall is marked at most 64 polls late and the 1 s
  // threshold noticed at most 64 polls after it passed: the first 100-228 polls yield, the rest
  // sleep 100 us each instead.
  EXPECT_GE(dev.polls(), 300u);
  EXPECT_GE(yields, 100);
  EXPECT_LE(yields, 100 + 2 * 64);
  EXPECT_LT(static_cast<uint64_t>(yields), dev.polls());
}

}  // namespace
}  // namespace rdmabench::engine
