// The one iteration-count policy (engine/iterations.h) of lat, bw and the collectives.
#include "engine/iterations.h"

#include <gtest/gtest.h>

namespace rdmabench::engine {
namespace {

TEST(Iterations, OsuDefaultsPerSizeClass) {
  // osu_allreduce / osu_barrier: 1000 iterations up to 8 KiB, 100 above; warmup 100 / 10.
  EXPECT_EQ(osuIterations(0, 8192, kCollectiveIterations), 1000u);
  EXPECT_EQ(osuIterations(0, 8193, kCollectiveIterations), 100u);
  EXPECT_EQ(osuWarmup(-1, 0, kCollectiveIterations), 100u);
  EXPECT_EQ(osuWarmup(-1, 1 << 20, kCollectiveIterations), 10u);
  // osu_latency and osu_bw (stream mode counts 64 messages per window).
  EXPECT_EQ(osuIterations(0, 8, kLatencyIterations), 10000u);
  EXPECT_EQ(osuIterations(0, 1 << 20, kBandwidthIterations, 64), 20u * 64);
  EXPECT_EQ(osuWarmup(-1, 8, kBandwidthIterations, 64), 10u * 64);
  // Given counts win, whatever the size.
  EXPECT_EQ(osuIterations(7, 1 << 20, kCollectiveIterations), 7u);
  EXPECT_EQ(osuWarmup(0, 8, kCollectiveIterations), 0u);
}

TEST(Iterations, DurationClampsToOneAndTheCeiling) {
  EXPECT_EQ(iterationsForDuration(100, 0.001, 2, 1'000'000), 2000u);
  EXPECT_EQ(iterationsForDuration(100, 10, 2, 1'000'000), 1u);            // at least one
  EXPECT_EQ(iterationsForDuration(100, 1e-9, 2, 1'000'000), 1'000'000u);  // the ceiling
  EXPECT_EQ(iterationsForDuration(100, 0, 2, 1'000'000), 100u);           // no estimate
}

}  // namespace
}  // namespace rdmabench::engine
