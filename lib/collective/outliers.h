#pragma once
// Outlier links and hosts of `rdmabench ring` (docs/collectives.md). A slow host makes every
// link it takes part in slow, so with a ring up to half of all links can be slow and a median
// over links would hide it. The baseline is therefore taken over hosts (ranks): each rank's
// fastest link; baseline = median of those, spread = their median absolute deviation (MAD).
// A link is an outlier when its latency > baseline + k * max(MAD, baseline / 10) (the floor
// keeps sub-microsecond MADs of a quiet cluster from flagging noise); a rank is slow when even
// its fastest link is above that threshold. Pure, thread-safe.

#include <vector>

namespace rdmabench::collective {

struct LinkLatency {
  int src = 0, dst = 0;
  double us = 0;
};

struct OutlierReport {
  double baselineUs = 0, madUs = 0, thresholdUs = 0;  // microseconds
  double linkMadUs = 0;        // MAD of the healthy links (0 with fewer than 2)
  std::vector<bool> outlier;   // per link, same order as the input
  std::vector<int> slowRanks;  // ascending
};

// `ranks` = world size (ranks without links are ignored). k >= 0.
OutlierReport findOutliers(const std::vector<LinkLatency>& links, int ranks, double k);

// Median of a copy (mean of the two middle values for an even count; 0 when empty).
double median(std::vector<double> v);

}  // namespace rdmabench::collective
