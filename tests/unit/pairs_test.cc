// `rdmabench pairs`: the round-robin schedule (every unordered pair exactly once, no rank twice
// in a round) and the node-vs-link classification of synthetic matrices.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <utility>

#include "collective/pairs_outliers.h"
#include "collective/pairs_schedule.h"

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

}  // namespace
}  // namespace rdmabench::collective
