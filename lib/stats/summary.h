#pragma once
// Latency samples -> summary statistics, with bounded memory.
//
// SampleSet keeps every sample exactly up to `maxExactSamples` (default 1,000,000 = 8 MB);
// past that it folds all samples into a log-linear histogram (HdrHistogram-style: 2^kSubBucketBits
// sub-buckets per power of two of nanoseconds), so percentiles carry a relative error of at most
// 2^-kSubBucketBits (0.78%) while count/min/max/mean/stdev stay exact (Welford's running moments).
// docs/metrics.md documents the definitions:
//  - median / t_typical: mean of the two middle samples when the count is even (as perftest);
//  - pXX: nearest-rank percentile, the sample at rank ceil(p/100 * n) (1-based), as perftest's
//    99% column (sorted[ceil(0.99 n)]) and sockperf's percentiles;
//  - stdev: population standard deviation (divide by n), computed in double precision
//    (perftest truncates each deviation to whole microseconds; we do not).
// Thread-safety: none; one SampleSet per thread.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rdmabench::stats {

// Summary statistics in microseconds (all zero when count == 0).
struct Summary {
  uint64_t count = 0;
  double min = 0, max = 0, mean = 0, stdev = 0;
  double median = 0;                   // t_typical
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0;
  bool exact = true;  // false when percentiles come from the histogram (<= 0.78% error)
};

class SampleSet {
 public:
  static constexpr int kSubBucketBits = 7;

  explicit SampleSet(size_t maxExactSamples = 1'000'000);

  // Records one sample in nanoseconds (negative values are clamped to 0). O(1) amortised;
  // allocation-free once reserve() covered the count or the histogram is active.
  void add(int64_t ns);
  // Pre-allocates exact storage for `n` samples (clamped to maxExactSamples).
  void reserve(size_t n);
  uint64_t count() const { return count_; }
  void clear();
  // Computes the summary (sorts a copy of the exact samples). Values in microseconds.
  Summary summarize() const;

 private:
  void spillToHistogram();
  void addToHistogram(uint64_t ns);
  double histogramPercentileNs(double p) const;

  size_t maxExact_;
  std::vector<int64_t> samples_;
  std::vector<uint64_t> histogram_;  // empty until spilled
  uint64_t count_ = 0;
  int64_t minNs_ = 0, maxNs_ = 0;
  double mean_ = 0, m2_ = 0;  // Welford, nanoseconds
};

// Nearest-rank percentile of an ascending vector (p in [0,100]); 0 for an empty vector.
double nearestRank(const std::vector<int64_t>& sorted, double p);

}  // namespace rdmabench::stats
