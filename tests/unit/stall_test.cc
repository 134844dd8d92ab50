// Known answers of the stall flag (common/stall.h): synthetic marks, no clock.
#include <gtest/gtest.h>

#include <cstdint>

#include "common/stall.h"

namespace rdmabench {
namespace {

constexpr int64_t kMs = 1'000'000;

// Marks every `step` ns from t0 = 0, one interval stretched by `extra` ns.
GapStats steadyWithOnePause(int windows, int64_t step, int pausedWindow, int64_t extra) {
  GapWatch w;
  int64_t t = 0;
  for (int i = 0; i < windows; ++i) {
    t += step + (i == pausedWindow ? extra : 0);
    w.mark(t);
  }
  return w.finish(0, t);
}

TEST(Stall, OnePauseDominatingTheRowIsFlaggedWithItsFigures) {
  // 100 windows of 0.1 ms, one of them 200 ms longer (an RTO): 209.9 ms in all.
  const GapStats s = steadyWithOnePause(100, kMs / 10, 37, 200 * kMs);
  EXPECT_EQ(s.longestNs, 200 * kMs + kMs / 10);
  EXPECT_EQ(s.totalNs, 210 * kMs);
  EXPECT_EQ(s.intervals, 101u);  // 100 marks: the last interval (t1 = last mark) is 0
  EXPECT_DOUBLE_EQ(s.typicalNs(), 9.9 * kMs / 100);
  EXPECT_TRUE(s.stalled());
  const nlohmann::json j = s.toJson();
  EXPECT_DOUBLE_EQ(j["longest_gap_us"].get<double>(), 200100);
  EXPECT_NEAR(j["share"].get<double>(), 200.1 / 210, 1e-12);
  EXPECT_DOUBLE_EQ(j["typical_gap_us"].get<double>(), 99);
  EXPECT_EQ(j["intervals"], 101);
}

TEST(Stall, SteadyRowsAndSmallPausesAreNotFlagged) {
  EXPECT_FALSE(steadyWithOnePause(100, kMs, -1, 0).stalled());       // steady
  EXPECT_FALSE(steadyWithOnePause(100, kMs, 5, 8 * kMs).stalled());  // 9x the others
  // 20 ms in a 10 s row: 10x the others but 0.2% of the row.
  EXPECT_FALSE(steadyWithOnePause(10000, kMs, 5, 20 * kMs).stalled());
  // Dominating, but shorter than kStallMinNs (a 10 us row of 1 us windows).
  EXPECT_FALSE(steadyWithOnePause(10, 1000, 3, 500'000).stalled());
}

TEST(Stall, ThresholdsAreInclusive) {
  // Intervals 10 ms, 1 ms, 1 ms and a closing 1 ms: ratio exactly 10, share 10/13.
  GapWatch w;
  for (int64_t t : {10 * kMs, 11 * kMs, 12 * kMs})
    w.mark(t);
  GapStats s = w.finish(0, 13 * kMs);
  EXPECT_EQ(s.longestNs, 10 * kMs);
  EXPECT_EQ(s.intervals, 4u);
  EXPECT_DOUBLE_EQ(s.typicalNs(), 1.0 * kMs);
  EXPECT_TRUE(s.stalled());
  s = w.finish(0, 13 * kMs + 3);  // the others 1 ns longer each: 9.99...x
  EXPECT_FALSE(s.stalled());
}

TEST(Stall, FirstIntervalCountsClosingOneAndSingleIntervalsDoNot) {
  GapWatch w;  // the pause before the first mark (t0 .. first window's end)
  w.mark(50 * kMs);
  w.mark(51 * kMs);
  w.mark(52 * kMs);
  GapStats s = w.finish(0, 53 * kMs);
  EXPECT_EQ(s.longestNs, 50 * kMs);
  EXPECT_EQ(s.intervals, 4u);
  EXPECT_TRUE(s.stalled());
  GapWatch tail;  // the closing interval (the drain of a socket's buffer) is never the longest
  tail.mark(kMs);
  tail.mark(2 * kMs);
  s = tail.finish(0, 80 * kMs);
  EXPECT_EQ(s.longestNs, kMs);
  EXPECT_EQ(s.totalNs, 80 * kMs);
  EXPECT_EQ(s.intervals, 3u);
  EXPECT_FALSE(s.stalled());
  const GapStats none = GapWatch{}.finish(0, 500 * kMs);  // -n 1: nothing to compare with
  EXPECT_EQ(none.intervals, 1u);
  EXPECT_FALSE(none.stalled());
}

TEST(Stall, ChunksAddUp) {
  GapStats a{.longestNs = 2 * kMs, .totalNs = 10 * kMs, .intervals = 10};
  const GapStats b{.longestNs = 30 * kMs, .totalNs = 40 * kMs, .intervals = 11};
  a.add(b);
  EXPECT_EQ(a.longestNs, 30 * kMs);
  EXPECT_EQ(a.totalNs, 50 * kMs);
  EXPECT_EQ(a.intervals, 21u);
  EXPECT_TRUE(a.stalled());  // 30 ms vs 1 ms mean of the others, 60% of the row
}

}  // namespace
}  // namespace rdmabench
