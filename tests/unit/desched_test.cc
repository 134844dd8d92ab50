// Descheduling of a timed loop (common/desched.h), issue 22 item 3: the flag rule, the JSON
// shape, and a thread sharing its only CPU with a busy sibling is seen to lose it.
#include "common/desched.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <thread>

#include "collective/bench_run.h"
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

// Yield mode on shared CPUs (sharedCpusLost): the ranks' own switches and run delay are the
// sharing they asked for; the ranks together running for less than their share of the CPUs is
// what flags the loop.
TEST(Desched, SharedCpusRule) {
  // 4 ranks on 2 CPUs, 100 ms each: entitled to 4 x 100 ms x 2/4 = 200 ms of CPU time.
  const double entitled = 4 * 100'000.0 * 0.5;
  EXPECT_FALSE(sharedCpusLost(200'000, entitled));  // they had the CPUs to themselves
  EXPECT_FALSE(sharedCpusLost(199'000, entitled));  // 0.5% short: kernel threads, noise
  EXPECT_TRUE(sharedCpusLost(150'000, entitled));   // a hog took a quarter
  EXPECT_FALSE(sharedCpusLost(1'990, 2'000));       // 10 us short: under 20 us
  EXPECT_TRUE(sharedCpusLost(1'900, 2'000));        // 100 us, 5%
  EXPECT_FALSE(sharedCpusLost(-1, entitled));       // no schedstat: no verdict
  EXPECT_FALSE(sharedCpusLost(0, 0));               // no yielding rank
  // The per-rank rule would flag each such rank: its run delay is half the loop.
  DeschedDelta rank;
  rank.wallUs = 100'000;
  rank.involuntarySwitches = 20'000;  // one per sched_yield() that handed the CPU over
  rank.runDelayUs = 50'000;
  rank.cpuUs = 50'000;
  EXPECT_TRUE(rank.lostCpu());
}

// The rows of ring, pairs and congestion (collective::detail::deschedOfRank): a yielding rank is
// judged by the shared-CPU shortfall only, a busy-polling one by its own loop (it used to flag
// every yielding rank: a row per link, every one "desched", on any oversubscribed host).
TEST(Desched, RankRowsOfYieldingRanksFollowTheSharedRule) {
  DeschedDelta rank;
  rank.wallUs = 100'000;
  rank.involuntarySwitches = 20'000;
  rank.runDelayUs = 50'000;
  rank.cpuUs = 50'000;
  ASSERT_TRUE(rank.lostCpu());
  EXPECT_TRUE(collective::detail::deschedOfRank(rank, 0.5, 0).is_null());
  const nlohmann::json j = collective::detail::deschedOfRank(rank, 0.5, 2'500);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["cpu_shortfall_us"], 2'500);
  EXPECT_EQ(j["involuntary_switches"], 20'000);
  // Busy polling: its own loop, with or without a shortfall figure (none is computed for it).
  EXPECT_TRUE(collective::detail::deschedOfRank(rank, 0, 0).is_object());
  EXPECT_FALSE(collective::detail::deschedOfRank(rank, 0, 0).contains("cpu_shortfall_us"));
  DeschedDelta idle;
  idle.wallUs = 100'000;
  idle.runDelayUs = 0;
  idle.cpuUs = 100'000;
  EXPECT_TRUE(collective::detail::deschedOfRank(idle, 0, 0).is_null());
}

// The kernel's irq and softirq work on the shared CPUs (loopback TCP's receive path) is in no
// task's run time: each yielding rank is credited its part (irqUs / local ranks = irqUs x share /
// CPUs), or 4 ranks moving data on 2 CPUs were flagged every pairs round on an idle host.
TEST(Desched, YieldingRanksAreCreditedTheirPartOfIrqTime) {
  DeschedDelta rank;
  rank.wallUs = 200'000;
  rank.cpuUs = 80'000;
  rank.irqUs = 100'000;  // both CPUs, the whole host's
  rank.allowedCpus = 2;
  EXPECT_DOUBLE_EQ(collective::detail::ranksCpuUs(rank, 0.5), 80'000 + 25'000);
  // 4 such ranks: 420 ms of the 400 ms they share, not 320 ms (a 20% "shortfall").
  EXPECT_FALSE(sharedCpusLost(4 * collective::detail::ranksCpuUs(rank, 0.5), 4 * 200'000 * 0.5));
  EXPECT_TRUE(sharedCpusLost(4 * rank.cpuUs, 4 * 200'000 * 0.5));
  rank.allowedCpus = 0;  // never divides by zero
  EXPECT_DOUBLE_EQ(collective::detail::ranksCpuUs(rank, 0.5), 80'000 + 50'000);
}

TEST(Desched, ProbeReadsRunTime) {
  const DeschedProbe probe;
  const int64_t end = nowNs() + 20'000'000;  // 20 ms of spinning
  while (nowNs() < end) {
  }
  const DeschedDelta d = probe.stop();
  if (d.runDelayUs < 0) GTEST_SKIP() << "no /proc/thread-self/schedstat (CONFIG_SCHED_INFO)";
  EXPECT_GT(d.cpuUs, 0);
  // A thread runs at most for the wall time: the CPU window nests inside the wall window and
  // CLOCK_THREAD_CPUTIME_ID is exact when read (schedstat's lagged by a tick: 23.9 ms of CPU in
  // 21.0 ms on a loaded CI host). An order, not a timing margin.
  EXPECT_LE(d.cpuUs, d.wallUs);
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
