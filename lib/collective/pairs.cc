#include "collective/pairs.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collective/comm.h"
#include "collective/pairs_schedule.h"
#include "collective/rank_placement.h"
#include "collective/run_info.h"
#include "common/clock.h"
#include "common/desched.h"
#include "common/error.h"
#include "common/json_read.h"
#include "engine/progress.h"
#include "stats/summary.h"

namespace rdmabench::collective {

using nlohmann::json;

namespace {

constexpr uint64_t kAckBytes = 4;

// Counts delivered completions per direction of the one active pair.
struct Counts {
  uint64_t recv = 0, sent = 0;
  void pollUntil(Communicator& c, uint64_t recvWanted, uint64_t sentWanted) {
    while (recv < recvWanted || sent < sentWanted)
      c.poll([this](int, bool isRecv, uint32_t, uint32_t) { ++(isRecv ? recv : sent); });
  }
};

// Initiator side of the latency ping-pong: RTT/2 per measured iteration.
stats::Summary pingInitiator(Communicator& c, int peer, uint64_t bytes, uint64_t warm,
                             uint64_t iters) {
  stats::SampleSet samples;
  samples.reserve(iters);
  const std::string what = fmt::format("latency ping-pong with rank {}", peer);
  for (uint64_t i = 0; i < warm + iters; ++i) {
    const int64_t t0 = nowNs();
    c.postRecv(peer, bytes, bytes);
    c.postSend(peer, 0, bytes);
    c.waitAll(what);
    if (i >= warm) samples.add((nowNs() - t0) / 2);
  }
  return samples.summarize();
}

// Responder side: the next receive is always posted before the reply leaves.
void pingResponder(Communicator& c, int peer, uint64_t bytes, uint64_t total) {
  const uint64_t k = c.chunksOf(bytes);
  Counts n;
  c.postRecv(peer, bytes, bytes);
  for (uint64_t i = 0; i < total; ++i) {
    n.pollUntil(c, (i + 1) * k, 0);
    if (i + 1 < total) c.postRecv(peer, bytes, bytes);
    c.postSend(peer, 0, bytes);
  }
  n.pollUntil(c, total * k, total * k);
}

// Sender side of the windowed stream; returns MB/s over the measured iterations, the clock
// stopped by the target's acknowledgement of the last window.
double streamSender(Communicator& c, int peer, uint64_t bytes, uint64_t window, uint64_t warm,
                    uint64_t iters) {
  const uint64_t k = c.chunksOf(bytes), total = warm + iters;
  Counts n;
  int64_t t0 = nowNs();
  c.postRecv(peer, bytes, kAckBytes);
  for (uint64_t it = 0; it < total; ++it) {
    if (it == warm) t0 = nowNs();
    for (uint64_t w = 0; w < window; ++w)
      c.postSend(peer, 0, bytes);
    n.pollUntil(c, it + 1, 0);
    if (it + 1 < total) c.postRecv(peer, bytes, kAckBytes);
  }
  const int64_t t1 = nowNs();
  n.pollUntil(c, total, total * window * k);
  const double seconds = static_cast<double>(std::max<int64_t>(t1 - t0, 1)) / 1e9;
  return static_cast<double>(iters * window * bytes) / seconds / 1e6;
}

void streamReceiver(Communicator& c, int peer, uint64_t bytes, uint64_t window, uint64_t total) {
  const uint64_t k = c.chunksOf(bytes);
  Counts n;
  for (uint64_t w = 0; w < window; ++w)
    c.postRecv(peer, 0, bytes);
  for (uint64_t it = 0; it < total; ++it) {
    n.pollUntil(c, (it + 1) * window * k, 0);
    if (it + 1 < total)
      for (uint64_t w = 0; w < window; ++w)
        c.postRecv(peer, 0, bytes);
    c.postSend(peer, bytes, kAckBytes);
  }
  n.pollUntil(c, total * window * k, total);
}

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

PairsResult runPairsIn(const CollectiveParams& p, const launch::RankInfo& info,
                       rendezvous::Store& store, std::string& stage) {
  if (p.pairsLatBytes < 1 || p.pairsBwBytes < 1)
    throw UsageError(
        fmt::format("pairs: message sizes must be at least 1 byte (--lat-size {}, "
                    "--bw-size {})",
                    p.pairsLatBytes, p.pairsBwBytes));
  PairsResult res;
  const int me = info.rank, n = info.worldSize;
  if (n < 2)
    throw UsageError(fmt::format(
        "pairs: a world of {} rank: pairs measures every pair of ranks and needs at least 2", n));
  const int64_t start = nowNs();
  CommOptions co =
      commOptions(p, everyoneBut(me, n), std::max(p.pairsBwBytes + 64, 2 * p.pairsLatBytes));
  co.bufferFor = fmt::format("pairs (--bw-size {} bytes, --lat-size {} bytes)", p.pairsBwBytes,
                             p.pairsLatBytes);
  engine::testHold("connect", me, stage);
  Communicator c(store, me, n, info.host, co);
  c.setStage(stage);
  // The target keeps one window of receives posted while the next window is on its way.
  const uint32_t rq = c.device().caps().maxRecvQueue;
  if (rq > 0 && p.pairsWindow * c.chunksOf(p.pairsBwBytes) > rq)
    throw UsageError(fmt::format(
        "--window {}: {} receives in flight ({} per {}-byte message) exceed the {} transport's "
        "receive queue of {}; at most --window {} here",
        p.pairsWindow, p.pairsWindow * c.chunksOf(p.pairsBwBytes), c.chunksOf(p.pairsBwBytes),
        p.pairsBwBytes, p.transport, rq, rq / c.chunksOf(p.pairsBwBytes)));
  const json placement = placeRank(c, p.placement, info);
  c.barrier();
  const double wireup = static_cast<double>(nowNs() - start) / 1e9;
  const uint64_t latIters = p.iterations ? p.iterations : 1000;
  const uint64_t latWarm = p.warmup >= 0 ? static_cast<uint64_t>(p.warmup) : 100;
  const uint64_t bwIters = p.pairsBwIters;
  const uint64_t bwWarm =
      p.warmup >= 0 ? std::min<uint64_t>(static_cast<uint64_t>(p.warmup), 2) : 2;
  const std::vector<PairRound> rounds = roundRobinSchedule(n);
  json extra{{"wireup_s", wireup},
             {"peers_per_rank", c.peers().size()},
             {"rendezvous", store.describe()},
             {"rounds", rounds.size()},
             {"schedule", "round-robin tournament (circle method), one pair per rank per round"},
             {"lat_bytes", p.pairsLatBytes},
             {"lat_iterations", latIters},
             {"lat_warmup", latWarm},
             {"bw_bytes", p.pairsBwBytes},
             {"bw_window", p.pairsWindow},
             {"bw_iterations", bwIters},
             {"bw_warmup", bwWarm},
             {"outlier_k", p.outlierK}};
  report::RunInfo ri;
  if (me == 0) {
    ri = collectiveRunInfo(c, p, info, extra, placement);
    ri.window = p.pairsWindow;
  }
  const int64_t t0 = nowNs();
  for (size_t r = 0; r < rounds.size(); ++r) {
    int peer = -1;
    for (auto [a, b] : rounds[r])
      if (a == me || b == me) peer = a == me ? b : a;
    if (peer >= 0) {
      const int lo = std::min(me, peer);
      for (int initiator : {lo, lo == me ? peer : me}) {
        const bool mine = initiator == me;
        stage = fmt::format("round {} of {}, rank {} -> rank {}", r + 1, rounds.size(), initiator,
                            mine ? peer : me);
        c.setStage(stage);
        c.setWarmup(false);
        if (mine) {
          const DeschedProbe probe;  // read before and after the pair's loops (docs/metrics.md)
          stats::Summary lat = pingInitiator(c, peer, p.pairsLatBytes, latWarm, latIters);
          double mbs = streamSender(c, peer, p.pairsBwBytes, p.pairsWindow, bwWarm, bwIters);
          json result{{"median_us", lat.median},
                      {"min_us", lat.min},
                      {"mean_us", lat.mean},
                      {"p99_us", lat.p99},
                      {"mb_per_s", mbs}};
          if (const DeschedDelta d = probe.stop(); d.lostCpu()) result["desched"] = d.toJson();
          store.set(fmt::format("pairs/{}/{}", me, peer), result.dump());
        } else {
          pingResponder(c, peer, p.pairsLatBytes, latWarm + latIters);
          streamReceiver(c, peer, p.pairsBwBytes, p.pairsWindow, bwWarm + bwIters);
        }
      }
    }
    stage = fmt::format("barrier after round {}", r + 1);
    c.setStage(stage);
    c.barrier();
  }
  const double seconds = static_cast<double>(nowNs() - t0) / 1e9;
  if (me == 0) {
    res.ranks = n;
    res.info = ri;
    res.seconds = seconds;
    res.rounds = static_cast<int>(rounds.size());
    res.latBytes = p.pairsLatBytes;
    res.latIterations = latIters;
    res.latWarmup = latWarm;
    res.bwBytes = p.pairsBwBytes;
    res.bwIterations = bwIters;
    res.bwWarmup = bwWarm;
    res.window = p.pairsWindow;
    res.outlierK = p.outlierK;
    res.latMedianUs = res.latMinUs = res.latAvgUs = res.latP99Us = res.bwMBs = nanMatrix(n);
    for (int r = 0; r < n; ++r) {
      res.hosts.push_back(c.hostOf(r));
      res.addresses.push_back(c.addressOf(r));
    }
    auto cost = nanMatrix(n);
    json descheduled = json::array();  // ordered pairs whose initiator lost its CPU
    for (int s = 0; s < n; ++s)
      for (int d = 0; d < n; ++d) {
        if (s == d) continue;
        const std::string what = fmt::format("pairs result {} -> {}", s, d);
        json j = parseUntrustedJson(store.get(fmt::format("pairs/{}/{}", s, d), p.timeoutMs), what,
                                    4, 4096);
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
                    fmt::format("{} of {} pair measurements", descheduled.size(), n * (n - 1)));
    res.latOutliers = classifyMatrix(res.latMedianUs, p.outlierK);
    res.bwOutliers = classifyMatrix(cost, p.outlierK);
  }
  // Everyone stays until rank 0 has read every result.
  stage = "teardown";
  c.setStage(stage);
  engine::testHold("teardown", me, stage);
  c.barrier();
  return res;
}

}  // namespace

PairsResult runPairs(const CollectiveParams& p, const launch::RankInfo& info,
                     rendezvous::Store& store) {
  std::string stage = "connect";
  try {
    return runPairsIn(p, info, store, stage);
  } catch (const std::exception& e) {
    engine::rethrowDuring(e, stage);
  }
}

}  // namespace rdmabench::collective
