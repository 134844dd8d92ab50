#include "collective/congestion.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collective/comm.h"
#include "collective/rank_placement.h"
#include "collective/run_info.h"
#include "common/clock.h"
#include "common/desched.h"
#include "common/error.h"
#include "common/json_read.h"
#include "common/units.h"
#include "engine/progress.h"

namespace rdmabench::collective {

using nlohmann::json;

namespace {

constexpr uint32_t kTagData = 1, kTagFlag = 2, kTagAck = 3, kTagStop = 4;

// The buffer: [0, data) message area (contents never read), then 8-byte words: "more" flag (1),
// "last" flag (0), zeros (acknowledgement and stop sources), a sink for acknowledgements and
// the stop message, and one flag slot per rank (the flag of its current window).
struct Layout {
  uint64_t data = 0;
  uint64_t more() const { return data; }
  uint64_t last() const { return data + 8; }
  uint64_t zero() const { return data + 16; }
  uint64_t sink() const { return data + 24; }
  uint64_t slot(int rank) const { return data + 32 + 8 * static_cast<uint64_t>(rank); }
  uint64_t total(int n) const { return slot(n) + 64; }
};

// The random-ring exchange of one victim: per iteration `window` messages of `bytes` to and
// from each neighbour; the next iteration's receives are posted before this one's sends leave,
// so a neighbour that is one iteration ahead always finds them. Samples in microseconds.
std::vector<double> ringExchange(Communicator& c, RingNeighbours nb, uint64_t bytes,
                                 uint64_t window, uint64_t warm, uint64_t iters) {
  const uint64_t per = 2 * window * c.chunksOf(bytes), total = warm + iters;
  uint64_t recv = 0, sent = 0;
  auto postRecvs = [&] {
    for (uint64_t w = 0; w < window; ++w) {
      c.postRecv(nb.left, 0, bytes);
      c.postRecv(nb.right, 0, bytes);
    }
  };
  std::vector<double> samples;
  samples.reserve(iters);
  c.setWarmup(warm > 0);
  postRecvs();
  for (uint64_t i = 0; i < total; ++i) {
    if (i == warm) c.setWarmup(false);
    const int64_t t0 = nowNs();
    if (i + 1 < total) postRecvs();
    for (uint64_t w = 0; w < window; ++w) {
      c.postSend(nb.right, 0, bytes);
      c.postSend(nb.left, 0, bytes);
    }
    while (recv < (i + 1) * per || sent < (i + 1) * per)
      c.poll([&](int, bool isRecv, uint32_t, uint32_t) { ++(isRecv ? recv : sent); });
    if (i >= warm) samples.push_back(static_cast<double>(nowNs() - t0) / 1e3);
  }
  return samples;
}

struct AggOutcome {
  uint64_t bytes = 0;
  double seconds = 0;
};

// One aggressor under congestion: streams to `targets`, receives from `sources`, announces
// "cong/started/<me>" once every target acknowledged a window, and finishes after the leader's
// stop message with nothing left posted. TimeoutError at `deadlineNs` naming the leader.
AggOutcome aggress(Communicator& c, rendezvous::Store& store, const Layout& L,
                   const std::vector<int>& targets, const std::vector<int>& sources, int leader,
                   uint64_t bytes, uint64_t window, int64_t deadlineNs, double limitSec) {
  const uint64_t k = c.chunksOf(bytes);
  struct In {
    uint64_t chunks = 0;
    bool flag = false, done = false;
  };
  std::map<int, In> in;
  std::map<int, bool> open, acked;
  bool stopping = false, announced = false;
  size_t firstAcks = 0;
  uint64_t sendsPosted = 0, sendsDone = 0, dataBytes = 0;
  const uint64_t one = 1, zero = 0;
  std::memcpy(c.data() + L.more(), &one, 8);
  std::memcpy(c.data() + L.last(), &zero, 8);
  std::memcpy(c.data() + L.zero(), &zero, 8);
  auto postInbound = [&](int q) {
    for (uint64_t w = 0; w < window; ++w)
      c.postRecv(q, 0, bytes, kTagData);
    c.postRecv(q, L.slot(q), 8, kTagFlag);
  };
  auto sendWindow = [&](int p) {
    if (!stopping) c.postRecv(p, L.sink(), 4, kTagAck);
    for (uint64_t w = 0; w < window; ++w)
      c.postSend(p, 0, bytes, kTagData);
    c.postSend(p, stopping ? L.last() : L.more(), 8, kTagFlag);
    sendsPosted += window * k + 1;
    dataBytes += window * bytes;
    open[p] = !stopping;
  };
  auto checkIn = [&](int q) {
    In& s = in[q];
    if (!s.flag || s.chunks < window * k) return;
    uint64_t f = 0;
    std::memcpy(&f, c.data() + L.slot(q), 8);
    s.chunks = 0;
    s.flag = false;
    if (f == 1) {
      postInbound(q);
      c.postSend(q, L.zero(), 4, kTagAck);
      ++sendsPosted;
    } else {
      s.done = true;
    }
  };
  c.postRecv(leader, L.sink(), 8, kTagStop);
  for (int q : sources)
    postInbound(q);
  const int64_t t0 = nowNs();
  for (int p : targets)
    sendWindow(p);
  auto finished = [&] {
    if (!stopping || sendsDone < sendsPosted) return false;
    for (auto& [p, o] : open)
      if (o) return false;
    for (int q : sources)
      if (!in[q].done) return false;
    return true;
  };
  int64_t stopNs = 0, nextCheckNs = nowNs() + 100'000'000;
  while (!finished()) {
    c.poll([&](int peer, bool isRecv, uint32_t tag, uint32_t) {
      if (!isRecv) {
        ++sendsDone;
        return;
      }
      if (tag == kTagStop) {
        stopping = true;
        stopNs = nowNs();
      } else if (tag == kTagAck) {
        if (!acked[peer]) {
          acked[peer] = true;
          ++firstAcks;
        }
        sendWindow(peer);
      } else if (tag == kTagData) {
        ++in[peer].chunks;
        checkIn(peer);
      } else if (tag == kTagFlag) {
        in[peer].flag = true;
        checkIn(peer);
      }
    });
    if (!announced && firstAcks == targets.size()) {
      store.set(fmt::format("cong/started/{}", c.rank()), "1");
      announced = true;
    }
    // Completions keep flowing here, so the no-progress watchdog never runs: ask the store
    // about dead ranks every 100 ms instead (non-blocking; throws naming the rank).
    if (nowNs() > nextCheckNs) {
      store.checkPeers();
      nextCheckNs = nowNs() + 100'000'000;
    }
    if (!stopping && nowNs() > deadlineNs)
      c.rethrowWithCause(TimeoutError(fmt::format(
          "aggressor rank {}: no stop message from victim rank {} (the ring's leader) within "
          "--phase-time {} s",
          c.rank(), leader, limitSec)));
  }
  AggOutcome o;
  o.bytes = dataBytes;
  o.seconds = static_cast<double>(std::max<int64_t>((stopNs ? stopNs : nowNs()) - t0, 1)) / 1e9;
  return o;
}

json intArray(const std::vector<int>& v) {
  json a = json::array();
  for (int x : v)
    a.push_back(x);
  return a;
}

std::vector<int> readRanks(const json& j, const char* key, int n, const std::string& what) {
  std::vector<int> v;
  const json* a = jsonArray(j, key, what, static_cast<size_t>(n));
  if (!a) throw ProtocolError(fmt::format("{}: no '{}'", what, key));
  for (const json& x : *a) {
    if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() >= n)
      throw ProtocolError(fmt::format("{}: '{}' holds a value that is not a rank", what, key));
    v.push_back(static_cast<int>(x.get<int64_t>()));
  }
  return v;
}

std::vector<double> readGrid(const json& j, const char* key, const std::string& what) {
  std::vector<double> g;
  const json* a = jsonArray(j, key, what, kGridPoints);
  if (!a || a->size() != static_cast<size_t>(kGridPoints))
    throw ProtocolError(fmt::format("{}: '{}' is not a grid of {} points", what, key, kGridPoints));
  for (const json& x : *a) {
    if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() < 0)
      throw ProtocolError(fmt::format("{}: '{}' holds a bad value", what, key));
    g.push_back(x.get<double>());
  }
  return g;
}

// Waits for `key` in steps of timeoutMs, asking the store about dead ranks in between, for at
// most limitSec: the wait of a rank that has nothing to do while the victims measure.
std::string longGet(rendezvous::Store& store, const std::string& key, int64_t timeoutMs,
                    double limitSec, const std::string& what) {
  const int64_t end = nowNs() + static_cast<int64_t>(limitSec * 1e9);
  for (;;) {
    try {
      return store.get(key, std::max<int64_t>(timeoutMs, 100));
    } catch (const TimeoutError&) {
      store.checkPeers();
      if (nowNs() > end)
        throw TimeoutError(fmt::format("{}: not done within --phase-time {} s", what, limitSec));
    }
  }
}

CongestionResult runIn(const CollectiveParams& p, const launch::RankInfo& info,
                       rendezvous::Store& store, std::string& stage) {
  const int me = info.rank, n = info.worldSize;
  const int nVictims = victimCount(n, p.congVictims);
  const CongestionPattern pattern = parseCongestionPattern(p.congPattern);
  if (p.pairsLatBytes < 1 || p.congBwBytes < 1 || p.congAggBytes < 1)
    throw UsageError("congestion: message sizes must be at least 1 byte");
  const int64_t start = nowNs();
  std::vector<int> peers;
  for (int r = 0; r < n; ++r)
    if (r != me) peers.push_back(r);
  Layout L;
  L.data = std::max({p.pairsLatBytes, p.congBwBytes, p.congAggBytes, uint64_t{64}});
  CommOptions co = commOptions(p, std::move(peers), L.total(n));
  co.bufferFor = fmt::format(
      "congestion (--lat-size {} bytes, --bw-size {} bytes, --agg-size {} bytes, per peer)",
      p.pairsLatBytes, p.congBwBytes, p.congAggBytes);
  engine::testHold("connect", me, stage);
  Communicator c(store, me, n, info.host, co);
  c.setStage(stage);
  const uint32_t rq = c.device().caps().maxRecvQueue;
  // A victim keeps 4 windows of receives per peer (both ring directions, this iteration's and
  // the next's, posted early); an aggressor target one window of --agg-size plus 2 controls.
  const uint64_t bwChunks = c.chunksOf(p.congBwBytes), aggChunks = c.chunksOf(p.congAggBytes);
  const uint64_t need = std::max(4 * p.pairsWindow * bwChunks, p.pairsWindow * aggChunks + 2);
  if (rq > 0 && need > rq)
    throw UsageError(fmt::format(
        "--window {}: {} receives in flight per peer (4 windows of --bw-size messages for the "
        "victims' ring, one of --agg-size for an aggressor) exceed the {} transport's receive "
        "queue of {}; at most --window {} here",
        p.pairsWindow, need, p.transport, rq,
        std::min<uint64_t>(rq / (4 * bwChunks), rq > 2 ? (rq - 2) / aggChunks : 0)));
  const json placement = placeRank(c, p.placement, info);
  // Rank 0 splits the ranks (it reads every rank's host once) and publishes the plan.
  CongestionPlan plan;
  std::vector<std::string> nodes;
  if (me == 0) {
    std::set<std::string> names;
    for (int r = 0; r < n; ++r)
      names.insert(c.hostOf(r));
    const bool distinct = names.size() == static_cast<size_t>(n);
    for (int r = 0; r < n; ++r)
      nodes.push_back(distinct ? c.hostOf(r) : fmt::format("{} ({})", c.hostOf(r), c.addressOf(r)));
    plan = planCongestion(nodes, nVictims, p.congSeed);
    store.set("cong/plan", json{{"victims", intArray(plan.victims)},
                                {"aggressors", intArray(plan.aggressors)},
                                {"ring", intArray(plan.ring)},
                                {"target", plan.incastTarget}}
                               .dump());
  } else {
    const std::string what = "congestion plan from rank 0";
    json j = parseUntrustedJson(store.get("cong/plan", p.timeoutMs), what, 3, 1 << 20);
    if (!j.is_object()) throw ProtocolError(fmt::format("malformed {}", what));
    plan.victims = readRanks(j, "victims", n, what);
    plan.aggressors = readRanks(j, "aggressors", n, what);
    plan.ring = readRanks(j, "ring", n, what);
    plan.incastTarget = static_cast<int>(jsonInt(j, "target", what, -1, -1, n - 1));
  }
  c.barrier();
  const double wireup = static_cast<double>(nowNs() - start) / 1e9;
  const bool victim = std::binary_search(plan.victims.begin(), plan.victims.end(), me);
  const int leader = plan.ring.at(0);
  const uint64_t latIters = p.iterations ? p.iterations : 1000;
  const uint64_t latWarm = p.warmup >= 0 ? static_cast<uint64_t>(p.warmup) : 100;
  const uint64_t bwIters = p.congBwIters;
  const uint64_t bwWarm =
      p.warmup >= 0 ? std::min<uint64_t>(static_cast<uint64_t>(p.warmup), 2) : 2;
  const uint64_t window = p.pairsWindow;
  const std::vector<int> targets = aggressorTargets(plan, pattern, me);
  const std::vector<int> sources = aggressorSources(plan, pattern, me);
  uint64_t streams = 0;
  for (int a : plan.aggressors)
    streams += aggressorTargets(plan, pattern, a).size();
  json extra{{"wireup_s", wireup},
             {"rendezvous", store.describe()},
             {"victims", plan.victims.size()},
             {"aggressors", plan.aggressors.size()},
             {"victim_fraction", p.congVictims},
             {"pattern", toString(pattern)},
             {"seed", p.congSeed},
             {"ring", intArray(plan.ring)},
             {"lat_bytes", p.pairsLatBytes},
             {"lat_iterations", latIters},
             {"lat_warmup", latWarm},
             {"bw_bytes", p.congBwBytes},
             {"bw_iterations", bwIters},
             {"bw_warmup", bwWarm},
             {"window", window},
             {"aggressor_bytes", p.congAggBytes},
             {"aggressor_streams", streams},
             {"phase_time_s", p.congPhaseSec}};
  if (pattern == CongestionPattern::kIncast) extra["incast_target"] = plan.incastTarget;
  report::RunInfo ri;
  if (me == 0) {
    ri = collectiveRunInfo(c, p, info, extra, placement);
    ri.window = window;
  }
  // Both phases run the same victim tests; their quantile grids go to the store.
  double isolatedSec = 0, congestedSec = 0;
  auto victimTests = [&](const char* phase) {
    const RingNeighbours nb = ringNeighbours(plan, me);
    stage = fmt::format("{}: ring latency, left rank {}, right rank {}", phase, nb.left, nb.right);
    c.setStage(stage);
    const DeschedProbe probe;  // read before and after the victim's loops (docs/metrics.md)
    std::vector<double> lat = ringExchange(c, nb, p.pairsLatBytes, 1, latWarm, latIters);
    stage =
        fmt::format("{}: ring bandwidth, left rank {}, right rank {}", phase, nb.left, nb.right);
    c.setStage(stage);
    std::vector<double> bw = ringExchange(c, nb, p.congBwBytes, window, bwWarm, bwIters);
    json result{{"lat", quantileGrid(lat)}, {"bw", quantileGrid(bw)}};
    if (const DeschedDelta d = probe.stop(); d.lostCpu()) result["desched"] = d.toJson();
    store.set(fmt::format("cong/{}/{}", phase, me), result.dump());
  };
  // The leader waits for every victim's results of `phase` (they finish within a ring step of
  // each other), then says so under cong/<phase>/done.
  auto leaderCollect = [&](const char* phase) {
    for (int v : plan.victims) {
      stage = fmt::format("{}: waiting for the results of victim rank {}", phase, v);
      store.get(fmt::format("cong/{}/{}", phase, v), p.timeoutMs);
    }
    store.set(fmt::format("cong/{}/done", phase), "1");
  };

  // Phase 1: isolated. (The test hook holds an aggressor here while the victims measure.)
  if (!victim) engine::testHold("isolated", me, stage);
  int64_t t0 = nowNs();
  if (victim) {
    victimTests("isolated");
    if (me == leader) {
      leaderCollect("isolated");
      isolatedSec = static_cast<double>(nowNs() - t0) / 1e9;
      store.set("cong/isolated_s", fmt::format("{}", isolatedSec));
    }
  } else {
    stage = "isolated: aggressor idle while the victims measure";
    c.setStage(stage);
    longGet(store, "cong/isolated/done", p.timeoutMs, p.congPhaseSec,
            fmt::format("isolated phase (victim rank {} leads)", leader));
  }
  stage = "barrier after the isolated phase";
  c.setStage(stage);
  c.barrier();

  // Phase 2: congested.
  AggOutcome agg;
  engine::testHold("mid-run", me, stage);
  t0 = nowNs();
  if (victim) {
    if (me == leader) {
      for (int a : plan.aggressors) {
        stage = fmt::format("congested: waiting for aggressor rank {} to start", a);
        c.setStage(stage);
        store.get(fmt::format("cong/started/{}", a), p.timeoutMs);
      }
      store.set("cong/go", "1");
    } else {
      stage = fmt::format("congested: waiting for the go of victim rank {}", leader);
      c.setStage(stage);
      store.get("cong/go", 2 * p.timeoutMs);
    }
    victimTests("congested");
    if (me == leader) {
      leaderCollect("congested");
      congestedSec = static_cast<double>(nowNs() - t0) / 1e9;
      stage = "congested: stopping the aggressors";
      c.setStage(stage);
      uint64_t z = 0;
      std::memcpy(c.data() + L.zero(), &z, 8);
      for (int a : plan.aggressors)
        c.postSend(a, L.zero(), 8, kTagStop);
      c.waitAll("stop messages to the aggressors");
      store.set("cong/congested_s", fmt::format("{}", congestedSec));
    }
  } else {
    stage = fmt::format("congested: aggressor, {} stream(s) out, {} in", targets.size(),
                        sources.size());
    c.setStage(stage);
    agg = aggress(c, store, L, targets, sources, leader, p.congAggBytes, window,
                  nowNs() + static_cast<int64_t>(p.congPhaseSec * 1e9), p.congPhaseSec);
    store.set(fmt::format("cong/agg/{}", me),
              json{{"bytes", agg.bytes}, {"seconds", agg.seconds}}.dump());
  }

  CongestionResult res;
  if (me == 0) {
    res.ranks = n;
    res.nodes = nodes;
    res.plan = plan;
    res.pattern = pattern;
    res.seed = p.congSeed;
    res.victimFraction = p.congVictims;
    res.aggBytes = p.congAggBytes;
    res.aggWindow = window;
    res.aggStreams = streams;
    res.phaseLimitSec = p.congPhaseSec;
    res.info = ri;
    auto seconds = [&](const char* key) {
      const std::string what = fmt::format("{} from victim rank {}", key, leader);
      json j = parseUntrustedJson(store.get(key, p.timeoutMs), what, 1, 64);
      if (!j.is_number()) throw ProtocolError(fmt::format("malformed {}", what));
      return j.get<double>();
    };
    res.isolatedSeconds = seconds("cong/isolated_s");
    res.congestedSeconds = seconds("cong/congested_s");
    std::vector<std::vector<double>> grid[2][2];  // [phase][metric]
    const char* phases[2] = {"isolated", "congested"};
    json descheduled = json::array();  // victims' phases whose loops lost the CPU
    for (int ph = 0; ph < 2; ++ph)
      for (int v : plan.victims) {
        const std::string what = fmt::format("{} results of victim rank {}", phases[ph], v);
        json j = parseUntrustedJson(
            store.get(fmt::format("cong/{}/{}", phases[ph], v), p.timeoutMs), what, 3, 64 << 10);
        if (!j.is_object()) throw ProtocolError(fmt::format("malformed {}", what));
        grid[ph][0].push_back(readGrid(j, "lat", what));
        grid[ph][1].push_back(readGrid(j, "bw", what));
        if (const json* lost = jsonObject(j, "desched", what)) {
          json e{{"phase", phases[ph]}, {"rank", v}};
          e.update(*lost);
          descheduled.push_back(std::move(e));
        }
      }
    noteDescheduled(res.info, descheduled, fmt::format("{} victim phase(s)", descheduled.size()));
    for (int m = 0; m < 2; ++m) {
      CongestionMetric x;
      x.bandwidth = m == 1;
      x.bytes = m ? p.congBwBytes : p.pairsLatBytes;
      x.window = m ? window : 1;
      x.bytesPerIteration = 2 * x.window * x.bytes;
      x.iterations = m ? bwIters : latIters;
      x.warmup = m ? bwWarm : latWarm;
      x.name = m ? fmt::format("RR Two-sided BW ({} B x {})", x.bytes, x.window)
                 : fmt::format("RR Two-sided Lat ({} B)", x.bytes);
      x.isoP50Us = pooledQuantile(grid[0][m], 0.5);
      x.isoP99Us = pooledQuantile(grid[0][m], 0.99);
      x.conP50Us = pooledQuantile(grid[1][m], 0.5);
      x.conP99Us = pooledQuantile(grid[1][m], 0.99);
      res.metrics.push_back(x);
    }
    double sum = 0;
    for (int a : plan.aggressors) {
      const std::string what = fmt::format("aggressor figures of rank {}", a);
      json j =
          parseUntrustedJson(store.get(fmt::format("cong/agg/{}", a), p.timeoutMs), what, 2, 4096);
      if (!j.is_object()) throw ProtocolError(fmt::format("malformed {}", what));
      const double s = jsonDouble(j, "seconds", what, 0, 0, 1e9);
      if (s > 0) sum += static_cast<double>(jsonUint(j, "bytes", what, 0)) / s / 1e6;
    }
    res.aggMBs = sum;
  }
  stage = "teardown";
  c.setStage(stage);
  engine::testHold("teardown", me, stage);
  c.barrier();
  return res;
}

}  // namespace

CongestionResult runCongestion(const CollectiveParams& p, const launch::RankInfo& info,
                               rendezvous::Store& store) {
  std::string stage = "connect";
  try {
    return runIn(p, info, store, stage);
  } catch (const std::exception& e) {
    engine::rethrowDuring(e, stage);
  }
}

}  // namespace rdmabench::collective
