#pragma once
// The selfish-detour loop of `rdmabench noise` (docs/noise.md): one pinned thread reads the
// measurement clock (common/measure_clock.h) in a tight loop; a gap between two reads above a
// threshold is a detour: time the thread did not run (an interrupt, a softirq, another thread,
// the hypervisor). Method of Beckman et al., "Benchmarking the effects of operating system
// interference on extreme-scale parallel machines" (Cluster Computing 2008) and of sysjitter
// (Xilinx-CNS/cns-sysjitter): a gap of at least the threshold between two clock reads is one
// interruption, its length the gap.
// Also the fixed-work-quantum variant (LLNL FWQ): time each repetition of a fixed amount of
// register-only work; the spread of those times above their minimum is the noise.
// Thread-safety: the loops run on the calling thread; the pure functions are thread-safe.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "stats/summary.h"

namespace rdmabench::noise {

// One detour: when it began (ns after the loop's start, on the measurement clock) and how long
// the gap between the two clock reads around it was (ns).
struct Detour {
  int64_t startNs = 0;
  int64_t lengthNs = 0;
};

// What one detour loop saw.
struct DetourTrace {
  int64_t loopNs = 0;           // wall time of the loop, ns
  uint64_t iterations = 0;      // clock reads
  double medianStepNs = 0;      // median gap between two reads (calibration), ns
  int64_t thresholdNs = 0;      // gaps above this were detours
  uint64_t count = 0;           // detours, all of them (also those past the storage cap)
  int64_t stolenNs = 0;         // sum of all detour lengths, ns
  int64_t maxNs = 0;            // longest detour, ns
  std::vector<Detour> detours;  // in time order, at most the cap given to runDetourLoop
  bool interrupted = false;     // the loop stopped early on Ctrl-C / SIGTERM
};

// Median gap between consecutive measureNs() reads over `reads` reads (a few ms), ns.
double medianClockStepNs(uint64_t reads = 200'000);

// The default detour threshold: 5 x the loop's median step, at least 1 us (ns).
int64_t defaultThresholdNs(double medianStepNs);

// Runs the detour loop for `durationNs` on the calling thread. Keeps at most `maxStored`
// detours in DetourTrace::detours (count, stolen and max stay exact past it). Stops early when
// interrupted() (DetourTrace::interrupted). Never throws except std::bad_alloc.
DetourTrace runDetourLoop(int64_t durationNs, int64_t thresholdNs, double medianStepNs,
                          size_t maxStored = 2'000'000);

// Per-rank figures of a detour trace. Units as named.
struct DetourStats {
  double seconds = 0;                                   // loop wall time
  uint64_t count = 0;                                   // detours
  double perSecond = 0;                                 // detours per second
  double stolenPct = 0;                                 // sum of detour lengths / loop time x 100
  double maxUs = 0;                                     // longest detour
  double p50Us = 0, p99Us = 0, p999Us = 0, meanUs = 0;  // of detour lengths (nearest rank)
};
// Pure. Percentiles over the stored detours (stats::SampleSet's nearest-rank definition).
DetourStats summarize(const DetourTrace& t);

// Fixed work quanta (LLNL FWQ).
struct FwqTrace {
  double quantumUs = 0;     // requested work per quantum (its time on a quiet core), us
  uint64_t workUnits = 0;   // loop passes per quantum after calibration
  std::vector<int64_t> ns;  // time of each quantum, ns, in order
  bool interrupted = false;
};
// Calibrates the work loop so one quantum takes `quantumUs` (the minimum over a few tries), then
// times quanta back to back for `durationNs`. At most `maxQuanta` are stored.
FwqTrace runFwq(double quantumUs, int64_t durationNs, size_t maxQuanta = 10'000'000);

// Spread of the quantum times: min/median/p99/max/mean in us and the noise ratio
// (mean - min) / min (FWQ's reading: a quiet core is a spike at the minimum).
struct FwqStats {
  uint64_t quanta = 0;
  double minUs = 0, medianUs = 0, p99Us = 0, maxUs = 0, meanUs = 0, stdevUs = 0;
  double noiseRatio = 0;  // (mean - min) / min
  // {quanta, min_us, median_us, p99_us, max_us, mean_us, stdev_us, noise_ratio}.
  nlohmann::json toJson() const;
};
FwqStats summarizeFwq(const FwqTrace& t);

}  // namespace rdmabench::noise
