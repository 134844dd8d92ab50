#pragma once
// The one iteration-count policy of every command (lat, bw, barrier, allreduce, ring): OSU's
// automatic counts per message size, the --max-time cut (IMB's -time) and the -D calibration.
// Pure functions; thread-safe.

#include <cstdint>

namespace rdmabench::engine {

// OSU's LARGE_MESSAGE_SIZE: above it the automatic iteration counts drop (osu_util.h).
inline constexpr uint64_t kLargeMessageBytes = 8192;

// OSU's automatic counts: measured iterations and warmup iterations up to kLargeMessageBytes
// (small) and above (large).
struct IterationDefaults {
  uint64_t small, large;              // measured iterations
  uint64_t warmupSmall, warmupLarge;  // warmup iterations
};
// osu_latency: 10000 / 1000 iterations, 100 / 10 warmup (LAT_LOOP_LARGE, SKIP_LARGE).
inline constexpr IterationDefaults kLatencyIterations{10000, 1000, 100, 10};
// osu_bw: 100 / 20 windows, 10 / 2 warmup windows.
inline constexpr IterationDefaults kBandwidthIterations{100, 20, 10, 2};
// osu_barrier, osu_allreduce: 1000 / 100 iterations, 100 / 10 warmup.
inline constexpr IterationDefaults kCollectiveIterations{1000, 100, 100, 10};

// Measured iterations for `bytes`: `given` when > 0, else the default of its size class times
// `scale` (bw's stream mode counts messages: 64 per window).
uint64_t osuIterations(uint64_t given, uint64_t bytes, const IterationDefaults& defaults,
                       uint64_t scale = 1);

// Warmup iterations for `bytes`: `given` when >= 0, else the default of its size class times
// `scale`.
uint64_t osuWarmup(int64_t given, uint64_t bytes, const IterationDefaults& defaults,
                   uint64_t scale = 1);

// --max-time (IMB's -time): the automatic count `fixed` cut to what fits `maxTimeSec` at
// `perIterationSec` (at least 1); `fixed` when it fits, the budget is off (<= 0) or the
// estimate is unknown (<= 0).
uint64_t budgetedIterations(uint64_t fixed, double perIterationSec, double maxTimeSec);

// -D (the collectives' --duration): iterations that last `durationSec` at `perIterationSec`,
// clamped to 1..maxIterations; `fixed` when the estimate is unknown (<= 0).
uint64_t iterationsForDuration(uint64_t fixed, double perIterationSec, double durationSec,
                               uint64_t maxIterations);

// The fixed counts of the one-size probes of pairs and of congestion's victims: latency `given`
// iterations (default 1000) after `warmup` (default 100); bandwidth `bwIters` after
// min(`warmup`, 2) (default 2).
struct ProbeCounts {
  uint64_t latIters, latWarm, bwIters, bwWarm;
};
ProbeCounts probeCounts(uint64_t given, int64_t warmup, uint64_t bwIters);

}  // namespace rdmabench::engine
