// Descheduling of a timed loop (common/desched.h), issue 22 item 3: the flag rule, the JSON
// shape, and a thread sharing its only CPU with a busy sibling is seen to lose it.
#include "common/desched.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <thread>

#include "common/clock.h"

namespace rdmabench {
namespace {

TEST(Desched, FlagRule) {
  DeschedDelta d;
  d.wallUs = 100'000;
  EXPECT_FALSE(d.lostCpu());  // nothing lost
  d.involuntarySwitches = 3;
  d.runDelayUs = 500;  // 0.5%: noise
  EXPECT_FALSE(d.lostCpu());
  d.runDelayUs = 5'000;  // 5% of the loop waiting for a CPU
  EXPECT_TRUE(d.lostCpu());
  d.involuntarySwitches = 0;  // waited without being switched out or stolen: not this loop's
  EXPECT_FALSE(d.lostCpu());
  d.stealUs = 10'000;  // the hypervisor took it
  EXPECT_TRUE(d.lostCpu());
  DeschedDelta old;  // no schedstat: any involuntary switch
  old.involuntarySwitches = 1;
  EXPECT_TRUE(old.lostCpu());
}

TEST(Desched, JsonShape) {
  DeschedDelta d;
  d.involuntarySwitches = 4;
  d.stealUs = 0;
  d.runDelayUs = 1500;
  nlohmann::json j = d.toJson();
  EXPECT_EQ(j["involuntary_switches"], 4);
  EXPECT_EQ(j["steal_us"], 0.0);
  EXPECT_EQ(j["run_delay_us"], 1500.0);
  d.runDelayUs = -1;
  EXPECT_FALSE(d.toJson().contains("run_delay_us"));
  EXPECT_NE(d.describe().find("4 involuntary context switches"), std::string::npos);
}

// Two spinning threads pinned on one CPU: the measured one loses it (counts, not times).
TEST(Desched, SharedCpuIsFlagged) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &set))
    ++cpu;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  std::atomic<bool> stop{false};
  DeschedDelta d;
  std::thread measured([&] {
    sched_setaffinity(0, sizeof one, &one);
    std::thread hog([&] {
      sched_setaffinity(0, sizeof one, &one);
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
    const DeschedProbe probe;
    const int64_t end = nowNs() + 300'000'000;  // 0.3 s of spinning: many scheduler slices
    while (nowNs() < end) {
    }
    d = probe.stop();
    stop = true;
    hog.join();
  });
  measured.join();
  EXPECT_GT(d.involuntarySwitches, 0);
  EXPECT_TRUE(d.lostCpu()) << d.describe();
  EXPECT_GE(allowedCpuCount(), 1);
}

}  // namespace
}  // namespace rdmabench
