#include "collective/pairs.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collective/bench_run.h"
#include "collective/comm.h"
#include "collective/pairs_loops.h"
#include "collective/pairs_schedule.h"
#include "collective/pairs_spec.h"
#include "collective/rank_placement.h"
#include "collective/run_info.h"
#include "common/clock.h"
#include "common/desched.h"
#include "common/error.h"
#include "common/json_read.h"
#include "engine/iterations.h"
#include "engine/progress.h"
#include "engine/spec_params.h"
#include "stats/summary.h"

namespace rdmabench::collective {

using nlohmann::json;

namespace {

std::vector<int> everyoneBut(int me, int n) {
  std::vector<int> v;
  for (int r = 0; r < n; ++r)
    if (r != me) v.push_back(r);
  return v;
}

std::vector<std::vector<double>> nanMatrix(int n) {
  return std::vector<std::vector<double>>(
      static_cast<size_t>(n),
      std::vector<double>(static_cast<size_t>(n), std::numeric_limits<double>::quiet_NaN()));
}

// The counts of a pair's measurements (engine/iterations.h probeCounts).
using PairCounts = engine::ProbeCounts;
// Rank 0: the stored result of each ordered pair (src, dst) as JSON text, "" until its round ran.
using PairFigures = std::vector<std::vector<std::string>>;

PairCounts pairCounts(const PairsParams& p) {
  return engine::probeCounts(p.iterations, p.warmup, p.bwIters);
}

// Refuses sizes of 0, a world without a pair and what lat / bw refuse (pairs_spec.h).
void checkPairsParams(const PairsParams& p, int n) {
  if (p.latBytes < 1 || p.bwBytes < 1)
    throw UsageError(
        fmt::format("pairs: message sizes must be at least 1 byte (--lat-size {}, "
                    "--bw-size {})",
                    p.latBytes, p.bwBytes));
  if (n < 2)
    throw UsageError(fmt::format(
        "pairs: a world of {} rank: pairs measures every pair of ranks and needs at least 2", n));
  validatePairsSpecs(p);
}

// Sizes the transport sends in one message (the engines do not split), the operation (RDMA write
// or read where the device offers it, as lat / bw check), and a window of receives the target can
// keep posted.
void checkTransportLimits(Communicator& c, const PairsParams& p) {
  detail::checkPairSize(c, p.latBytes, "--lat-size");
  detail::checkPairSize(c, p.bwBytes, "--bw-size");
  engine::checkOpCaps(p.op, c.device());
  const uint32_t rq = c.device().caps().maxRecvQueue;
  if (p.mode == engine::BwMode::kWindow && rq > 0 && p.window > rq)
    throw UsageError(
        fmt::format("--window {}: {} receives in flight exceed the {} transport's receive queue "
                    "of {}; at most --window {} here",
                    p.window, p.window, p.transport, rq, rq));
}

// A pair's latency and bandwidth tests (pairs_loops.h), the same on both sides.
struct PairTests {
  detail::PairLatency lat;
  detail::PairBandwidth bw;
};

// The engines' parameters as lat / bw derive them from their description (engine/spec_params.h);
// the roles are set per side (pairs_loops.cc).
PairTests pairTests(const PairsParams& p, const engine::ProbeCounts& k) {
  PairTests t;
  t.lat.run = engine::pingPongParams(pairsLatencySpec(p), p.latBytes, k.latIters, k.latWarm, true);
  const PairBandwidthCounts bw = pairBandwidthCounts(p, k);
  t.bw.run =
      engine::bandwidthParams(pairsBandwidthSpec(p), p.bwBytes, bw.iterations, bw.warmup, true);
  return t;
}

json pairsExtra(const PairsParams& p, const PairCounts& k, double wireup, size_t peers,
                const std::string& rendezvous, size_t rounds) {
  return json{{"wireup_s", wireup},
              {"peers_per_rank", peers},
              {"rendezvous", rendezvous},
              {"rounds", rounds},
              {"schedule", "round-robin tournament (circle method), one pair per rank per round"},
              {"lat_bytes", p.latBytes},
              {"lat_iterations", k.latIters},
              {"lat_warmup", k.latWarm},
              {"bw_bytes", p.bwBytes},
              {"bw_window", p.window},
              {"bw_iterations", k.bwIters},
              {"bw_warmup", k.bwWarm},
              {"outlier_k", p.outlierK}};
}

// One ordered pair with this rank in it: the initiator measures latency then bandwidth and
// returns the figures (runRounds stores them under pairs/<me>/<peer>); the other side answers
// (null).
json measurePair(Communicator& c, const PairsParams& p, const PairTests& t, int peer,
                 bool initiator) {
  if (!initiator) {
    detail::pairLatency(c, peer, false, t.lat);
    detail::pairBandwidth(c, peer, false, t.bw);
    return nullptr;
  }
  const DeschedProbe probe;  // read before and after the pair's loops (docs/metrics.md)
  const stats::Summary lat = detail::pairLatency(c, peer, true, t.lat).samples.summarize();
  const double mbs = detail::pairBandwidth(c, peer, true, t.bw).megabytesPerSec;
  json result{{"median_us", lat.median},
              {"min_us", lat.min},
              {"mean_us", lat.mean},
              {"p99_us", lat.p99},
              {"mb_per_s", mbs}};
  // A yielding rank's own switches are the sharing it asked for: runRounds judges the round.
  if (const DeschedDelta d = probe.stop(); p.yieldCpuShare <= 0 && d.lostCpu())
    result["desched"] = d.toJson();
  return result;
}

// Every round of the tournament: this rank's pair (if any) both ways, lower rank first, then a
// barrier. Returns the seconds of all rounds.
// `done`: the rounds every rank finished (their figures are in the store), for a failed run's
// partial report.
// `figures` (rank 0 only, else null): every finished round's stored results, read before the
// round's barrier (a get waits for its key), so a run that fails later still has them: after a
// rank's failure the store answers every get with that failure.
double runRounds(Communicator& c, rendezvous::Store& store, const PairsParams& p,
                 const PairTests& t, const std::vector<PairRound>& rounds, std::string& stage,
                 size_t& done, PairFigures* figures) {
  const int me = c.rank();
  const int64_t t0 = nowNs();
  for (size_t r = 0; r < rounds.size(); ++r) {
    int peer = -1;
    for (auto [a, b] : rounds[r])
      if (a == me || b == me) peer = a == me ? b : a;
    // The round's pairs measure at once: yielding ranks are judged together over the round
    // (collective/bench_run.h sharedCpuShortfallUs), busy-polling ones each by its own loop.
    const DeschedProbe roundProbe;
    json mineResult;
    if (peer >= 0) {
      const int lo = std::min(me, peer);
      for (int initiator : {lo, lo == me ? peer : me}) {
        const bool mine = initiator == me;
        stage = fmt::format("round {} of {}, rank {} -> rank {}", r + 1, rounds.size(), initiator,
                            mine ? peer : me);
        c.setStage(stage);
        c.setWarmup(false);
        if (json res = measurePair(c, p, t, peer, mine); !res.is_null())
          mineResult = std::move(res);
      }
    }
    stage = fmt::format("descheduling of round {}", r + 1);
    c.setStage(stage);
    const DeschedDelta d = roundProbe.stop();
    const double shortfall = detail::sharedCpuShortfallUs(c, d, p.yieldCpuShare);
    if (!mineResult.is_null()) {
      if (p.yieldCpuShare > 0 && shortfall > 0)
        mineResult["desched"] = detail::deschedOfRank(d, p.yieldCpuShare, shortfall);
      store.set(fmt::format("pairs/{}/{}", me, peer), mineResult.dump());
    }
    if (figures) {
      stage = fmt::format("reading the results of round {}", r + 1);
      c.setStage(stage);
      for (auto [a, b] : rounds[r]) {
        (*figures)[a][b] = store.get(fmt::format("pairs/{}/{}", a, b), p.timeoutMs);
        (*figures)[b][a] = store.get(fmt::format("pairs/{}/{}", b, a), p.timeoutMs);
      }
    }
    stage = fmt::format("barrier after round {}", r + 1);
    c.setStage(stage);
    c.barrier();
    done = r + 1;
    if (r == 0) engine::testHold("mid-run", me, stage);
  }
  return static_cast<double>(nowNs() - t0) / 1e9;
}

// Rank 0: the figures of every ordered pair of rounds [0, upTo) from the store into the matrices
// (cost = 1 / (MB/s) for the bandwidth outliers; NaN for pairs of later rounds); pairs whose
// initiator lost the CPU are noted in res.info.
void readMatrices(Communicator& c, const PairFigures& figures, const PairsParams& p,
                  PairsResult& res, const std::vector<PairRound>& rounds, size_t upTo) {
  const int n = c.size();
  res.latMedianUs = res.latMinUs = res.latAvgUs = res.latP99Us = res.bwMBs = nanMatrix(n);
  auto cost = nanMatrix(n);
  std::vector<std::vector<bool>> measured(n, std::vector<bool>(n, false));
  for (size_t r = 0; r < upTo && r < rounds.size(); ++r)
    for (auto [a, b] : rounds[r])
      measured[a][b] = measured[b][a] = true;
  json descheduled = json::array();  // ordered pairs whose initiator lost its CPU
  int pairs = 0;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      if (s == d || !measured[s][d]) continue;
      ++pairs;
      const std::string what = fmt::format("pairs result {} -> {}", s, d);
      json j = parseUntrustedJson(figures[s][d], what, 4, 4096);
      if (!j.is_object()) throw ProtocolError(fmt::format("malformed {}", what));
      res.latMedianUs[s][d] = jsonDouble(j, "median_us", what, 0.0, 0.0, 1e15);
      res.latMinUs[s][d] = jsonDouble(j, "min_us", what, 0.0, 0.0, 1e15);
      res.latAvgUs[s][d] = jsonDouble(j, "mean_us", what, 0.0, 0.0, 1e15);
      res.latP99Us[s][d] = jsonDouble(j, "p99_us", what, 0.0, 0.0, 1e15);
      res.bwMBs[s][d] = jsonDouble(j, "mb_per_s", what, 0.0, 0.0, 1e15);
      if (res.bwMBs[s][d] > 0) cost[s][d] = 1 / res.bwMBs[s][d];
      if (const json* lost = jsonObject(j, "desched", what)) {
        json e{{"src", s}, {"dst", d}};
        e.update(*lost);
        descheduled.push_back(std::move(e));
      }
    }
  noteDescheduled(res.info, descheduled,
                  fmt::format("{} of {} pair measurements", descheduled.size(), pairs));
  res.latOutliers = classifyMatrix(res.latMedianUs, p.outlierK);
  res.bwOutliers = classifyMatrix(cost, p.outlierK);
  res.verdict = judgePairs(res, p.bounds);
}

// Rank 0: the result's figures and facts.
PairsResult gatherResult(Communicator& c, const PairFigures& figures, const PairsParams& p,
                         const PairCounts& k, report::RunInfo info, double seconds,
                         const std::vector<PairRound>& rounds, size_t upTo) {
  PairsResult res;
  res.ranks = c.size();
  res.info = std::move(info);
  res.seconds = seconds;
  res.rounds = static_cast<int>(rounds.size());
  res.roundsMeasured = static_cast<int>(upTo);
  res.latBytes = p.latBytes;
  res.latIterations = k.latIters;
  res.latWarmup = k.latWarm;
  res.bwBytes = p.bwBytes;
  const PairBandwidthCounts bw = pairBandwidthCounts(p, k);
  res.bwIterations = bw.iterations;
  res.bwWarmup = bw.warmup;
  res.window = pairsBandwidthSpec(p).inFlight();
  res.stream = p.mode == engine::BwMode::kStream;
  res.outlierK = p.outlierK;
  for (int r = 0; r < c.size(); ++r) {
    res.hosts.push_back(c.hostOf(r));
    res.addresses.push_back(c.addressOf(r));
  }
  readMatrices(c, figures, p, res, rounds, upTo);
  return res;
}

PairsResult runPairsIn(const PairsParams& p, const launch::RankInfo& info, rendezvous::Store& store,
                       std::string& stage, PairsResult* partial) {
  const int me = info.rank, n = info.worldSize;
  checkPairsParams(p, n);
  const int64_t start = nowNs();
  CommOptions co = commOptions(p, everyoneBut(me, n),
                               detail::pairLayout(std::max(p.bwBytes, p.latBytes)).total());
  co.bufferFor =
      fmt::format("pairs (--bw-size {} bytes, --lat-size {} bytes)", p.bwBytes, p.latBytes);
  co.exportRegion = p.op == engine::Op::kWrite || p.op == engine::Op::kRead;
  engine::testHold("connect", me, stage);
  Communicator c(store, me, n, info.host, co);
  c.setStage(stage);
  checkTransportLimits(c, p);
  const PlacementFacts placement = placeRank(c, p.placement, info);
  c.barrier();
  const double wireup = static_cast<double>(nowNs() - start) / 1e9;
  const PairCounts k = pairCounts(p);
  const std::vector<PairRound> rounds = roundRobinSchedule(n);
  report::RunInfo ri;
  if (me == 0) {
    ri = rankRunInfo(c, p, info,
                     pairsExtra(p, k, wireup, c.peers().size(), store.describe(), rounds.size()),
                     placement);
    recordEngineOptions(ri, p, pairBandwidthCounts(p, k), c.device());
  }
  size_t done = 0;
  const int64_t roundsStart = nowNs();
  double seconds = 0;
  PairFigures figures(me == 0 ? n : 0, std::vector<std::string>(n));
  try {
    seconds =
        runRounds(c, store, p, pairTests(p, k), rounds, stage, done, me == 0 ? &figures : nullptr);
  } catch (const std::exception&) {
    // Rank 0 keeps what the finished rounds measured (read round by round, runRounds) for the
    // document with the error.
    if (me == 0 && partial && done > 0) {
      try {
        *partial = gatherResult(c, figures, p, k, ri,
                                static_cast<double>(nowNs() - roundsStart) / 1e9, rounds, done);
        partial->failed = true;
      } catch (const std::exception& e) {
        std::cerr << "rdmabench: warning: the rounds measured before the failure are lost: "
                  << e.what() << "\n";
      }
    }
    throw;
  }
  PairsResult res;
  if (me == 0) res = gatherResult(c, figures, p, k, std::move(ri), seconds, rounds, rounds.size());
  // Everyone stays until rank 0 has read every result.
  stage = "teardown";
  c.setStage(stage);
  engine::testHold("teardown", me, stage);
  c.barrier();
  return res;
}

}  // namespace

PairsResult runPairs(const PairsParams& p, const launch::RankInfo& info, rendezvous::Store& store,
                     PairsResult* partial) {
  std::string stage = "connect";
  try {
    return runPairsIn(p, info, store, stage, partial);
  } catch (const std::exception& e) {
    engine::rethrowDuring(e, stage);
  }
}

}  // namespace rdmabench::collective
