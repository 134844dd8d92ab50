#include "collective/congestion.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collective/bench_run.h"
#include "collective/comm.h"
#include "collective/congestion_traffic.h"
#include "collective/rank_placement.h"
#include "collective/run_info.h"
#include "common/clock.h"
#include "common/desched.h"
#include "common/error.h"
#include "common/json_read.h"
#include "common/units.h"
#include "engine/iterations.h"
#include "engine/progress.h"

namespace rdmabench::collective {

using detail::kTagStop;
using detail::Layout;
using nlohmann::json;

namespace {

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

// The victims' iteration counts (engine/iterations.h probeCounts).
using VictimCounts = engine::ProbeCounts;

VictimCounts victimCounts(const CongestionParams& p) {
  return engine::probeCounts(p.iterations, p.warmup, p.bwIters);
}

// Every other rank is a peer; the data area holds the largest message and the control words.
CommOptions congestionCommOptions(const CongestionParams& p, int me, int n, const Layout& L) {
  std::vector<int> peers;
  for (int r = 0; r < n; ++r)
    if (r != me) peers.push_back(r);
  CommOptions co = commOptions(p, std::move(peers), L.total(n));
  co.bufferFor = fmt::format(
      "congestion (--lat-size {} bytes, --bw-size {} bytes, --agg-size {} bytes, per peer)",
      p.latBytes, p.bwBytes, p.aggBytes);
  return co;
}

// A victim keeps 4 windows of receives per peer (both ring directions, this iteration's and
// the next's, posted early); an aggressor target one window of --agg-size plus 2 controls.
// UsageError when the transport's receive queue is shorter, naming the largest --window.
void checkReceiveQueue(Communicator& c, const CongestionParams& p) {
  const uint32_t rq = c.device().caps().maxRecvQueue;
  const uint64_t bwChunks = c.chunksOf(p.bwBytes), aggChunks = c.chunksOf(p.aggBytes);
  const uint64_t need = std::max(4 * p.window * bwChunks, p.window * aggChunks + 2);
  if (rq > 0 && need > rq)
    throw UsageError(fmt::format(
        "--window {}: {} receives in flight per peer (4 windows of --bw-size messages for the "
        "victims' ring, one of --agg-size for an aggressor) exceed the {} transport's receive "
        "queue of {}; at most --window {} here",
        p.window, need, p.transport, rq,
        std::min<uint64_t>(rq / (4 * bwChunks), rq > 2 ? (rq - 2) / aggChunks : 0)));
}

// Rank 0 splits the ranks (it reads every rank's host once, into `nodes`) and publishes the
// plan; the others read it from the store, trusting nothing in it.
CongestionPlan agreePlan(Communicator& c, rendezvous::Store& store, const CongestionParams& p,
                         int nVictims, std::vector<std::string>& nodes) {
  const int n = c.size();
  CongestionPlan plan;
  if (c.rank() == 0) {
    std::set<std::string> names;
    for (int r = 0; r < n; ++r)
      names.insert(c.hostOf(r));
    const bool distinct = names.size() == static_cast<size_t>(n);
    for (int r = 0; r < n; ++r)
      nodes.push_back(distinct ? c.hostOf(r) : fmt::format("{} ({})", c.hostOf(r), c.addressOf(r)));
    plan = planCongestion(nodes, nVictims, p.seed);
    store.set("cong/plan", json{{"victims", intArray(plan.victims)},
                                {"aggressors", intArray(plan.aggressors)},
                                {"ring", intArray(plan.ring)},
                                {"target", plan.incastTarget}}
                               .dump());
    return plan;
  }
  const std::string what = "congestion plan from rank 0";
  json j = parseUntrustedJson(store.get("cong/plan", p.timeoutMs), what, 3, 1 << 20);
  if (!j.is_object()) throw ProtocolError(fmt::format("malformed {}", what));
  plan.victims = readRanks(j, "victims", n, what);
  plan.aggressors = readRanks(j, "aggressors", n, what);
  plan.ring = readRanks(j, "ring", n, what);
  plan.incastTarget = static_cast<int>(jsonInt(j, "target", what, -1, -1, n - 1));
  return plan;
}

// Aggressor streams in all (every aggressor's targets).
uint64_t streamCount(const CongestionPlan& plan, CongestionPattern pattern) {
  uint64_t streams = 0;
  for (int a : plan.aggressors)
    streams += aggressorTargets(plan, pattern, a).size();
  return streams;
}

// The header's extra facts of a congestion run.
json congestionExtra(const CongestionParams& p, const CongestionPlan& plan, const VictimCounts& v,
                     double wireup, const std::string& rendezvous) {
  json extra{{"wireup_s", wireup},
             {"rendezvous", rendezvous},
             {"victims", plan.victims.size()},
             {"aggressors", plan.aggressors.size()},
             {"victim_fraction", p.victims},
             {"pattern", toString(p.pattern)},
             {"seed", p.seed},
             {"ring", intArray(plan.ring)},
             {"lat_bytes", p.latBytes},
             {"lat_iterations", v.latIters},
             {"lat_warmup", v.latWarm},
             {"bw_bytes", p.bwBytes},
             {"bw_iterations", v.bwIters},
             {"bw_warmup", v.bwWarm},
             {"window", p.window},
             {"aggressor_bytes", p.aggBytes},
             {"aggressor_streams", streamCount(plan, p.pattern)},
             {"phase_time_s", p.phaseSec}};
  if (p.pattern == CongestionPattern::kIncast) extra["incast_target"] = plan.incastTarget;
  return extra;
}

// One rank's run after wire-up and the plan.
struct CongestionRun {
  const CongestionParams& p;
  rendezvous::Store& store;
  Communicator& c;
  std::string& stage;
  const Layout& L;
  const CongestionPlan& plan;
  const VictimCounts v;
  const int me;
  const bool victim;
  const int leader;

  void enter(std::string s) {
    stage = std::move(s);
    c.setStage(stage);
  }

  // Both phases run the same victim tests; their quantile grids go to the store.
  void victimTests(const char* phase) {
    const RingNeighbours nb = ringNeighbours(plan, me);
    enter(fmt::format("{}: ring latency, left rank {}, right rank {}", phase, nb.left, nb.right));
    const DeschedProbe probe;  // read before and after the victim's loops (docs/metrics.md)
    std::vector<double> lat = detail::ringExchange(c, nb, p.latBytes, 1, v.latWarm, v.latIters);
    enter(fmt::format("{}: ring bandwidth, left rank {}, right rank {}", phase, nb.left, nb.right));
    std::vector<double> bw = detail::ringExchange(c, nb, p.bwBytes, p.window, v.bwWarm, v.bwIters);
    json result{{"lat", quantileGrid(lat)}, {"bw", quantileGrid(bw)}};
    // The victims alone measure (aggressors stream in the congested phase, on other hosts in a
    // real run): a yielding victim is judged by its own share of the CPUs (bench_run.h).
    const DeschedDelta d = probe.stop();
    const double cpu = detail::ranksCpuUs(d, p.yieldCpuShare);
    const double entitled = d.wallUs * p.yieldCpuShare;
    const double shortfall = sharedCpusLost(cpu, entitled) ? entitled - cpu : 0.0;
    if (json lost = detail::deschedOfRank(d, p.yieldCpuShare, shortfall); !lost.is_null())
      result["desched"] = std::move(lost);
    store.set(fmt::format("cong/{}/{}", phase, me), result.dump());
  }

  // The leader waits for every victim's results of `phase` (they finish within a ring step of
  // each other), then says so under cong/<phase>/done.
  void leaderCollect(const char* phase) {
    for (int r : plan.victims) {
      stage = fmt::format("{}: waiting for the results of victim rank {}", phase, r);
      store.get(fmt::format("cong/{}/{}", phase, r), p.timeoutMs);
    }
    store.set(fmt::format("cong/{}/done", phase), "1");
  }

  // Phase 1: the victims measure while the aggressors stay silent.
  void isolatedPhase() {
    // (The test hook holds an aggressor here while the victims measure.)
    if (!victim) engine::testHold("isolated", me, stage);
    const int64_t t0 = nowNs();
    if (victim) {
      victimTests("isolated");
      if (me == leader) {
        leaderCollect("isolated");
        const double isolatedSec = static_cast<double>(nowNs() - t0) / 1e9;
        store.set("cong/isolated_s", fmt::format("{}", isolatedSec));
      }
    } else {
      enter("isolated: aggressor idle while the victims measure");
      longGet(store, "cong/isolated/done", p.timeoutMs, p.phaseSec,
              fmt::format("isolated phase (victim rank {} leads)", leader));
    }
    enter("barrier after the isolated phase");
    c.barrier();
  }

  // The leader, once the victims are done: one stop message to every aggressor.
  void stopAggressors() {
    enter("congested: stopping the aggressors");
    uint64_t z = 0;
    std::memcpy(c.data() + L.zero(), &z, 8);
    for (int a : plan.aggressors)
      c.postSend(a, L.zero(), 8, kTagStop);
    c.waitAll("stop messages to the aggressors");
  }

  // A victim in phase 2: the leader waits until every aggressor streams, then gives the go.
  void congestedVictim(int64_t t0) {
    if (me == leader) {
      for (int a : plan.aggressors) {
        enter(fmt::format("congested: waiting for aggressor rank {} to start", a));
        store.get(fmt::format("cong/started/{}", a), p.timeoutMs);
      }
      store.set("cong/go", "1");
    } else {
      enter(fmt::format("congested: waiting for the go of victim rank {}", leader));
      store.get("cong/go", 2 * p.timeoutMs);
    }
    victimTests("congested");
    if (me != leader) return;
    leaderCollect("congested");
    const double congestedSec = static_cast<double>(nowNs() - t0) / 1e9;
    stopAggressors();
    store.set("cong/congested_s", fmt::format("{}", congestedSec));
  }

  // An aggressor in phase 2: its streams until the leader's stop; its figures to the store.
  void congestedAggressor() {
    detail::AggressorPlan a;
    a.targets = aggressorTargets(plan, p.pattern, me);
    a.sources = aggressorSources(plan, p.pattern, me);
    a.leader = leader;
    a.bytes = p.aggBytes;
    a.window = p.window;
    a.deadlineNs = nowNs() + static_cast<int64_t>(p.phaseSec * 1e9);
    a.limitSec = p.phaseSec;
    enter(fmt::format("congested: aggressor, {} stream(s) out, {} in", a.targets.size(),
                      a.sources.size()));
    const detail::AggOutcome agg = detail::aggress(c, store, L, a);
    store.set(fmt::format("cong/agg/{}", me),
              json{{"bytes", agg.bytes}, {"seconds", agg.seconds}}.dump());
  }

  // Phase 2: the aggressors stream while the victims measure again.
  void congestedPhase() {
    engine::testHold("mid-run", me, stage);
    const int64_t t0 = nowNs();
    if (victim)
      congestedVictim(t0);
    else
      congestedAggressor();
  }
};

// Rank 0: a phase's duration as the leader stored it.
double leaderSeconds(rendezvous::Store& store, const char* key, int leader, int64_t timeoutMs) {
  const std::string what = fmt::format("{} from victim rank {}", key, leader);
  json j = parseUntrustedJson(store.get(key, timeoutMs), what, 1, 64);
  if (!j.is_number()) throw ProtocolError(fmt::format("malformed {}", what));
  return j.get<double>();
}

// Rank 0: every victim's quantile grids, [phase][metric: 0 latency, 1 bandwidth][victim]; the
// victims' phases that lost the CPU are noted in `info`.
using Grids = std::vector<std::vector<double>>[2][2];

void readVictimGrids(const CongestionRun& r, Grids& grid, report::RunInfo& info, int phaseCount,
                     int64_t timeoutMs) {
  const char* phases[2] = {"isolated", "congested"};
  json descheduled = json::array();  // victims' phases whose loops lost the CPU
  for (int ph = 0; ph < phaseCount; ++ph)
    for (int v : r.plan.victims) {
      const std::string what = fmt::format("{} results of victim rank {}", phases[ph], v);
      json j = parseUntrustedJson(r.store.get(fmt::format("cong/{}/{}", phases[ph], v), timeoutMs),
                                  what, 3, 64 << 10);
      if (!j.is_object()) throw ProtocolError(fmt::format("malformed {}", what));
      grid[ph][0].push_back(readGrid(j, "lat", what));
      grid[ph][1].push_back(readGrid(j, "bw", what));
      if (const json* lost = jsonObject(j, "desched", what)) {
        json e{{"phase", phases[ph]}, {"rank", v}};
        e.update(*lost);
        descheduled.push_back(std::move(e));
      }
    }
  noteDescheduled(info, descheduled, fmt::format("{} victim phase(s)", descheduled.size()));
}

// The two victim metrics (latency, bandwidth) from the pooled grids.
std::vector<CongestionMetric> victimMetrics(const CongestionParams& p, const VictimCounts& v,
                                            const Grids& grid) {
  std::vector<CongestionMetric> metrics;
  for (int m = 0; m < 2; ++m) {
    CongestionMetric x;
    x.bandwidth = m == 1;
    x.bytes = m ? p.bwBytes : p.latBytes;
    x.window = m ? p.window : 1;
    x.bytesPerIteration = 2 * x.window * x.bytes;
    x.iterations = m ? v.bwIters : v.latIters;
    x.warmup = m ? v.bwWarm : v.latWarm;
    x.name = m ? fmt::format("RR Two-sided BW ({} B x {})", x.bytes, x.window)
               : fmt::format("RR Two-sided Lat ({} B)", x.bytes);
    x.isoP50Us = pooledQuantile(grid[0][m], 0.5);
    x.isoP99Us = pooledQuantile(grid[0][m], 0.99);
    x.conP50Us = pooledQuantile(grid[1][m], 0.5);
    x.conP99Us = pooledQuantile(grid[1][m], 0.99);
    metrics.push_back(x);
  }
  return metrics;
}

// Rank 0: the aggregate aggressor rate, MB/s (sum of every aggressor's bytes / its seconds).
double aggressorRate(const CongestionRun& r) {
  double sum = 0;
  for (int a : r.plan.aggressors) {
    const std::string what = fmt::format("aggressor figures of rank {}", a);
    json j = parseUntrustedJson(r.store.get(fmt::format("cong/agg/{}", a), r.p.timeoutMs), what, 2,
                                4096);
    if (!j.is_object()) throw ProtocolError(fmt::format("malformed {}", what));
    const double s = jsonDouble(j, "seconds", what, 0, 0, 1e9);
    if (s > 0) sum += static_cast<double>(jsonUint(j, "bytes", what, 0)) / s / 1e6;
  }
  return sum;
}

// Rank 0: the result from what every rank stored. `phases` 1: only the isolated phase (a run
// that failed after it; the congested figures stay NaN), read with `timeoutMs`.
CongestionResult gatherResult(const CongestionRun& r, std::vector<std::string> nodes,
                              report::RunInfo info, int phases = 2, int64_t timeoutMs = -1) {
  if (timeoutMs < 0) timeoutMs = r.p.timeoutMs;
  const CongestionParams& p = r.p;
  CongestionResult res;
  res.ranks = r.c.size();
  res.nodes = std::move(nodes);
  res.plan = r.plan;
  res.pattern = p.pattern;
  res.seed = p.seed;
  res.victimFraction = p.victims;
  res.aggBytes = p.aggBytes;
  res.aggWindow = p.window;
  res.aggStreams = streamCount(r.plan, p.pattern);
  res.phaseLimitSec = p.phaseSec;
  res.info = std::move(info);
  res.phasesMeasured = phases;
  res.isolatedSeconds = leaderSeconds(r.store, "cong/isolated_s", r.leader, timeoutMs);
  if (phases > 1)
    res.congestedSeconds = leaderSeconds(r.store, "cong/congested_s", r.leader, timeoutMs);
  Grids grid;
  readVictimGrids(r, grid, res.info, phases, timeoutMs);
  res.metrics = victimMetrics(p, r.v, grid);
  if (phases > 1) res.aggMBs = aggressorRate(r);
  return res;
}

CongestionResult runIn(const CongestionParams& p, const launch::RankInfo& info,
                       rendezvous::Store& store, std::string& stage, CongestionResult* partial) {
  const int me = info.rank, n = info.worldSize;
  const int nVictims = victimCount(n, p.victims);
  if (p.latBytes < 1 || p.bwBytes < 1 || p.aggBytes < 1)
    throw UsageError("congestion: message sizes must be at least 1 byte");
  const int64_t start = nowNs();
  Layout L;
  L.data = std::max({p.latBytes, p.bwBytes, p.aggBytes, uint64_t{64}});
  engine::testHold("connect", me, stage);
  Communicator c(store, me, n, info.host, congestionCommOptions(p, me, n, L));
  c.setStage(stage);
  checkReceiveQueue(c, p);
  const PlacementFacts placement = placeRank(c, p.placement, info);
  std::vector<std::string> nodes;
  const CongestionPlan plan = agreePlan(c, store, p, nVictims, nodes);
  c.barrier();
  const double wireup = static_cast<double>(nowNs() - start) / 1e9;
  CongestionRun r{p,
                  store,
                  c,
                  stage,
                  L,
                  plan,
                  victimCounts(p),
                  me,
                  std::binary_search(plan.victims.begin(), plan.victims.end(), me),
                  plan.ring.at(0)};
  report::RunInfo ri;
  if (me == 0) {
    ri =
        rankRunInfo(c, p, info, congestionExtra(p, plan, r.v, wireup, store.describe()), placement);
    ri.window = p.window;
  }
  r.isolatedPhase();
  // Rank 0 keeps the isolated phase's figures (in the store since its barrier) before any rank
  // starts the congested phase: after a rank's failure the store answers every get with that
  // failure, so a congested phase that fails still leaves them for the document with the error.
  if (me == 0 && partial) *partial = gatherResult(r, nodes, ri, 1);
  r.enter("barrier after reading the isolated phase");
  c.barrier();
  try {
    r.congestedPhase();
  } catch (const std::exception&) {
    if (me == 0 && partial) partial->failed = true;
    throw;
  }
  CongestionResult res;
  if (me == 0) res = gatherResult(r, std::move(nodes), std::move(ri));
  r.enter("teardown");
  engine::testHold("teardown", me, stage);
  c.barrier();
  return res;
}

}  // namespace

CongestionResult runCongestion(const CongestionParams& p, const launch::RankInfo& info,
                               rendezvous::Store& store, CongestionResult* partial) {
  std::string stage = "connect";
  try {
    return runIn(p, info, store, stage, partial);
  } catch (const std::exception& e) {
    engine::rethrowDuring(e, stage);
  }
}

}  // namespace rdmabench::collective
