// Issue #26: the timed iterations of allreduce (every algorithm, planned per size) and of the
// dissemination barrier neither allocate nor format. Allocations are counted by alloc_count.h
// (integration_tests replaces the global operator new); each rank (forked by
// launch::runLocal, as `--np`) runs warmup iterations, then counts the allocations of measured
// iterations, which must be zero. Formatting a std::string of an error text allocates (longer
// than the short-string buffer), so it is covered too. Socket transport, event mode.
#include <gtest/gtest.h>

#include <cstdio>

#include "alloc_count.h"
#include "collective/allreduce.h"
#include "collective/bench.h"
#include "collective/bench_run.h"
#include "collective/comm.h"
#include "collective/congestion_traffic.h"
#include "collective/pairs_loops.h"
#include "collective/topology.h"
#include "launch/launch.h"
#include "transport/probe.h"

namespace rdmabench::collective {
namespace {

constexpr int kMeasured = 50;

// One rank: every algorithm at two counts, then the barrier; returns the allocations counted
// in the measured iterations (2 warmup iterations first: the communicator's queues grow once).
int countAllocations(rendezvous::Store& store, const launch::RankInfo& info, int n) {
  CollectiveParams p;
  p.transport = "socket";
  p.device.progress = transport::ProgressMode::kEvent;
  p.timeoutMs = 30'000;
  p.device.localHost = "127.0.0.1";
  std::vector<int> peers;
  for (const auto& a : allreduceAlgorithms())
    for (int q : peersFor(a, info.rank, n))
      peers.push_back(q);
  for (int q : peersFor("barrier", info.rank, n))
    peers.push_back(q);
  const uint64_t maxCount = 1000;
  Communicator c(store, info.rank, n, "testhost",
                 commOptions(p, peers, allreduceDataBytes(info.rank, n, maxCount * 8)));
  c.setStage("allocation check");
  uint64_t counted = 0;
  for (const auto& name : allreduceAlgorithms())
    for (uint64_t count : {uint64_t{13}, maxCount}) {
      const AllreducePlan plan(info.rank, n, parseAlgorithm(name), count, DType::kFloat64,
                               ReduceOp::kSum);
      for (int i = 0; i < 2; ++i) {
        plan.run(c);
        c.barrier();
      }
      c.setWarmup(false);
      testing::startCountingAllocations();
      for (int i = 0; i < kMeasured; ++i) {
        plan.run(c);
        c.barrier();
      }
      const uint64_t allocations = testing::stopCountingAllocations();
      // Every rank is done counting before any goes on (and, after the last size, closes its
      // connections: the socket transport formats the EOF it sees then, outside any loop).
      c.barrier();
      if (allocations)
        fprintf(stderr, "rank %d: %s, %llu elements: %llu allocations in %d iterations\n",
                info.rank, name.c_str(), static_cast<unsigned long long>(count),
                static_cast<unsigned long long>(allocations), kMeasured);
      counted += allocations;
    }
  return counted ? 2 : 0;
}

TEST(CollectiveTimedLoop, NoAllocationPerIteration) {
  transport::BackendStatus st = transport::probeBackend("socket");
  if (!st.usable) GTEST_SKIP() << "socket not usable here: " << st.reason;
  for (int n : {2, 3, 4, 5}) {
    launch::RankInfo base;
    base.runId = "alloc-" + std::to_string(n);
    base.source = "np";
    base.host = "testhost";
    int rc = launch::runLocal(n, base, [&](const launch::RankInfo& info) {
      try {
        std::unique_ptr<rendezvous::TcpStoreServer> server;
        auto store = launch::connectStore(info, 30'000, server);
        int bad = countAllocations(*store, info, n);
        store->leave(true, "");
        return bad;
      } catch (const std::exception& e) {
        fprintf(stderr, "rank %d: %s\n", info.rank, e.what());
        return 1;
      }
    });
    EXPECT_EQ(rc, 0) << n << " ranks: 2 = allocations in the timed loop (see stderr), 1 = error";
  }
}

// pairs, ring and congestion run the measurement core's loops (engine/timed_loop.h, issue #26):
// each loop, on 2 ranks, at kFew then kMany measured iterations. An allocation per iteration
// makes the longer run allocate more (what a loop allocates once, its sample buffer, is the
// same for both); each loop must also record exactly its measured iterations.
constexpr uint64_t kFew = 20, kMany = 400;

// The allocations of one run of every loop with `iters` measured iterations (2 warmup); -1
// when a loop recorded a count other than `iters`.
int64_t loopAllocations(Communicator& c, uint64_t iters) {
  const int me = c.rank(), peer = 1 - me;
  constexpr uint64_t kLat = 8, kBw = 4096, kWindow = 16, kWarm = 2;
  bool counts = true;
  uint64_t allocations = 0;
  auto counted = [&](auto&& fn) {
    c.barrier();
    testing::startCountingAllocations();
    fn();
    allocations += testing::stopCountingAllocations();
    c.barrier();
  };
  detail::PairLatency lat;
  lat.run.bytes = kLat;
  lat.run.warmup = kWarm;
  lat.run.iterations = iters;
  detail::PairBandwidth bw;
  bw.run.bytes = kBw;
  bw.run.window = kWindow;
  bw.run.warmup = kWarm;
  bw.run.iterations = iters;
  counted([&] {
    const engine::PingPongResult r = detail::pairLatency(c, peer, me == 0, lat);
    if (me == 0) counts = counts && r.samples.count() == iters;
  });
  counted([&] {
    const engine::BandwidthResult r = detail::pairBandwidth(c, peer, me == 0, bw);
    if (me == 0) counts = counts && r.megabytesPerSec > 0;
  });
  counted([&] {
    counts = counts && detail::ringPhase(c, peer, peer, kLat, kWarm, iters).count == iters;
  });
  counted([&] {
    counts =
        counts &&
        detail::ringExchange(c, RingNeighbours{peer, peer}, kLat, kWindow, kWarm, iters).size() ==
            iters;
  });
  return counts ? static_cast<int64_t>(allocations) : -1;
}

int countLoopAllocations(rendezvous::Store& store, const launch::RankInfo& info) {
  CollectiveParams p;
  p.transport = "socket";
  p.device.progress = transport::ProgressMode::kEvent;
  p.timeoutMs = 30'000;
  p.device.localHost = "127.0.0.1";
  Communicator c(store, info.rank, 2, "testhost", commOptions(p, {1 - info.rank}, 64 * 1024));
  c.setStage("allocation check");
  loopAllocations(c, kFew);  // the communicator's queues grow once
  const int64_t few = loopAllocations(c, kFew), many = loopAllocations(c, kMany);
  if (few < 0 || many < 0) {
    fprintf(stderr, "rank %d: a loop recorded a wrong number of iterations\n", info.rank);
    return 3;
  }
  if (many > few) {
    fprintf(stderr, "rank %d: %lld allocations at %llu iterations, %lld at %llu\n", info.rank,
            static_cast<long long>(many), static_cast<unsigned long long>(kMany),
            static_cast<long long>(few), static_cast<unsigned long long>(kFew));
    return 2;
  }
  return 0;
}

TEST(CollectiveTimedLoop, PairsRingCongestionLoopsAllocateNothingPerIteration) {
  transport::BackendStatus st = transport::probeBackend("socket");
  if (!st.usable) GTEST_SKIP() << "socket not usable here: " << st.reason;
  launch::RankInfo base;
  base.runId = "alloc-loops";
  base.source = "np";
  base.host = "testhost";
  int rc = launch::runLocal(2, base, [&](const launch::RankInfo& info) {
    try {
      std::unique_ptr<rendezvous::TcpStoreServer> server;
      auto store = launch::connectStore(info, 30'000, server);
      int bad = countLoopAllocations(*store, info);
      store->leave(true, "");
      return bad;
    } catch (const std::exception& e) {
      fprintf(stderr, "rank %d: %s\n", info.rank, e.what());
      return 1;
    }
  });
  EXPECT_EQ(rc, 0) << "2 = allocations per iteration, 3 = wrong sample count (see stderr), 1 = "
                      "error";
}

}  // namespace
}  // namespace rdmabench::collective
