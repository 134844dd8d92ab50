#pragma once
// What one rank of an N-rank command runs: one parameter struct per command, each holding only
// its own fields on top of RankParams, which every N-rank command shares. Built by
// cli::parseCollectiveCommand (cli/coll_options.h); sizes in bytes, times in seconds unless the
// name says ms. Plain values: copy freely, no thread-safety concerns.

#include <cstdint>
#include <string>
#include <vector>

#include "collective/congestion_plan.h"
#include "collective/pairs_verdict.h"
#include "collective/reduce.h"
#include "common/placement.h"
#include "engine/spec.h"
#include "report/report.h"
#include "transport/transport.h"

namespace rdmabench::collective {

// Shared by barrier, allreduce, ring, pairs and congestion.
struct RankParams {
  report::Test test = report::Test::kAllreduce;  // barrier, allreduce, ring, pairs, congestion
  // -n / --warmup: measured and warmup iterations. 0 / -1 = the command's defaults: OSU's per
  // size for barrier / allreduce / ring (engine/iterations.h); 1000 / 100 latency iterations
  // for pairs and congestion.
  uint64_t iterations = 0;
  int64_t warmup = -1;
  std::string transport = "socket";
  std::string transportNote;  // why the default transport was chosen ("" = -t given)
  // Why yield mode was chosen automatically ("" = -e given, or no CPU shared).
  std::string progressNote;
  // Yield mode on shared CPUs (collective::ProgressChoice::cpuShare): this rank's share of a CPU,
  // CPUs / local ranks, for the descheduling rule of barrier and allreduce (bench_run.h
  // deschedAcrossRanks); 0 = the rank does not yield on a shared CPU.
  double yieldCpuShare = 0;
  transport::DeviceOptions device;  // .progress: -e, or collective::chooseProgress's choice
  // --cpu LIST / --numa auto|N|off for every rank (collective/rank_placement.h: one CPU of the
  // list per local rank).
  PlacementRequest placement;
  int64_t timeoutMs = 10'000;
  std::string commandLine;
};

// barrier, allreduce, ring (collective/bench.h).
struct CollectiveParams : RankParams {
  CollectiveParams() { test = report::Test::kAllreduce; }
  std::string algo = "tree";  // allreduce: tree | ring | rd | rabenseifner | auto | sharp;
                              // barrier: dissemination | sharp. The allreduce command's
                              // default is auto (cli/coll_options.cc); tree is this struct's.
  DType dtype = DType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  std::vector<uint64_t> sizes;  // allreduce message sizes, bytes (rounded down to elements)
  // > 0 (-D): iterations per size calibrated from the warmup (at least 10) to last this long,
  // seconds (1..100M iterations), as the point-to-point engines' --duration.
  double durationSec = 0;
  // > 0 (--max-time, IMB's -time): with the default iteration counts, a size whose warmup
  // says it would take longer runs fewer iterations (at least 1), seconds. 0 = off.
  double maxTimeSec = 10;
  bool check = false;         // allreduce -c: verify every result (#wrong, as nccl-tests)
  uint64_t ringBytes = 1024;  // ring: message size
  // ring: threshold = baseline + k * max(MAD, link MAD, baseline/10)
  double outlierK = 5;
};

// pairs (collective/pairs.h): latency ping-pong size (bytes), bandwidth message size (bytes),
// messages in flight per bandwidth iteration, measured bandwidth iterations per ordered pair;
// latency iterations are `iterations` (0 = 1000), warmup `warmup` (-1 = 100 latency, 2
// bandwidth iterations). The engine's options of lat / bw (--op, --mode, --cq-mod, -l,
// --tx-depth) mean what they mean there (engine/spec.h TestSpec); collective/pairs_spec.h turns
// them into the test descriptions TestSpec::validate checks.
struct PairsParams : RankParams {
  PairsParams() { test = report::Test::kPairs; }
  uint64_t latBytes = 8;
  uint64_t bwBytes = 1 << 20;
  uint32_t window = 16;
  uint64_t bwIters = 10;
  engine::Op op = engine::Op::kSend;              // --op: both measurements
  engine::BwMode mode = engine::BwMode::kWindow;  // --mode: the bandwidth method
  // --cq-mod: a completion every N bandwidth posts; window mode 1, stream mode without --cq-mod
  // perftest's (cli/bw_method.h applyStreamCqModeration).
  uint32_t cqModeration = 1;
  uint32_t postList = 1;  // -l / --post-list: bandwidth posts per call
  // --tx-depth: stream mode's posts in flight (0 = 128, as bw); also the device's send queue
  // depth (device.txDepth), as for bw.
  uint32_t txDepth = 0;
  double outlierK = 5;  // pairs_outliers.h: median + k x max(MAD, median/10)
  PairsBounds bounds;   // --max-lat / --min-bw (pairs_verdict.h); 0 = none
};

// congestion (collective/congestion.h): victims = ceil(fraction x ranks); aggressor pattern;
// seed of the split and the random ring; victims' latency test of `latBytes`, bandwidth test of
// `bwBytes` x `window` per iteration, `bwIters` iterations; aggressor messages of `aggBytes`,
// `window` in flight per stream; longest measurement phase, seconds.
struct CongestionParams : RankParams {
  CongestionParams() { test = report::Test::kCongestion; }
  double victims = 0.2;
  CongestionPattern pattern = CongestionPattern::kIncast;
  uint64_t seed = 1;
  uint64_t latBytes = 8;
  uint64_t bwBytes = 128 << 10;
  uint64_t bwIters = 100;
  uint64_t aggBytes = 128 << 10;
  uint32_t window = 8;
  double phaseSec = 300;
};

}  // namespace rdmabench::collective
