#include "engine/iterations.h"

#include <algorithm>
#include <cmath>

namespace rdmabench::engine {

uint64_t osuIterations(uint64_t given, uint64_t bytes, const IterationDefaults& defaults,
                       uint64_t scale) {
  if (given > 0) return given;
  return (bytes > kLargeMessageBytes ? defaults.large : defaults.small) * scale;
}

uint64_t osuWarmup(int64_t given, uint64_t bytes, const IterationDefaults& defaults,
                   uint64_t scale) {
  if (given >= 0) return static_cast<uint64_t>(given);
  return (bytes > kLargeMessageBytes ? defaults.warmupLarge : defaults.warmupSmall) * scale;
}

uint64_t budgetedIterations(uint64_t fixed, double perIterationSec, double maxTimeSec) {
  if (maxTimeSec <= 0 || perIterationSec <= 0) return fixed;
  const double fit = std::max(1.0, std::floor(maxTimeSec / perIterationSec));
  return fit < static_cast<double>(fixed) ? static_cast<uint64_t>(fit) : fixed;
}

uint64_t iterationsForDuration(uint64_t fixed, double perIterationSec, double durationSec,
                               uint64_t maxIterations) {
  if (perIterationSec <= 0) return fixed;
  return static_cast<uint64_t>(
      std::clamp(durationSec / perIterationSec, 1.0, static_cast<double>(maxIterations)));
}

ProbeCounts probeCounts(uint64_t given, int64_t warmup, uint64_t bwIters) {
  ProbeCounts k;
  k.latIters = given ? given : 1000;
  k.latWarm = warmup >= 0 ? static_cast<uint64_t>(warmup) : 100;
  k.bwIters = bwIters;
  k.bwWarm = warmup >= 0 ? std::min<uint64_t>(static_cast<uint64_t>(warmup), 2) : 2;
  return k;
}

}  // namespace rdmabench::engine
