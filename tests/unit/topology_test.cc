// Topology math of the collectives for every world size up to 1024: trees span all ranks,
// partners are symmetric, Rabenseifner's blocks partition the vector, the wire-up order neither
// deadlocks nor chains the ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>

#include "collective/model.h"
#include "collective/outliers.h"
#include "collective/topology.h"

namespace rdmabench::collective {
namespace {

TEST(Topology, Logs) {
  EXPECT_EQ(ceilLog2(1), 0);
  EXPECT_EQ(ceilLog2(2), 1);
  EXPECT_EQ(ceilLog2(5), 3);
  EXPECT_EQ(ceilLog2(1024), 10);
  EXPECT_EQ(floorPow2(7), 4);
  EXPECT_EQ(floorPow2(8), 8);
}

TEST(Topology, BinomialTreeSpansAndIsConsistent) {
  for (int n = 1; n <= 1024; ++n) {
    std::set<int> seen{0};
    int maxDepth = 0;
    for (int r = 0; r < n; ++r) {
      for (int c : treeChildren(r, n)) {
        ASSERT_LT(c, n);
        ASSERT_EQ(treeParent(c, n), r) << "n=" << n << " child " << c;
        ASSERT_TRUE(seen.insert(c).second) << "rank " << c << " has two parents, n=" << n;
      }
      int depth = 0;
      for (int x = r; x != 0; x = treeParent(x, n))
        ++depth;
      maxDepth = std::max(maxDepth, depth);
    }
    ASSERT_EQ(static_cast<int>(seen.size()), n) << "tree does not span n=" << n;
    ASSERT_LE(maxDepth, ceilLog2(n));
    ASSERT_LE(treeChildren(0, n).size(), static_cast<size_t>(ceilLog2(n)));
  }
  EXPECT_EQ(treeChildren(0, 8), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(treeChildren(4, 8), (std::vector<int>{5, 6}));
  EXPECT_EQ(treeParent(6, 8), 4);
  EXPECT_EQ(treeChildren(4, 5), std::vector<int>{});
}

TEST(Topology, DisseminationRoundsMatch) {
  for (int n = 1; n <= 1024; n += (n < 40 ? 1 : 37)) {
    for (int r = 0; r < n; ++r) {
      auto rounds = disseminationRounds(r, n);
      ASSERT_EQ(static_cast<int>(rounds.size()), ceilLog2(n));
      for (size_t k = 0; k < rounds.size(); ++k) {
        // Whoever I send to in round k receives from me in round k.
        ASSERT_EQ(disseminationRounds(rounds[k].sendTo, n)[k].recvFrom, r);
        ASSERT_NE(rounds[k].sendTo, r);
      }
    }
  }
}

TEST(Topology, FoldAndRecursiveDoublingAreSymmetric) {
  for (int n = 1; n <= 1024; ++n) {
    int active = 0;
    for (int r = 0; r < n; ++r) {
      Fold f = fold(r, n);
      if (f.foldPeer >= 0) {
        Fold g = fold(f.foldPeer, n);
        ASSERT_EQ(g.foldPeer, r);
        ASSERT_NE(f.sendsFirst, g.sendsFirst);
      }
      if (f.virtualRank >= 0) {
        ++active;
        ASSERT_EQ(realRank(f.virtualRank, n), r);
      }
      auto partners = recursiveDoublingPartners(r, n);
      for (size_t i = 0; i < partners.size(); ++i)
        ASSERT_EQ(recursiveDoublingPartners(partners[i], n)[i], r) << "n=" << n;
    }
    ASSERT_EQ(active, floorPow2(n));
  }
}

TEST(Topology, BlocksPartition) {
  for (uint64_t total : {0ull, 1ull, 7ull, 100ull, 1000003ull})
    for (int b : {1, 3, 8, 1024}) {
      uint64_t next = 0;
      for (int i = 0; i < b; ++i) {
        Range r = blockRange(total, b, i);
        ASSERT_EQ(r.offset, next);
        next += r.count;
      }
      ASSERT_EQ(next, total);
      EXPECT_EQ(blocksRange(total, b, 0, b).count, total);
    }
}

TEST(Topology, RabenseifnerOwnsOneBlockAndPartnersAgree) {
  for (int n = 1; n <= 1024; ++n) {
    for (int r = 0; r < n; ++r) {
      auto steps = rabenseifnerSteps(r, n);
      Fold f = fold(r, n);
      if (f.virtualRank < 0) {
        ASSERT_TRUE(steps.empty());
        continue;
      }
      ASSERT_EQ(static_cast<int>(steps.size()), ceilLog2(f.pof2));
      if (!steps.empty()) {
        ASSERT_EQ(steps.back().keepFirst, f.virtualRank);
        ASSERT_EQ(steps.back().keepLast, f.virtualRank + 1);
      }
      for (size_t i = 0; i < steps.size(); ++i) {
        auto other = rabenseifnerSteps(steps[i].peer, n);
        ASSERT_EQ(other[i].peer, r);
        // What I send is what my partner keeps, and vice versa.
        ASSERT_EQ(other[i].keepFirst, steps[i].sendFirst);
        ASSERT_EQ(other[i].sendFirst, steps[i].keepFirst);
      }
    }
  }
}

TEST(Topology, PeersAreLogarithmic) {
  for (int n : {1, 2, 3, 16, 100, 1024})
    for (int r = 0; r < n; r += std::max(1, n / 17)) {
      for (const char* a : {"tree", "rd", "rabenseifner", "barrier"}) {
        auto p = peersFor(a, r, n);
        ASSERT_LE(p.size(), static_cast<size_t>(2 * ceilLog2(n) + 1)) << a << " n=" << n;
        ASSERT_TRUE(std::is_sorted(p.begin(), p.end()));
        ASSERT_EQ(std::count(p.begin(), p.end(), r), 0);
      }
      ASSERT_LE(peersFor("ring", r, n).size(), 2u);
    }
  EXPECT_THROW(peersFor("bogus", 0, 4), std::exception);
}

// Wire-up as the transports' blocking accepts play it: every rank works through its peers in
// its own order, and a pair connects in the round where each side has reached the other (both
// sides of a pair are waited for, as the socket transport's accept side waits). Returns the
// number of rounds, the longest chain of waits, or -1 when a round connects nothing (deadlock).
int wireupRounds(int n, const std::function<std::vector<int>(int)>& orderOf) {
  std::vector<std::vector<int>> order(n);
  std::vector<size_t> next(n, 0);
  size_t left = 0;
  for (int r = 0; r < n; ++r) {
    order[r] = orderOf(r);
    left += order[r].size();
  }
  int rounds = 0;
  while (left > 0) {
    std::vector<int> done;
    for (int r = 0; r < n; ++r) {
      if (next[r] == order[r].size()) continue;
      const int p = order[r][next[r]];
      if (r < p && next[p] < order[p].size() && order[p][next[p]] == r) done.push_back(r);
    }
    if (done.empty()) return -1;
    for (int r : done) {
      const int p = order[r][next[r]];
      ++next[r];
      ++next[p];
      left -= 2;
    }
    ++rounds;
  }
  return rounds;
}

// The union of every algorithm's peers, as `allreduce --algo auto` and `pairs` connect them.
std::vector<int> allPeers(int r, int n) {
  std::set<int> s;
  for (const char* a : {"tree", "ring", "rd", "rabenseifner", "barrier"})
    for (int p : peersFor(a, r, n))
      s.insert(p);
  return std::vector<int>(s.begin(), s.end());
}

TEST(Topology, WireupOrderIsDeadlockFreeAndLogarithmic) {
  for (int n : {2, 3, 5, 8, 13, 64, 100, 255, 256, 257, 1000, 1024}) {
    const int rounds = wireupRounds(n, [n](int r) { return wireupOrder(r, allPeers(r, n)); });
    ASSERT_GT(rounds, 0) << "n=" << n << ": deadlock";
    // At most two rounds per distinct difference hi - lo; the topologies have O(log n) of them.
    std::set<int> diffs;
    for (int r = 0; r < n; ++r)
      for (int p : allPeers(r, n))
        diffs.insert(std::abs(p - r));
    EXPECT_LE(rounds, 2 * static_cast<int>(diffs.size())) << "n=" << n;
    EXPECT_LE(rounds, 8 * ceilLog2(n) + 4) << "n=" << n;
    for (int r = 0; r < n; r += std::max(1, n / 7)) {  // a permutation of the peers
      auto o = wireupOrder(r, allPeers(r, n));
      std::sort(o.begin(), o.end());
      ASSERT_EQ(o, allPeers(r, n));
    }
  }
}

TEST(Topology, AscendingWireupOrderChainsEveryRank) {
  // Why wireupOrder exists: ascending rank order is deadlock-free too, but its chain of waits
  // runs through all n ranks (0-1, then 1-2, ...), n sequential handshakes.
  const int n = 256;
  const int ascending = wireupRounds(n, [n](int r) { return allPeers(r, n); });
  ASSERT_GT(ascending, 0);
  EXPECT_GE(ascending, n - 1);
  EXPECT_LT(wireupRounds(n, [n](int r) { return wireupOrder(r, allPeers(r, n)); }), n / 4);
}

TEST(Model, ChoosesLatencyOptimalSmallAndBandwidthOptimalLarge) {
  CostModel m{10.0, 0.001, 0.0002};  // 10 us, 1 GB/s, 5 GB/s reductions
  EXPECT_EQ(chooseAlgorithm(m, 16, 8), "rd");
  std::string big = chooseAlgorithm(m, 16, 64 << 20);
  EXPECT_TRUE(big == "rabenseifner" || big == "ring") << big;
  EXPECT_GT(predictUs(m, "ring", 16, 8), predictUs(m, "rd", 16, 8));
  EXPECT_EQ(predictUs(m, "tree", 1, 1000), 0);
}

TEST(Model, PicksRecursiveDoublingAtEightBytesForEveryWorld) {
  // What the allreduce command's default (--algo auto) promises at 8 B (docs/collectives.md):
  // rd, never tree's 2 ceil(lg p) dependent messages, while alpha is far above the time to move
  // and reduce 8 B; fold worlds (non-powers of two) included. alpha 0.5-100 us, 100 MB/s-100 GB/s
  // links, reductions at 0.1-50 GB/s. (At 10 MB/s with alpha 0.5 us ring wins at p = 3.)
  for (double a : {0.5, 3.0, 100.0})
    for (double b : {1e-5, 1e-3, 1e-2})
      for (double g : {2e-5, 1e-3, 1e-2})
        for (int p = 2; p <= 130; ++p)
          ASSERT_EQ(chooseAlgorithm(CostModel{a, b, g}, p, 8), "rd")
              << "p=" << p << " alpha=" << a << " beta=" << b << " gamma=" << g;
}

TEST(Outliers, SlowHostIsFlaggedEvenWhenHalfTheLinksAreSlow) {
  // 4 ranks in a ring; rank 2 adds 500 us to every link it is part of.
  std::vector<LinkLatency> links;
  for (int r = 0; r < 4; ++r) {
    for (int d : {(r + 1) % 4, (r + 3) % 4}) {
      double us = 20 + r * 0.5 + ((r == 2 || d == 2) ? 500 : 0);
      links.push_back({r, d, us});
    }
  }
  OutlierReport o = findOutliers(links, 4, 5);
  EXPECT_EQ(o.slowRanks, std::vector<int>{2});
  for (size_t i = 0; i < links.size(); ++i)
    EXPECT_EQ(o.outlier[i], links[i].src == 2 || links[i].dst == 2) << i;
  // A quiet ring has none.
  for (auto& l : links)
    l.us = 20 + l.src * 0.1;
  o = findOutliers(links, 4, 5);
  EXPECT_TRUE(o.slowRanks.empty());
  EXPECT_EQ(std::count(o.outlier.begin(), o.outlier.end(), true), 0);
}

TEST(Outliers, NoisyHealthyLinksAreNotFlagged) {
  // Medians from a CI run in a TCG VM (4 netns hosts, event mode, host 2 behind tbf): the
  // healthy links wander 22..44 us while each host's fastest link is 22..25 us, so a threshold
  // from the per-host minima alone (23.7 + 5 x 2.4 = 35.5 us) flagged two healthy links.
  std::vector<LinkLatency> links = {{3, 0, 22.372},  {0, 1, 24.967},  {1, 0, 36.2235},
                                    {0, 3, 43.851},  {3, 2, 4456.35}, {1, 2, 4456.79},
                                    {2, 1, 4457.07}, {2, 3, 4457.71}};
  OutlierReport o = findOutliers(links, 4, 5);
  EXPECT_EQ(o.slowRanks, std::vector<int>{2});
  EXPECT_GT(o.linkMadUs, 5);
  for (size_t i = 0; i < links.size(); ++i)
    EXPECT_EQ(o.outlier[i], links[i].src == 2 || links[i].dst == 2) << i;
}

}  // namespace
}  // namespace rdmabench::collective
