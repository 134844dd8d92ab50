#pragma once
// The noisiest cores and nodes of `rdmabench noise` (docs/noise.md, "Outliers"): the outlier
// rule of `ring` and `pairs` (collective/outliers.h, collective/pairs_outliers.h) over one figure
// per core (or node), higher = noisier: baseline = median of the figures, spread = max(MAD,
// baseline / 10, floor), and a figure above baseline + k x spread is an outlier. The absolute
// floor keeps a quiet job's near-zero MAD from flagging noise that does not matter (stolen %:
// kStolenPctFloor). Needs at least 3 figures (with 2 there is nothing to compare against:
// median + k x MAD can never be exceeded for k >= 1), like pairs. Pure, thread-safe.

#include <cstddef>
#include <vector>

namespace rdmabench::noise {

// Floor of the spread for stolen time, percentage points.
inline constexpr double kStolenPctFloor = 0.05;

struct OutlierRule {
  double baseline = 0, mad = 0, spread = 0, threshold = 0;
  bool decided = false;          // false with fewer than 3 figures
  std::vector<size_t> outliers;  // indices, noisiest first
  std::vector<size_t> ranked;    // every index, noisiest first (ties: lower index first)
};

// `k` >= 0, `floor` >= 0.
OutlierRule flagNoisy(const std::vector<double>& figures, double k, double floor);

}  // namespace rdmabench::noise
