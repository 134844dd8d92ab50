#pragma once
// lat / bw --max-time (IMB's -time) by the running clock: one size runs OSU's count in chunks
// (DurationChunks aiming at the budget, engine/spec.h) and stops once the measured time reaches
// the budget or the count is done, whichever comes first. The warmup's rate is only the first
// chunk's estimate: a count sized from one warmup mean cut a fast size to 540 of 10000
// iterations and let a slow one run 21 s under a 10 s budget. Units: seconds. Not thread-safe.

#include <algorithm>
#include <cstdint>

#include "engine/spec.h"

namespace rdmabench::engine {

class BudgetChunks {
 public:
  // `estimateSec`: seconds per iteration from the calibration of `calibrationIterations`
  // iterations; `limit`: OSU's count for the size (>= 1).
  BudgetChunks(double budgetSec, double estimateSec, uint64_t calibrationIterations, uint64_t limit)
      : chunks_(budgetSec, estimateSec, calibrationIterations),
        limit_(std::max<uint64_t>(limit, 1)) {}
  // Iterations of the next chunk; 0 = the size is done (budget spent or count reached).
  uint64_t next() const {
    const uint64_t done = chunks_.iterations();
    return done >= limit_ ? 0 : std::min(chunks_.next(), limit_ - done);
  }
  // The chunk just run: `iterations` took `seconds` of measured time.
  void record(uint64_t iterations, double seconds) { chunks_.record(iterations, seconds); }
  uint64_t iterations() const { return chunks_.iterations(); }
  double measuredSec() const { return chunks_.measuredSec(); }
  // Stopped by the budget before OSU's count (the row's "capped" flag).
  bool capped() const { return chunks_.iterations() < limit_; }

 private:
  DurationChunks chunks_;
  uint64_t limit_;
};

}  // namespace rdmabench::engine
