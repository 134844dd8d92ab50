// `rdmabench pairs`: the round-robin schedule (every unordered pair exactly once, no rank twice
// in a round), the node-vs-link classification of synthetic matrices and the verdict.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <utility>

#include "collective/pairs.h"
#include "collective/pairs_findings.h"
#include "collective/pairs_outliers.h"
#include "collective/pairs_schedule.h"
#include "collective/pairs_verdict.h"

namespace rdmabench::collective {
namespace {

TEST(PairsSchedule, EveryPairOnceNoRankTwiceInARound) {
  for (int n = 0; n <= 65; ++n) {
    std::vector<PairRound> rounds = roundRobinSchedule(n);
    const int m = n % 2 ? n + 1 : n;
    EXPECT_EQ(rounds.size(), static_cast<size_t>(n <= 1 ? 0 : m - 1)) << n;
    std::set<std::pair<int, int>> seen;
    for (const PairRound& round : rounds) {
      EXPECT_EQ(round.size(), static_cast<size_t>(n / 2)) << n;
      std::set<int> busy;
      for (auto [a, b] : round) {
        ASSERT_LT(a, b) << n;
        ASSERT_GE(a, 0) << n;
        ASSERT_LT(b, n) << n;
        EXPECT_TRUE(busy.insert(a).second) << "rank " << a << " twice in a round, n=" << n;
        EXPECT_TRUE(busy.insert(b).second) << "rank " << b << " twice in a round, n=" << n;
        EXPECT_TRUE(seen.insert({a, b}).second) << a << "-" << b << " twice, n=" << n;
      }
    }
    EXPECT_EQ(seen.size(), static_cast<size_t>(n * (n - 1) / 2)) << n;
  }
}

TEST(PairsSchedule, OddCountGivesEveryRankOneBye) {
  std::vector<PairRound> rounds = roundRobinSchedule(5);
  ASSERT_EQ(rounds.size(), 5u);
  std::multiset<int> byes;
  for (const PairRound& round : rounds) {
    std::set<int> busy;
    for (auto [a, b] : round) {
      busy.insert(a);
      busy.insert(b);
    }
    for (int r = 0; r < 5; ++r)
      if (!busy.count(r)) byes.insert(r);
  }
  EXPECT_EQ(byes, (std::multiset<int>{0, 1, 2, 3, 4}));
}

TEST(PairsSchedule, RejectsBadCounts) {
  EXPECT_THROW(roundRobinSchedule(-1), std::invalid_argument);
  EXPECT_THROW(roundRobinSchedule((1 << 16) + 1), std::invalid_argument);
}

using Matrix = std::vector<std::vector<double>>;

// n x n of `base` with a deterministic +-3% wobble (a healthy fabric is never flat).
Matrix healthy(size_t n, double base) {
  Matrix m(n, std::vector<double>(n, std::nan("")));
  for (size_t x = 0; x < n; ++x)
    for (size_t y = 0; y < n; ++y)
      if (x != y) m[x][y] = base * (1 + 0.03 * std::sin(static_cast<double>(7 * x + 3 * y)));
  return m;
}

TEST(PairsOutliers, HealthyMatrixHasNoFindings) {
  for (size_t n : {3u, 4u, 6u, 16u}) {
    MatrixOutliers o = classifyMatrix(healthy(n, 10), 5);
    EXPECT_TRUE(o.ranked.empty()) << n;
    EXPECT_NEAR(o.nodeBaseline, 10, 0.5);
  }
}

TEST(PairsOutliers, SlowNodeIsNamedOnceNotPerLink) {
  Matrix m = healthy(6, 10);
  for (size_t y = 0; y < 6; ++y)
    if (y != 2) m[2][y] = m[y][2] = 100;  // node 2's whole row and column
  MatrixOutliers o = classifyMatrix(m, 5);
  ASSERT_EQ(o.ranked.size(), 1u);
  EXPECT_TRUE(o.ranked[0].node);
  EXPECT_EQ(o.ranked[0].src, 2);
  EXPECT_NEAR(o.ranked[0].severity, 10, 1);
}

TEST(PairsOutliers, SlowLinkIsALinkNotItsNodes) {
  Matrix m = healthy(6, 10);
  m[0][3] = m[3][0] = 80;
  MatrixOutliers o = classifyMatrix(m, 5);
  ASSERT_EQ(o.ranked.size(), 2u);
  std::set<std::pair<int, int>> links;
  for (const auto& f : o.ranked) {
    EXPECT_FALSE(f.node);
    links.insert({f.src, f.dst});
  }
  EXPECT_EQ(links, (std::set<std::pair<int, int>>{{0, 3}, {3, 0}}));
}

TEST(PairsOutliers, SlowNodeAndSlowLinkTogetherRankedBySeverity) {
  Matrix m = healthy(6, 10);
  for (size_t y = 0; y < 6; ++y)
    if (y != 2) m[2][y] = m[y][2] = 50;
  m[0][3] = 300;  // one direction only, worse than the node
  MatrixOutliers o = classifyMatrix(m, 5);
  ASSERT_EQ(o.ranked.size(), 2u);
  EXPECT_FALSE(o.ranked[0].node);
  EXPECT_EQ(o.ranked[0].src, 0);
  EXPECT_EQ(o.ranked[0].dst, 3);
  EXPECT_TRUE(o.ranked[1].node);
  EXPECT_EQ(o.ranked[1].src, 2);
}

TEST(PairsOutliers, MildlySlowerLinkBelowTheFloorIsNotFlagged) {
  Matrix m = healthy(6, 10);
  m[1][4] = 14;  // +40%: below median + 5 * median/10
  EXPECT_TRUE(classifyMatrix(m, 5).ranked.empty());
  EXPECT_EQ(classifyMatrix(m, 1).ranked.size(), 1u);
}

TEST(PairsOutliers, TwoNodesOrUnmeasuredGiveNothing) {
  Matrix two = {{std::nan(""), 1}, {100, std::nan("")}};
  EXPECT_TRUE(classifyMatrix(two, 5).ranked.empty());
  Matrix none(4, std::vector<double>(4, std::nan("")));
  EXPECT_TRUE(classifyMatrix(none, 5).ranked.empty());
  EXPECT_THROW(classifyMatrix(Matrix{{1, 2}}, 5), std::invalid_argument);
}

// The verdict (pairs_verdict.h, docs/fabric-map.md "Verdict"), known answers on synthetic maps:
// uniform, one slow node, two halves joined by a 50x slower uplink (which the node/link rule
// alone passes: every node's median is slow), bounds, and maps whose measurements lost the CPU.

// A result as runPairs builds it on rank 0: latency `lat` (us), bandwidth 1000 MB/s
// everywhere unless `bw` is given; hosts h0.., k = 5, 1000 latency iterations, 10 x 16 x 1 MiB
// of bandwidth; `lost` ordered pairs descheduled, each losing `lostUs` of CPU time (< 0: the
// amount not known, as without schedstat).
PairsResult result(const Matrix& lat, Matrix bw = {}, const PairsBounds& bounds = {},
                   const std::vector<std::pair<int, int>>& lost = {}, double lostUs = 1e5) {
  PairsResult r;
  r.latIterations = 1000;
  r.bwBytes = 1 << 20;
  r.window = 16;
  r.bwIterations = 10;
  r.ranks = static_cast<int>(lat.size());
  for (int x = 0; x < r.ranks; ++x) {
    r.hosts.push_back("h" + std::to_string(x));
    r.addresses.push_back("10.0.0." + std::to_string(x + 1));
  }
  if (bw.empty()) bw = healthy(lat.size(), 1000);
  r.latMedianUs = lat;
  r.bwMBs = bw;
  Matrix cost = bw;
  for (auto& row : cost)
    for (double& v : row)
      v = v > 0 ? 1 / v : std::nan("");
  r.outlierK = 5;
  r.latOutliers = classifyMatrix(lat, r.outlierK);
  r.bwOutliers = classifyMatrix(cost, r.outlierK);
  nlohmann::json d = nlohmann::json::array();
  for (auto [s, t] : lost)
    d.push_back(lostUs < 0 ? nlohmann::json{{"src", s}, {"dst", t}, {"involuntary_switches", 40}}
                           : nlohmann::json{{"src", s},
                                            {"dst", t},
                                            {"involuntary_switches", 40},
                                            {"steal_us", 0},
                                            {"run_delay_us", lostUs}});
  if (!lost.empty()) r.info.extra["descheduled"] = d;
  r.verdict = judgePairs(r, bounds);
  return r;
}

// Two groups {0..n/2-1} and {n/2..n-1}; links between them `factor` x slower.
Matrix halves(size_t n, double base, double factor) {
  Matrix m = healthy(n, base);
  for (size_t x = 0; x < n; ++x)
    for (size_t y = 0; y < n; ++y)
      if (x != y && (x < n / 2) != (y < n / 2)) m[x][y] *= factor;
  return m;
}

TEST(PairsVerdict, UniformMapPasses) {
  for (size_t n : {3u, 4u, 8u}) {
    PairsResult r = result(healthy(n, 6.3));
    EXPECT_FALSE(r.verdict.latCut.found) << n;
    EXPECT_FALSE(r.verdict.bwCut.found) << n;
    EXPECT_TRUE(pairsFindings(r).empty()) << n;
    EXPECT_EQ(pairsVerdictLine(r).result, PairsVerdictLine::kPass) << n;
  }
}

TEST(PairsVerdict, OneSlowNodeIsTheNodeNotACut) {
  Matrix lat = healthy(4, 6.3);
  for (size_t y = 0; y < 4; ++y)
    if (y != 3) lat[3][y] = lat[y][3] = 300;
  PairsResult r = result(lat);
  // The slow links split off node 3, but the node finding already explains every one of them.
  ASSERT_TRUE(r.verdict.latCut.found);
  EXPECT_TRUE(r.verdict.latCut.explained);
  std::vector<std::string> f = pairsFindings(r);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rfind("node 3 h3: latency", 0), 0u) << f[0];
  EXPECT_EQ(pairsVerdictLine(r).result, PairsVerdictLine::kFail);
}

TEST(PairsVerdict, HalfSlowBimodalMapFailsNamingTheCut) {
  // 6.3 us within each half, 50x (315 us) between them: the node/link rule sees nothing.
  PairsResult r = result(halves(4, 6.3, 50));
  EXPECT_TRUE(r.latOutliers.ranked.empty());
  const MatrixCut& c = r.verdict.latCut;
  ASSERT_TRUE(c.found);
  EXPECT_FALSE(c.explained);
  EXPECT_TRUE(c.confirmed);
  EXPECT_EQ(c.groups, (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(c.crossLinks, 8);
  EXPECT_EQ(c.slowCross, 8);
  EXPECT_EQ(c.slowLinks.size(), 8u);
  EXPECT_NEAR(c.slowMedian / c.fastMedian, 50, 3);
  PairsVerdictLine v = pairsVerdictLine(r);
  EXPECT_EQ(v.result, PairsVerdictLine::kFail);
  EXPECT_NE(v.text.find("latency cut: ranks {0,1} <-> {2,3} (hosts {h0, h1} <-> {h2, h3}): 8 "
                        "of 8 cross links x49.5 slower (315.6 us median vs 6.4 us; gap x"),
            std::string::npos)
      << v.text;
  EXPECT_EQ(pairsLinkFlag(r, false, 0, 2), "cut");
  EXPECT_EQ(pairsLinkFlag(r, false, 0, 1), "");
}

TEST(PairsVerdict, BimodalBandwidthOfEightNodes) {
  Matrix bw = halves(8, 12000, 1.0 / 40);  // 300 MB/s across an uplink of 12 GB/s nodes
  PairsResult r = result(healthy(8, 2), bw);
  EXPECT_TRUE(r.bwOutliers.ranked.empty());
  ASSERT_TRUE(r.verdict.bwCut.found);
  EXPECT_EQ(r.verdict.bwCut.slowCross, 32);
  EXPECT_EQ(r.verdict.bwCut.crossLinks, 32);
  EXPECT_EQ(r.verdict.bwCut.groups.size(), 2u);
  EXPECT_EQ(pairsVerdictLine(r).result, PairsVerdictLine::kFail);
}

TEST(PairsVerdict, GapBelowTheFloorIsNoCut) {
  // 2x between the halves: within what hop counts give; k = 5 needs 3x.
  EXPECT_FALSE(result(halves(4, 6.3, 2)).verdict.latCut.found);
  EXPECT_DOUBLE_EQ(cutMinGap(5), 3);
  EXPECT_DOUBLE_EQ(cutMinGap(100), 11);
}

TEST(PairsVerdict, AbsoluteBounds) {
  PairsBounds b;
  b.maxLatUs = 5;
  b.minBwMBs = 1100;
  PairsResult r = result(healthy(4, 6.3), {}, b);
  EXPECT_EQ(r.verdict.latBreaches.size(), 12u);
  EXPECT_EQ(r.verdict.bwBreaches.size(), 12u);
  PairsVerdictLine v = pairsVerdictLine(r);
  EXPECT_EQ(v.result, PairsVerdictLine::kFail);
  EXPECT_NE(v.text.find("latency above --max-lat 5 us on 12 of 12 links"), std::string::npos)
      << v.text;
  EXPECT_NE(v.text.find("bandwidth below --min-bw 1100 MB/s on 12 of 12 links"), std::string::npos)
      << v.text;
  b.maxLatUs = 100;
  b.minBwMBs = 10;
  EXPECT_EQ(pairsVerdictLine(result(healthy(4, 6.3), {}, b)).result, PairsVerdictLine::kPass);
}

TEST(PairsVerdict, AllDescheduledGivesNoVerdict) {
  // Loopback on a busy host: one link 1.7x the others, every measurement lost 100 ms of CPU
  // (the 4.4 us excess over 1000 iterations is 4.4 ms: the scheduler explains it).
  Matrix lat = healthy(4, 6.3);
  lat[1][2] = 6.3 * 1.7;
  std::vector<std::pair<int, int>> all;
  for (int s = 0; s < 4; ++s)
    for (int d = 0; d < 4; ++d)
      if (s != d) all.emplace_back(s, d);
  PairsResult busy = result(lat, {}, {}, all);
  ASSERT_EQ(busy.latOutliers.ranked.size(), 1u);  // the rule still sees it...
  EXPECT_EQ(busy.verdict.descheduledCount, 12);
  PairsVerdictLine v = pairsVerdictLine(busy);
  EXPECT_EQ(v.result, PairsVerdictLine::kNoVerdict);  // ...but it is no verdict
  EXPECT_EQ(v.text.rfind("pairs: no outlier verdict: 1 finding(s) rest on measurements that lost "
                         "enough CPU time to explain them (12 of 12 pair measurements were "
                         "descheduled): link 1 -> 2",
                         0),
            0u)
      << v.text;
  // The same map measured on CPUs of its own: the link is a verdict.
  EXPECT_EQ(pairsVerdictLine(result(lat)).result, PairsVerdictLine::kFail);
  // Descheduled without schedstat (the lost time unknown): no verdict either.
  EXPECT_EQ(pairsVerdictLine(result(lat, {}, {}, all, -1)).result, PairsVerdictLine::kNoVerdict);
}

TEST(PairsVerdict, SlowdownBeyondTheLostCpuTimeIsStillAVerdict) {
  std::vector<std::pair<int, int>> all;
  for (int s = 0; s < 4; ++s)
    for (int d = 0; d < 4; ++d)
      if (s != d) all.emplace_back(s, d);
  // Half/half 50x: 309 us more per iteration x 1000 = 309 ms, more than the 100 ms lost.
  PairsResult cut = result(halves(4, 6.3, 50), {}, {}, all, 1e5);
  EXPECT_TRUE(cut.verdict.latCut.confirmed);
  EXPECT_EQ(pairsVerdictLine(cut).result, PairsVerdictLine::kFail);
  // ... but not when the measurements lost a second each.
  EXPECT_EQ(pairsVerdictLine(result(halves(4, 6.3, 50), {}, {}, all, 1e6)).result,
            PairsVerdictLine::kNoVerdict);
  // Bandwidth 200x down (1000 -> 5 MB/s): 167.8 MB take 33.5 s instead of 0.17 s.
  PairsResult bw = result(healthy(4, 6.3), halves(4, 1000, 1.0 / 200), {}, all, 1e5);
  EXPECT_EQ(pairsVerdictLine(bw).result, PairsVerdictLine::kFail);
}

TEST(PairsVerdict, OneCleanFindingIsAVerdictWhateverTheRest) {
  Matrix lat = healthy(6, 6.3);
  lat[0][3] = 300;
  lat[4][5] = 300;
  PairsResult r = result(lat, {}, {}, {{4, 5}}, 1e6);  // 294 ms excess, 1 s lost
  PairsVerdictLine v = pairsVerdictLine(r);
  EXPECT_EQ(v.result, PairsVerdictLine::kFail);
  EXPECT_NE(v.text.find("pairs: 1 outlier(s): link 0 -> 3"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("and 1 finding(s) without a verdict: link 4 -> 5"), std::string::npos)
      << v.text;
}

}  // namespace
}  // namespace rdmabench::collective
