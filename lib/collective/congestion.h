#pragma once
// `rdmabench congestion`: the congestion impact of GPCNeT (Chunduri et al., SC19) without MPI
// (docs/congestion.md). The ranks are split into victims and aggressors (congestion_plan.h).
// Phase 1, isolated: the victims run their tests while the aggressors stay silent. Phase 2,
// congested: the aggressors start streaming (incast or all-to-all), the victims start the same
// tests once every aggressor has had a window delivered, and the aggressors stop when the first
// victim of the ring (the "leader") tells them, after every victim has finished.
// Victim tests, both on the random ring (every victim with its left and right neighbour at once,
// GPCNeT's "RR Two-sided"):
//  - latency: per iteration one `latBytes` message to and from each neighbour; the sample
//    is the iteration's time (microseconds); `iterations` (0 = 1000) after `warmup` (-1 = 100).
//  - bandwidth: per iteration `window` messages of `bwBytes` to and from each
//    neighbour; sample = iteration time, MB/s = 2 x window x bytes / time (10^6 B/s, bytes this
//    rank sent); `bwIters` iterations after min(warmup, 2).
// Aggressor streams: windows of `window` x `aggBytes`, each acknowledged by the target
// after it reposted its receives (so nothing is ever sent without a posted receive), the last
// window flagged so that both ends finish with nothing posted.
// p50 / p99 pool every victim's iterations (each victim sends its quantile grid through the
// store); impact factor = congested / isolated time per percentile.
// Thread-safety: one thread per rank.

#include <string>
#include <vector>

#include "collective/bench.h"
#include "collective/congestion_plan.h"
#include "launch/launch.h"
#include "rendezvous/store.h"
#include "report/report.h"

namespace rdmabench::collective {

// One victim metric, times in microseconds per iteration.
struct CongestionMetric {
  std::string name;                // GPCNeT's naming: "RR Two-sided Lat (8 B)"
  bool bandwidth = false;          // report MB/s = bytesPerIteration / time
  uint64_t bytes = 0;              // message size
  uint64_t window = 1;             // messages per neighbour and direction per iteration
  uint64_t bytesPerIteration = 0;  // sent by one victim per iteration
  uint64_t iterations = 0, warmup = 0;
  double isoP50Us = 0, isoP99Us = 0, conP50Us = 0, conP99Us = 0;
};

struct CongestionResult {
  int ranks = 0;                   // 0 on ranks other than 0
  std::vector<std::string> nodes;  // per rank: "host" or "host (address)"
  CongestionPlan plan;
  CongestionPattern pattern = CongestionPattern::kIncast;
  uint64_t seed = 0;
  double victimFraction = 0;
  uint64_t aggBytes = 0, aggWindow = 0;
  uint64_t aggStreams = 0;  // streams in all
  double aggMBs = 0;        // aggregate aggressor rate over the congested phase, MB/s
  double isolatedSeconds = 0, congestedSeconds = 0;  // victims' phases, leader's clock
  double phaseLimitSec = 0;
  std::vector<CongestionMetric> metrics;
  report::RunInfo info;
  // A run that failed (runCongestion's `partial`): the phases measured before the failure (1:
  // the congested figures are NaN) and, once the caller sets it, why; writeCongestion then
  // writes the document with the error (JSON "error", CSV error column, table `# error:`).
  int phasesMeasured = 2;
  std::string error;
  bool failed = false;
};

// Runs as rank `info.rank`; the result is filled on rank 0 only. Errors: UsageError for a split
// without 2 victims and 2 aggressors; every wait is bounded by timeoutMs (aggressors: by
// phaseSec for the victims' phases) and names the peer; a dead rank makes the others throw
// naming it. `partial` (rank 0; may be null): when the run fails after its isolated phase, that
// phase's figures (failed = true, phasesMeasured = 1) are left there before the exception
// propagates, so the caller can write them with the error; untouched otherwise.
CongestionResult runCongestion(const CongestionParams& params, const launch::RankInfo& info,
                               rendezvous::Store& store, CongestionResult* partial = nullptr);

}  // namespace rdmabench::collective
