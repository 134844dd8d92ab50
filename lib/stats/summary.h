#pragma once
// Latency samples -> summary statistics, with bounded memory.
//
// SampleSet keeps every sample exactly up to `maxExactSamples` (default 1,000,000 = 8 MB);
// past that it folds all samples into a log-linear histogram (HdrHistogram-style: 2^kSubBucketBits
// sub-buckets per power of two of nanoseconds), so percentiles carry a relative error of at most
// 2^-kSubBucketBits (0.78%) while count/min/max/mean/stdev stay exact (Welford's running moments).
// (Each percentile reports the midpoint of the bucket holding the sample of that rank, clamped to
// [min, max], so the error is in fact at most half of that, 0.39%.)
// docs/metrics.md documents the definitions:
//  - median / t_typical: mean of the two middle samples when the count is even (as perftest);
//  - pXX: nearest-rank percentile, the sample at rank ceil(p/100 * n) (1-based); p50 is the lower
//    middle sample for even n, so it can differ from the median. perftest's 99% column indexes
//    its 0-based sorted array at ceil(0.99 m), i.e. one rank higher, after dropping 2 samples;
//  - stdev: population standard deviation (divide by n), computed in double precision
//    (perftest truncates each deviation to whole microseconds; we do not);
//  - nothing is dropped: perftest discards the 2 largest samples, we keep every sample.
// Thread-safety: none; one SampleSet per thread.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rdmabench::stats {

// Summary statistics in microseconds (all zero when count == 0).
struct Summary {
  uint64_t count = 0;
  double min = 0, max = 0, mean = 0, stdev = 0;
  double median = 0;  // t_typical
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

// Nearest-rank percentile of an ascending vector: the element at 1-based rank ceil(p/100 * n),
// clamped to [1, n] (p in [0,100]; p = 0 gives the minimum). Same unit as the elements; 0 for an
// empty vector.
double nearestRank(const std::vector<int64_t>& sorted, double p);

}  // namespace rdmabench::stats
