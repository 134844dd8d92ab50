#pragma once
// Descheduling of a timed loop (docs/metrics.md, "Descheduling"): a busy-polling loop that loses
// its CPU to another process (a CPU hog, another rank, the loopback server, a hypervisor) times
// the other process's work. Read before and after each size, outside the hot path:
//  - involuntary context switches of this thread (getrusage RUSAGE_THREAD, ru_nivcsw);
//  - its run delay: time runnable but waiting for a CPU (/proc/thread-self/schedstat, 2nd field,
//    ns; absent without CONFIG_SCHED_INFO);
//  - steal time of the CPUs it may run on (/proc/stat "cpuN" lines, 8th value, USER_HZ ticks);
//  - its run time on a CPU (CLOCK_THREAD_CPUTIME_ID, ns: exact when read, where schedstat's
//    1st field lags a running thread by up to a scheduler tick), and the irq + softirq
//    time of the CPUs it may run on (/proc/stat, 6th and 7th values), for yield mode's rule
//    (sharedCpusLost below).
// Thread-safety: a DeschedProbe belongs to the thread that created it (RUSAGE_THREAD).

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace rdmabench {

// What one timed loop lost. Units: microseconds.
struct DeschedDelta {
  int64_t involuntarySwitches = 0;
  double stealUs = 0;      // steal of the allowed CPUs, summed (10 ms granularity)
  double runDelayUs = -1;  // -1 = not available on this kernel
  double cpuUs = -1;       // run time on a CPU (<= wallUs); -1 = not available
  double wallUs = 0;       // the loop's wall time
  // irq + softirq time of the allowed CPUs, summed (/proc/stat, 10 ms granularity): the
  // kernel's work for every task on those CPUs (loopback TCP's receive path runs there), not in
  // any task's cpuUs when the kernel accounts irq time apart (CONFIG_IRQ_TIME_ACCOUNTING).
  double irqUs = 0;
  int allowedCpus = 1;  // CPUs this thread may run on, when the loop ended
  // The flag rule: the thread waited for a CPU (run delay + steal) for at least 1% of the loop
  // and 20 us, with an involuntary switch or steal to show for it; without schedstat, any
  // involuntary switch.
  bool lostCpu() const;
  // {"involuntary_switches": N, "steal_us": X, "run_delay_us": Y} (run_delay_us omitted when
  // not available).
  nlohmann::json toJson() const;
  // "N involuntary context switches, X us waiting for a CPU" for messages.
  std::string describe() const;
  // Adds the loop `d` (the chunks of one size): counts, steal, wall time and run delay (summed
  // when both have one, else the larger: -1 stays only when neither does); cpuUs is left as is.
  DeschedDelta& operator+=(const DeschedDelta& d);
};

// Starts measuring at construction; stop() returns the delta since (callable more than once).
class DeschedProbe {
 public:
  DeschedProbe();
  DeschedDelta stop() const;

 private:
  int64_t switches_ = 0, runDelayNs_ = -1, cpuNs_ = -1, stealTicks_ = 0, irqTicks_ = 0;
  int64_t startNs_ = 0;
};

// The rule for ranks that yield on shared CPUs (transport::ProgressMode::kYield with more ranks
// on a host than CPUs): every empty poll hands the CPU to another rank, so each rank's
// involuntary switches (sched_yield counts as one) and run delay are the sharing it asked for,
// and DeschedDelta::lostCpu() would flag every loop. What tells another process's work is
// whether the ranks together ran for the CPU time they share: `cpuUs` = the loops' run time
// summed over those ranks, `entitledUs` = their wall times x each rank's share of its host's
// CPUs (CPUs / local ranks), summed. True when the shortfall is at least 1% of `entitledUs` and
// 20 us (lostCpu's thresholds). False when `cpuUs` < 0 (no schedstat) or `entitledUs` <= 0.
bool sharedCpusLost(double cpuUs, double entitledUs);

// Number of CPUs this thread may run on (sched_getaffinity; at least 1).
int allowedCpuCount();

// The advice line for tables and stderr when a size was flagged.
std::string deschedAdvice();

}  // namespace rdmabench
