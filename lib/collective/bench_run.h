#pragma once
// Internal to collective/bench*.cc: the state one rank's `barrier | allreduce | ring` run shares
// between its phases (the connected Communicator, the stage named in errors, the header facts),
// and the untimed helpers the timed loops use (agreeing iteration counts, the slowest rank per
// iteration, descheduling over the ranks). See bench.h for the measurement method.
// Thread-safety: one thread per rank.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collective/bench.h"
#include "collective/comm.h"
#include "collective/model.h"
#include "collective/sharp/sharp.h"
#include "common/desched.h"
#include "stats/summary.h"

namespace rdmabench::collective::detail {

// Per-rank sample vectors are max-reduced across ranks in chunks of this many int64 values.
inline constexpr uint64_t kSlowestChunk = 8192;
// Iteration times a rank buffers before reducing them (SlowestPerIteration): 128 KiB.
inline constexpr uint64_t kSlowestBuffer = 2 * kSlowestChunk;

// One rank's run after wire-up.
struct BenchRun {
  const CollectiveParams& p;
  const launch::RankInfo& info;
  Communicator& c;
  report::Reporter* reporter;       // rank 0 only (null elsewhere)
  std::string& stage;               // the phase errors name ("size 64, measuring")
  nlohmann::json extra;             // RunInfo::extra facts (wire-up, SHARP, the cost model)
  PlacementFacts placement;         // this rank's placement facts
  sharp::Session* sharp = nullptr;  // SHARP's session when --algo sharp
  CollectiveOutcome out;

  int me() const { return info.rank; }
  int n() const { return info.worldSize; }
  bool root() const { return info.rank == 0 && reporter != nullptr; }
  // Names the phase in errors; `warmup` >= 0 also says warmup (1) or measuring (0).
  void enter(std::string s, int warmup);
  // Rank 0: the report's header (collective/run_info.h).
  void begin();
};

// Measured iterations of one size (OSU's defaults unless -n; engine/iterations.h).
uint64_t itersFor(const CollectiveParams& p, uint64_t bytes);
// Warmup iterations of one size (OSU's defaults unless --warmup).
uint64_t warmupFor(const CollectiveParams& p, uint64_t bytes);
// warmupFor, with -D at least 10, so the calibration has something to time (barrier, allreduce).
uint64_t calibratedWarmupFor(const CollectiveParams& p, uint64_t bytes);
// Iterations of one size: the fixed count, or (with -D / --max-time) what fits the time budget
// given `perIterNs`, the slowest rank's mean warmup iteration (agreed, so every rank runs the
// same count). IMB's -time: large sizes run fewer repetitions instead of minutes.
uint64_t budgetedIterations(const CollectiveParams& p, uint64_t fixed, int64_t perIterNs);

// Max over all ranks of `v` (every rank gets it): an untimed tree allreduce of one int64 in the
// data area (clobbers its first 16 bytes).
int64_t agreeMax(Communicator& c, int64_t v);

// Distribution over iterations of the slowest rank's time, in memory bounded by the run's
// length: each rank buffers at most kSlowestBuffer iteration times (ns); a full buffer is
// max-reduced across ranks through the data plane in chunks of kSlowestChunk (untimed, between
// two iterations, at the same iteration on every rank: the count is agreed), and rank 0 folds the
// maxima into a stats::SampleSet, exact up to its 1,000,000 samples and a bounded histogram
// beyond (as lat). A run of at most kSlowestBuffer iterations reduces once, after its loop, as
// before. Only rank 0's summary is meaningful. Uses (clobbers) the data area.
class SlowestPerIteration {
 public:
  SlowestPerIteration(Communicator& c, uint64_t iterations);
  // Records one iteration's time (ns). True when the buffer was reduced just now: the data area
  // was used, so an input kept there must be written again.
  bool add(int64_t ns);
  // Reduces what is left; the summary of every iteration's maximum over the ranks (rank 0).
  stats::Summary finish();

 private:
  void reduce();

  Communicator& c_;
  std::vector<int64_t> buffer_;
  stats::SampleSet set_;
};

// The descheduling of one size over every rank (untimed tree allreduces of 4 doubles, max, and
// of 2, sum; every rank calls it): null when no rank's loop lost the CPU, else the largest
// counts (DeschedDelta::toJson's members). A rank with `yieldCpuShare` > 0 (RankParams) yields
// on shared CPUs: its own switches and run delay do not flag it; the ranks that yield together
// are flagged by sharedCpusLost (their summed run time against their summed share of the wall
// time), and the JSON then has "cpu_shortfall_us" (that shortfall, us).
nlohmann::json deschedAcrossRanks(Communicator& c, const DeschedDelta& d, double yieldCpuShare);

// A yielding rank's CPU time in the shared-CPU rule: its run time plus its part of the irq and
// softirq time of its CPUs (DeschedDelta::irqUs / local ranks = irqUs x share / CPUs): on an idle
// host 4 ranks on 2 CPUs moving loopback TCP data lost ~6% of their share to softirq work for
// their own traffic and every pairs round was flagged.
double ranksCpuUs(const DeschedDelta& d, double yieldCpuShare);

// The shared-CPU part of that rule alone, for loops whose rows are per link or per pair (ring,
// pairs; every rank calls it, one untimed tree allreduce of 2 doubles, sum): the CPU time in us
// the yielding ranks fell short of their summed share of their hosts' CPUs over `d`'s wall
// time when sharedCpusLost says so, else 0. 0 when no rank yields (`yieldCpuShare` 0 on all).
double sharedCpuShortfallUs(Communicator& c, const DeschedDelta& d, double yieldCpuShare);

// The "descheduled" member of a rank's own loop (ring link, pair, congestion victim): a
// yielding rank (`yieldCpuShare` > 0) is judged by `shortfallUs` (> 0: flagged, the JSON then
// has "cpu_shortfall_us"), a busy-polling one by DeschedDelta::lostCpu(). Null when not flagged.
nlohmann::json deschedOfRank(const DeschedDelta& d, double yieldCpuShare, double shortfallUs);

// The report row of one size from the across-ranks figures (busbw as nccl-tests: x 2(n-1)/n).
report::CollectiveRow rowAcrossRanks(int n, const AcrossRanks& a, uint64_t bytes,
                                     const stats::Summary& sm);

// The timed loops, one per test (bench_barrier.cc, bench_allreduce.cc, bench_ring.cc).
void runBarrier(BenchRun& r);
void runAllreduce(BenchRun& r);
void runRing(BenchRun& r);

// ring: one direction's concurrent ping-pong (bench_ring.cc): pings `target` while answering the
// pings of `source` (may be the same rank), `warmup` + `iters` each way, on the measurement
// core's ping-pong loop; the summary of the measured one-way latencies (round trip / 2). Uses
// the data area's first 6 x `bytes`.
stats::Summary ringPhase(Communicator& c, int target, int source, uint64_t bytes, uint64_t warmup,
                         uint64_t iters);

// allreduce --algo auto: the cost model, fitted on ranks 0 and 1 and shared through the store.
CostModel fitModel(Communicator& c, const CollectiveParams& p);

}  // namespace rdmabench::collective::detail
