#include "collective/bench.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collective/allreduce.h"
#include "collective/bench_run.h"
#include "collective/comm.h"
#include "collective/pairs_loops.h"
#include "collective/rank_placement.h"
#include "collective/sharp/sharp.h"
#include "collective/topology.h"
#include "common/clock.h"
#include "common/error.h"

namespace rdmabench::collective {

using nlohmann::json;

namespace {

std::vector<int> peersNeeded(const CollectiveParams& p, int rank, int n) {
  std::set<int> s;
  auto add = [&](const std::string& a) {
    for (int x : peersFor(a, rank, n))
      s.insert(x);
  };
  add("barrier");
  add("tree");  // agreeing on iteration counts and the slowest rank per iteration
  if (p.test == report::Test::kRing) add("ringpingpong");
  if (p.algo == "sharp") add("tree");  // SHARP's out-of-band collectives (sharp/oob.h)
  if (p.test == report::Test::kAllreduce && p.algo != "sharp") {
    if (p.algo == "auto") {
      for (const auto& a : allreduceAlgorithms())
        add(a);
      if (n > 1 && rank <= 1) s.insert(1 - rank);  // the model's ping-pong pair
    } else {
      add(p.algo);
    }
  }
  s.erase(rank);
  return std::vector<int>(s.begin(), s.end());
}

// The data area this rank needs and what it is for (named when it cannot be allocated).
// SHARP: [0, sharpRegion) input and result (one sharp_coll_reg_mr), then the staging area of
// the out-of-band collectives.
CommOptions sizedCommOptions(const CollectiveParams& p, int me, int n, bool useSharp,
                             uint64_t sharpRegion) {
  CommOptions co = commOptions(p, peersNeeded(p, me, n), 64);
  uint64_t maxBytes = 0;
  for (uint64_t b : p.sizes)
    maxBytes = std::max(maxBytes, b);
  if (useSharp) {
    co.dataBytes = sharpRegion + sharp::kStageBytes;
    co.bufferFor = fmt::format("SHARP {} of up to {} bytes: input, result and staging",
                               toString(p.test), maxBytes);
  } else if (p.test == report::Test::kAllreduce) {
    // --algo auto's cost model ping-pongs up to 64 KiB on the engine's layout (pairs_loops.h).
    co.dataBytes = std::max(allreduceDataBytes(me, n, std::max<uint64_t>(maxBytes, 65536)),
                            detail::pairLayout(65536).total());
    co.bufferFor =
        fmt::format("allreduce of up to {} bytes per rank: input, result and scratch", maxBytes);
  } else if (p.test == report::Test::kRing) {
    co.dataBytes = 6 * p.ringBytes;
    co.bufferFor = fmt::format("ring ping-pong of {} bytes", p.ringBytes);
  }
  // The untimed reductions (iteration counts, slowest rank per iteration) use the data area.
  co.dataBytes =
      std::max(co.dataBytes, allreduceDataBytes(me, n, detail::kSlowestChunk * sizeof(int64_t)));
  return co;
}

// SHARP's session over the connected ranks; its facts go to the header's extra.sharp.
std::unique_ptr<sharp::Session> openSharp(detail::BenchRun& r, uint64_t sharpRegion) {
  const int64_t t0 = nowNs();
  sharp::SessionOptions so;
  so.timeoutMs = r.p.timeoutMs;
  so.localRank = r.info.localRank;
  so.registerBytes = sharpRegion;
  so.stageOffset = sharpRegion;
  so.stageBytes = sharp::kStageBytes;
  std::unique_ptr<sharp::Session> session = sharp::open(r.c, so);
  if (r.p.test == report::Test::kAllreduce) session->checkSupported(r.p.dtype, r.p.op);
  r.extra["sharp"] = session->facts();
  r.extra["sharp"]["init_s"] = static_cast<double>(nowNs() - t0) / 1e9;
  r.c.barrier();
  return session;
}

}  // namespace

ProgressChoice chooseProgress(std::optional<transport::ProgressMode> asked,
                              const PlacementRequest& placement, const launch::RankInfo& info) {
  const int local = std::max(info.localRanks, info.localRank + 1);
  int cpus = info.source == "np" ? allowedCpuCount()
                                 : static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  bool listShared = false;
  (void)rankPlacement(placement, info.localRank, local, &listShared);
  if (listShared) {  // --cpu LIST shorter than the local ranks: the CPUs of the list
    std::set<std::string> used;
    for (int r = 0; r < local; ++r)
      used.insert(rankPlacement(placement, r, local).cpus);
    cpus = std::min(cpus, static_cast<int>(used.size()));
  }
  const bool shared = local > cpus;
  ProgressChoice c;
  c.mode = asked    ? *asked
           : shared ? transport::ProgressMode::kYield
                    : transport::ProgressMode::kBusyPoll;
  if (c.mode == transport::ProgressMode::kYield && shared)
    c.cpuShare = static_cast<double>(cpus) / local;
  if (asked || !shared) return c;
  // The note's tail: what yield mode is, the precedent, and how to choose otherwise.
  constexpr const char* kWhat =
      "busy polling with sched_yield() after every empty poll, as Open MPI's "
      "mpi_yield_when_idle; -e on for event mode, -e off to busy-poll";
  c.note = listShared ? fmt::format(
                            "auto: yield mode (--cpu {} has fewer CPUs than the {} ranks "
                            "on this host: {})",
                            placement.cpus, local, kWhat)
                      : fmt::format("auto: yield mode ({} ranks on this host share {} CPU{}: {})",
                                    local, cpus, cpus == 1 ? "" : "s", kWhat);
  return c;
}

CommOptions commOptions(const RankParams& p, std::vector<int> peers, uint64_t dataBytes) {
  CommOptions co;
  co.transport = p.transport;
  co.device = p.device;
  co.timeoutMs = p.timeoutMs;
  co.peers = std::move(peers);
  co.dataBytes = dataBytes;
  return co;
}

namespace {

// runCollective's body; `stage` follows the run for errors raised outside the waits.
CollectiveOutcome runCollectiveIn(const CollectiveParams& p, const launch::RankInfo& info,
                                  rendezvous::Store& store, report::Reporter* reporter,
                                  std::string& stage) {
  const int me = info.rank, n = info.worldSize;
  const int64_t start = nowNs();
  const bool useSharp =
      p.algo == "sharp" && (p.test == report::Test::kAllreduce || p.test == report::Test::kBarrier);
  uint64_t maxBytes = 0;
  for (uint64_t b : p.sizes)
    maxBytes = std::max(maxBytes, b);
  const uint64_t sharpRegion =
      p.test == report::Test::kAllreduce ? 2 * std::max<uint64_t>(maxBytes, 64) : 64;
  const CommOptions co = sizedCommOptions(p, me, n, useSharp, sharpRegion);
  engine::testHold("connect", me, stage);
  Communicator c(store, me, n, info.host, co);
  c.setStage(stage);
  // Bound before any timed loop; published before the barrier, so rank 0 finds every rank's.
  const PlacementFacts placement = placeRank(c, p.placement, info);
  c.barrier();
  detail::BenchRun r{p, info, c, reporter, stage, json(), placement};
  r.out.wireupSeconds = static_cast<double>(nowNs() - start) / 1e9;
  r.extra = json{{"wireup_s", r.out.wireupSeconds},
                 {"peers_per_rank", c.peers().size()},
                 {"rendezvous", store.describe()}};
  std::unique_ptr<sharp::Session> sharpSession;
  if (useSharp) {
    sharpSession = openSharp(r, sharpRegion);
    r.sharp = sharpSession.get();
  }
  if (p.test == report::Test::kBarrier)
    detail::runBarrier(r);
  else if (p.test == report::Test::kAllreduce)
    detail::runAllreduce(r);
  else if (p.test == report::Test::kRing)
    detail::runRing(r);
  else
    throw UsageError(fmt::format("unknown collective test '{}'", toString(p.test)));
  // Everyone stays until rank 0 has read every result.
  r.enter("teardown", -1);
  engine::testHold("teardown", me, stage);
  c.barrier();
  if (sharpSession) sharpSession->close();
  return r.out;
}

}  // namespace

CollectiveOutcome runCollective(const CollectiveParams& p, const launch::RankInfo& info,
                                rendezvous::Store& store, report::Reporter* reporter) {
  std::string stage = "connect";
  try {
    return runCollectiveIn(p, info, store, reporter, stage);
  } catch (const std::exception& e) {
    engine::rethrowDuring(e, stage);  // every error names the phase: connect, size N, teardown
  }
}

}  // namespace rdmabench::collective
