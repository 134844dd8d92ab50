#include "stats/summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace rdmabench::stats {
namespace {

constexpr double kTol = 1e-9;

SampleSet fromMicros(const std::vector<double>& us, size_t cap = 1'000'000) {
  SampleSet set(cap);
  for (double v : us)
    set.add(static_cast<int64_t>(std::llround(v * 1000.0)));
  return set;
}

TEST(Stats, EmptySetIsAllZeroAndExact) {
  SampleSet set;
  Summary s = set.summarize();
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.min, 0.0);
  EXPECT_EQ(s.max, 0.0);
  EXPECT_EQ(s.mean, 0.0);
  EXPECT_EQ(s.stdev, 0.0);
  EXPECT_EQ(s.median, 0.0);
  EXPECT_EQ(s.p999, 0.0);
  EXPECT_TRUE(s.exact);
}

TEST(Stats, OneToTenMicroseconds) {
  // Shuffled on purpose: summarize() must sort.
  Summary s = fromMicros({7, 3, 10, 1, 5, 2, 9, 4, 8, 6}).summarize();
  EXPECT_EQ(s.count, 10u);
  EXPECT_NEAR(s.min, 1.0, kTol);
  EXPECT_NEAR(s.max, 10.0, kTol);
  EXPECT_NEAR(s.mean, 5.5, kTol);
  // Population variance of 1..n is (n^2 - 1) / 12 = 99 / 12 = 8.25.
  EXPECT_NEAR(s.stdev, std::sqrt(8.25), kTol);
  EXPECT_NEAR(s.median, 5.5, kTol);  // even count: mean of 5 and 6
  EXPECT_NEAR(s.p50, 5.0, kTol);     // nearest rank ceil(5) = 5
  EXPECT_NEAR(s.p90, 9.0, kTol);     // rank 9
  EXPECT_NEAR(s.p99, 10.0, kTol);    // rank ceil(9.9) = 10
  EXPECT_NEAR(s.p999, 10.0, kTol);   // rank ceil(9.99) = 10
  EXPECT_TRUE(s.exact);
}

TEST(Stats, OddCountMedianIsTheMiddleSample) {
  Summary s = fromMicros({9, 1, 8, 2, 7, 3, 6, 4, 5}).summarize();
  EXPECT_NEAR(s.median, 5.0, kTol);
  EXPECT_NEAR(s.p50, 5.0, kTol);  // rank ceil(4.5) = 5
  EXPECT_NEAR(s.mean, 5.0, kTol);
  EXPECT_NEAR(s.stdev, std::sqrt(80.0 / 12.0), kTol);
}

TEST(Stats, PercentileRanksAreNotOffByOneFromFloatingPoint) {
  // 0.99 * 100 and 0.999 * 1000 are not exact in binary; the ranks must still be 99 and 999.
  std::vector<double> hundred, thousand;
  for (int i = 1; i <= 100; ++i)
    hundred.push_back(i);
  for (int i = 1; i <= 1000; ++i)
    thousand.push_back(i);
  Summary h = fromMicros(hundred).summarize();
  EXPECT_NEAR(h.p90, 90.0, kTol);
  EXPECT_NEAR(h.p99, 99.0, kTol);
  EXPECT_NEAR(h.p999, 100.0, kTol);
  EXPECT_NEAR(h.median, 50.5, kTol);
  Summary t = fromMicros(thousand).summarize();
  EXPECT_NEAR(t.p99, 990.0, kTol);
  EXPECT_NEAR(t.p999, 999.0, kTol);
}

TEST(Stats, SingleSample) {
  Summary s = fromMicros({3.25}).summarize();
  EXPECT_EQ(s.count, 1u);
  for (double v : {s.min, s.max, s.mean, s.median, s.p50, s.p90, s.p99, s.p999}) {
    EXPECT_NEAR(v, 3.25, kTol);
  }
  EXPECT_EQ(s.stdev, 0.0);
}

TEST(Stats, IdenticalSamplesHaveZeroStdev) {
  SampleSet set;
  for (int i = 0; i < 1001; ++i)
    set.add(1500);
  Summary s = set.summarize();
  EXPECT_EQ(s.count, 1001u);
  EXPECT_NEAR(s.stdev, 0.0, 1e-12);
  EXPECT_NEAR(s.mean, 1.5, kTol);
  EXPECT_NEAR(s.median, 1.5, kTol);
  EXPECT_NEAR(s.p999, 1.5, kTol);
}

TEST(Stats, NegativeSamplesAreClampedToZero) {
  SampleSet set;
  set.add(-5);
  set.add(1000);
  Summary s = set.summarize();
  EXPECT_EQ(s.min, 0.0);
  EXPECT_NEAR(s.mean, 0.5, kTol);
}

TEST(Stats, NearestRankFunction) {
  std::vector<int64_t> v{10, 20, 30, 40};
  EXPECT_EQ(nearestRank(v, 0), 10.0);
  EXPECT_EQ(nearestRank(v, 25), 10.0);
  EXPECT_EQ(nearestRank(v, 26), 20.0);
  EXPECT_EQ(nearestRank(v, 50), 20.0);
  EXPECT_EQ(nearestRank(v, 75), 30.0);
  EXPECT_EQ(nearestRank(v, 76), 40.0);
  EXPECT_EQ(nearestRank(v, 100), 40.0);
  EXPECT_EQ(nearestRank({}, 50), 0.0);
}

TEST(Stats, SpillsToHistogramOnlyPastTheCap) {
  SampleSet set(10);
  for (int i = 1; i <= 10; ++i)
    set.add(i * 1000);
  EXPECT_TRUE(set.summarize().exact);
  set.add(11000);
  Summary s = set.summarize();
  EXPECT_FALSE(s.exact);
  EXPECT_EQ(s.count, 11u);
  EXPECT_NEAR(s.mean, 6.0, kTol);
  EXPECT_NEAR(s.min, 1.0, kTol);
  EXPECT_NEAR(s.max, 11.0, kTol);
}

TEST(Stats, ClearStartsOverInExactMode) {
  SampleSet set(4);
  for (int i = 0; i < 100; ++i)
    set.add(i * 100);
  ASSERT_FALSE(set.summarize().exact);
  set.clear();
  EXPECT_EQ(set.count(), 0u);
  set.add(2000);
  set.add(4000);
  Summary s = set.summarize();
  EXPECT_TRUE(s.exact);
  EXPECT_EQ(s.count, 2u);
  EXPECT_NEAR(s.median, 3.0, kTol);
  EXPECT_NEAR(s.min, 2.0, kTol);
}

TEST(Stats, HistogramIsExactBelow128Nanoseconds) {
  SampleSet set(0);  // histogram from the first sample
  for (int64_t v : {1, 2, 3, 100, 127})
    set.add(v);
  Summary s = set.summarize();
  EXPECT_FALSE(s.exact);
  EXPECT_NEAR(s.median, 0.003, 1e-12);
  EXPECT_NEAR(s.p90, 0.127, 1e-12);
  EXPECT_NEAR(s.p50, 0.003, 1e-12);
}

TEST(Stats, HistogramHandlesHugeValues) {
  SampleSet set(0);
  set.add(int64_t{1} << 62);
  set.add(INT64_MAX);
  Summary s = set.summarize();
  EXPECT_EQ(s.count, 2u);
  EXPECT_GE(s.p999, s.p50);
  EXPECT_LE(s.p999 * 1000.0, static_cast<double>(INT64_MAX) * (1 + 1e-15));
}

// Compares the histogram path against the exact answer on a skewed, wide distribution.
TEST(Stats, HistogramPercentilesWithinRelativeErrorBound) {
  std::mt19937_64 rng(12345);
  std::lognormal_distribution<double> dist(std::log(3000.0), 1.2);  // ns, ~0.1 us .. ~ms
  SampleSet exact(1'000'000);
  SampleSet approx(256);
  constexpr int kN = 200'001;  // odd and even median paths are both covered below
  std::vector<int64_t> values;
  for (int i = 0; i < kN; ++i) {
    auto v = static_cast<int64_t>(dist(rng));
    values.push_back(v);
    exact.add(v);
    approx.add(v);
  }
  Summary e = exact.summarize();
  Summary a = approx.summarize();
  ASSERT_TRUE(e.exact);
  ASSERT_FALSE(a.exact);
  EXPECT_EQ(a.count, e.count);
  EXPECT_EQ(a.min, e.min);
  EXPECT_EQ(a.max, e.max);
  EXPECT_NEAR(a.mean, e.mean, 1e-9 * e.mean);
  EXPECT_NEAR(a.stdev, e.stdev, 1e-9 * e.stdev);
  const double bound = std::ldexp(1.0, -SampleSet::kSubBucketBits);  // 0.78%
  for (auto [got, want] : {std::pair{a.p50, e.p50},
                           {a.p90, e.p90},
                           {a.p99, e.p99},
                           {a.p999, e.p999},
                           {a.median, e.median}}) {
    EXPECT_LE(std::abs(got - want), bound * want) << "got " << got << " want " << want;
    EXPECT_LE(std::abs(got - want), bound / 2 * want + 1e-12) << "midpoint bound";
  }
  // Even count.
  exact.add(values[0]);
  approx.add(values[0]);
  Summary e2 = exact.summarize(), a2 = approx.summarize();
  EXPECT_LE(std::abs(a2.median - e2.median), bound * e2.median);
}

}  // namespace
}  // namespace rdmabench::stats
