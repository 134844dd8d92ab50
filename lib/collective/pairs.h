#pragma once
// `rdmabench pairs`: an all-pairs fabric map (docs/fabric-map.md). Every ordered pair of ranks
// (src -> dst) gets a latency and a bandwidth figure, measured in the rounds of a round-robin
// tournament (pairs_schedule.h, circle method), so each rank is in at most one pair at a time
// and no measurement shares a node with another. Per round and pair (a < b): a initiates
// (latency, then bandwidth), then b does; then every rank meets in a barrier before the next
// round.
// Both measurements are the point-to-point engines' own on the link to the peer
// (pairs_loops.h), so pairs and `lat` / `bw` give the same figures between the same two ranks:
//  - Latency: engine::runPingPong, ping-pong of `latBytes`, `iterations` (0 = 1000) after
//    `warmup` (-1 = 100), one-way = RTT/2 per iteration on the initiator's clock, microseconds.
//  - Bandwidth: engine::runBandwidth, by default in window mode (osu_bw): per iteration `window`
//    messages of `bwBytes`, then the target's acknowledgement once all of them arrived, so the
//    clock stops on delivery; `bwIters` measured after `warmup` (-1 = 2) iterations. MB/s =
//    10^6 B/s on the sender's clock. A size above the transport's largest message is refused
//    (UsageError).
//  - lat / bw's engine options (PairsParams: --op send|write|read|tagged, --mode window|stream,
//    --cq-mod, -l, --tx-depth) reach both engines through the same test descriptions and mapping
//    as lat / bw (pairs_spec.h, engine/spec_params.h); stream mode sends --bw-iters x --window
//    messages (pairs_spec.h pairBandwidthCounts), read's latency is the round trip.
// Results travel through the store under pairs/<src>/<dst> (a few dozen bytes each); rank 0
// builds the matrices and classifies outliers (pairs_outliers.h; bandwidth on cost = 1/(MB/s)).
// Thread-safety: one thread per rank.

#include <string>
#include <vector>

#include "collective/bench.h"
#include "collective/pairs_outliers.h"
#include "collective/pairs_verdict.h"
#include "launch/launch.h"
#include "rendezvous/store.h"
#include "report/report.h"

namespace rdmabench::collective {

// n x n matrices indexed [src][dst]; the diagonal is NaN.
struct PairsResult {
  int ranks = 0;
  std::vector<std::string> hosts, addresses;  // per rank: host name, data-plane address
  std::vector<std::vector<double>> latMedianUs, latMinUs, latAvgUs, latP99Us;  // microseconds
  std::vector<std::vector<double>> bwMBs;                                      // MB/s
  MatrixOutliers latOutliers, bwOutliers;  // bwOutliers costs are 1 / (MB/s)
  uint64_t latBytes = 0, latIterations = 0, latWarmup = 0;
  // Window mode: `bwIterations` windows of `window` messages after `bwWarmup`; stream mode
  // (`stream`): `bwIterations` messages after `bwWarmup`, `window` posts in flight.
  uint64_t bwBytes = 0, bwIterations = 0, bwWarmup = 0, window = 0;
  bool stream = false;
  int rounds = 0;
  double seconds = 0;  // the measuring rounds, wall clock of rank 0
  report::RunInfo info;
  double outlierK = 0;
  // Cuts, bounds and which findings are verdicts (judgePairs with PairsParams::bounds).
  PairsVerdict verdict;
  // A run that failed (runPairs' `partial`): the rounds whose figures the matrices hold (NaN for
  // every pair of a later round) and, once the caller sets it, why it failed; writePairs then
  // writes the document with the error (JSON "error", CSV error column, table `# error:` line).
  int roundsMeasured = 0;
  std::string error;
  bool failed = false;
};

// Runs as rank `info.rank`; the result is filled on rank 0 only (ranks = 0 elsewhere).
// Errors: every wait is bounded by timeoutMs and names the round and the peer; UsageError for
// sizes of 0; a dead rank makes the others throw naming it. `partial` (rank 0; may be null):
// when the run fails after its first round, the rounds measured before the failure (read back
// from the store, failed = true, roundsMeasured > 0) are left there before the exception
// propagates, so the caller can write them with the error; untouched otherwise.
PairsResult runPairs(const PairsParams& params, const launch::RankInfo& info,
                     rendezvous::Store& store, PairsResult* partial = nullptr);

}  // namespace rdmabench::collective
