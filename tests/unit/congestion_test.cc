// The pure parts of `rdmabench congestion` (collective/congestion_plan.h) and its report's
// figures (collective/congestion_report.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "collective/congestion_plan.h"
#include "collective/congestion_report.h"
#include "common/error.h"

namespace rdmabench::collective {
namespace {

std::vector<std::string> nodes(int count, int perNode) {
  std::vector<std::string> v;
  for (int i = 0; i < count * perNode; ++i)
    v.push_back("n" + std::to_string(i / perNode));
  return v;
}

TEST(CongestionSplit, VictimCountIsCeilOfTheFractionAndNeedsTwoVictimsAndTwoAggressors) {
  EXPECT_EQ(victimCount(6, 0.2), 2);
  EXPECT_EQ(victimCount(10, 0.2), 2);
  EXPECT_EQ(victimCount(100, 0.2), 20);
  EXPECT_EQ(victimCount(4, 0.5), 2);
  EXPECT_THROW(victimCount(4, 0.2), UsageError);  // 1 victim
  EXPECT_THROW(victimCount(2, 0.5), UsageError);  // 1 victim
  EXPECT_THROW(victimCount(3, 0.9), UsageError);  // no aggressor
  EXPECT_THROW(victimCount(3, 0.5), UsageError);  // 1 aggressor: nobody to stream to
  EXPECT_EQ(victimCount(4, 0.5), 2);              // 2 and 2: the smallest split
  EXPECT_THROW(victimCount(10, 0), UsageError);
  EXPECT_THROW(victimCount(10, 1), UsageError);
  try {
    victimCount(4, 0.2);
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--victims 0.2"), std::string::npos) << m;
    EXPECT_NE(m.find("at least 2 victims and 2 aggressors"), std::string::npos) << m;
  }
}

TEST(CongestionSplit, ShuffleIsAPermutationAndDependsOnTheSeed) {
  std::vector<int> v{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto a = seededShuffle(v, 1), b = seededShuffle(v, 1), c = seededShuffle(v, 2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::sort(a.begin(), a.end());
  EXPECT_EQ(a, v);
}

TEST(CongestionSplit, VictimsSpreadOverNodesAndEveryRankHasOneRole) {
  for (uint64_t seed : {1, 2, 3, 99}) {
    const auto nodeOf = nodes(3, 2);  // 3 nodes x 2 ranks
    CongestionPlan p = planCongestion(nodeOf, 2, seed);
    ASSERT_EQ(p.victims.size(), 2u);
    ASSERT_EQ(p.aggressors.size(), 4u);
    EXPECT_NE(nodeOf[p.victims[0]], nodeOf[p.victims[1]]) << "seed " << seed;
    std::set<int> all(p.victims.begin(), p.victims.end());
    all.insert(p.aggressors.begin(), p.aggressors.end());
    EXPECT_EQ(all.size(), 6u);
    EXPECT_TRUE(std::is_sorted(p.victims.begin(), p.victims.end()));
    std::vector<int> ring = p.ring;
    std::sort(ring.begin(), ring.end());
    EXPECT_EQ(ring, p.victims);
    // The incast target is an aggressor on a node that hosts a victim.
    EXPECT_TRUE(std::binary_search(p.aggressors.begin(), p.aggressors.end(), p.incastTarget));
    int sharing = 0;
    for (int v : p.victims)
      sharing += nodeOf[v] == nodeOf[p.incastTarget];
    EXPECT_GE(sharing, 1);
  }
  // 8 nodes x 4 ranks, 20%: 7 victims on 7 distinct nodes.
  const auto nodeOf = nodes(8, 4);
  CongestionPlan p = planCongestion(nodeOf, victimCount(32, 0.2), 5);
  std::set<std::string> used;
  for (int v : p.victims)
    used.insert(nodeOf[v]);
  EXPECT_EQ(p.victims.size(), 7u);
  EXPECT_EQ(used.size(), 7u);
  // One rank per node: whole nodes are victims; the target never shares a node with one.
  CongestionPlan q = planCongestion(nodes(10, 1), 2, 7);
  EXPECT_EQ(q.victims.size(), 2u);
  EXPECT_THROW(planCongestion(nodes(3, 1), 1, 1), std::invalid_argument);
  EXPECT_THROW(planCongestion(nodes(3, 1), 3, 1), std::invalid_argument);
}

TEST(CongestionSplit, RingNeighboursAndAggressorPeers) {
  CongestionPlan p;
  p.victims = {1, 4, 7};
  p.ring = {4, 1, 7};
  p.aggressors = {0, 2, 3, 5, 6};
  p.incastTarget = 3;
  EXPECT_EQ(ringNeighbours(p, 4).left, 7);
  EXPECT_EQ(ringNeighbours(p, 4).right, 1);
  EXPECT_EQ(ringNeighbours(p, 7).right, 4);
  EXPECT_THROW(ringNeighbours(p, 0), std::invalid_argument);
  // Incast: everyone else into 3; 3 receives from all the others.
  EXPECT_EQ(aggressorTargets(p, CongestionPattern::kIncast, 0), std::vector<int>{3});
  EXPECT_TRUE(aggressorTargets(p, CongestionPattern::kIncast, 3).empty());
  EXPECT_EQ(aggressorSources(p, CongestionPattern::kIncast, 3), (std::vector<int>{0, 2, 5, 6}));
  EXPECT_TRUE(aggressorSources(p, CongestionPattern::kIncast, 0).empty());
  EXPECT_TRUE(aggressorTargets(p, CongestionPattern::kIncast, 1).empty());  // a victim
  // All-to-all: every aggressor with every other, both ways.
  EXPECT_EQ(aggressorTargets(p, CongestionPattern::kAlltoall, 5), (std::vector<int>{0, 2, 3, 6}));
  EXPECT_EQ(aggressorSources(p, CongestionPattern::kAlltoall, 5), (std::vector<int>{0, 2, 3, 6}));
  // Streams out = streams in over all aggressors, for both patterns.
  for (auto pat : {CongestionPattern::kIncast, CongestionPattern::kAlltoall}) {
    size_t out = 0, in = 0;
    for (int a : p.aggressors) {
      out += aggressorTargets(p, pat, a).size();
      in += aggressorSources(p, pat, a).size();
    }
    EXPECT_EQ(out, in);
  }
  EXPECT_EQ(parseCongestionPattern("alltoall"), CongestionPattern::kAlltoall);
  EXPECT_THROW(parseCongestionPattern("bcast"), UsageError);
}

TEST(CongestionStats, QuantileGridAndPooledPercentiles) {
  std::vector<double> s;
  for (int i = 1; i <= 1000; ++i)
    s.push_back(i);
  auto g = quantileGrid(s);
  ASSERT_EQ(g.size(), static_cast<size_t>(kGridPoints));
  EXPECT_EQ(g.front(), 1);
  EXPECT_EQ(g[100], 500);  // p50, nearest rank
  EXPECT_EQ(g[198], 990);  // p99
  EXPECT_EQ(g.back(), 1000);
  // Two victims, one ten times slower: the pooled p50 sits between, the p99 in the slow one.
  std::vector<double> slow;
  for (double x : s)
    slow.push_back(10 * x);
  std::vector<std::vector<double>> grids{g, quantileGrid(slow)};
  EXPECT_NEAR(pooledQuantile(grids, 0.99), 9800, 200);
  EXPECT_GT(pooledQuantile(grids, 0.5), 500);
  EXPECT_TRUE(std::isnan(pooledQuantile({}, 0.5)));
  EXPECT_TRUE(quantileGrid({}).empty());
}

TEST(CongestionStats, ImpactFactorAndFigures) {
  EXPECT_DOUBLE_EQ(impactFactor(10, 25), 2.5);
  EXPECT_DOUBLE_EQ(impactFactor(10, 10), 1);
  EXPECT_TRUE(std::isnan(impactFactor(0, 10)));
  EXPECT_TRUE(std::isnan(impactFactor(10, std::nan(""))));
  CongestionMetric bw;
  bw.bandwidth = true;
  bw.bytesPerIteration = 2 * 8 * 131072;
  // 2 MiB per 1000 us = 2097.152 MB/s; twice the time = half the rate = impact 2.
  EXPECT_DOUBLE_EQ(congestionFigure(bw, 1000), 2097.152);
  EXPECT_DOUBLE_EQ(congestionFigure(bw, 1000) / congestionFigure(bw, 2000),
                   impactFactor(1000, 2000));
  CongestionMetric lat;
  EXPECT_DOUBLE_EQ(congestionFigure(lat, 3.5), 3.5);
}

TEST(CongestionReport, JsonAndCsvCarryTheSplitAndTheFactors) {
  CongestionResult r;
  r.ranks = 6;
  r.nodes = nodes(3, 2);
  r.plan = planCongestion(r.nodes, 2, 1);
  r.seed = 1;
  r.victimFraction = 0.2;
  CongestionMetric m;
  m.name = "RR Two-sided Lat (8 B)";
  m.isoP50Us = 10;
  m.isoP99Us = 20;
  m.conP50Us = 30;
  m.conP99Us = 100;
  r.metrics.push_back(m);
  std::ostringstream js;
  writeCongestion(js, "json", r);
  auto j = nlohmann::json::parse(js.str());
  EXPECT_EQ(j["split"]["pattern"], "incast");
  EXPECT_EQ(j["split"]["victims"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["metrics"][0]["impact"]["p50"].get<double>(), 3);
  EXPECT_DOUBLE_EQ(j["metrics"][0]["impact"]["p99"].get<double>(), 5);
  std::ostringstream csv;
  writeCongestion(csv, "csv", r);
  EXPECT_NE(csv.str().find("RR Two-sided Lat (8 B),us,"), std::string::npos) << csv.str();
  std::ostringstream bad;
  EXPECT_THROW(writeCongestion(bad, "osu", r), UsageError);
  // The table's header names this command and its units, not ping-pong latency's.
  r.info.test = report::Test::kCongestion;
  std::ostringstream table;
  writeCongestion(table, "table", r);
  const std::string t = table.str();
  EXPECT_NE(t.find(": congestion, victims' random ring alone vs under aggressor traffic"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("# units: latency in microseconds, bandwidth in MB/s"), std::string::npos) << t;
  EXPECT_EQ(t.find("t_typical"), std::string::npos) << t;
  EXPECT_EQ(t.find("half round trip"), std::string::npos) << t;
}

}  // namespace
}  // namespace rdmabench::collective
