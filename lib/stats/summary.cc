#include "stats/summary.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace rdmabench::stats {
namespace {

constexpr uint64_t kSubBuckets = uint64_t{1} << SampleSet::kSubBucketBits;
// Values below kSubBuckets get one bucket each; every power of two above gets kSubBuckets
// buckets of equal width, so the bucket count covers all of uint64_t.
constexpr size_t kBucketCount = kSubBuckets + (64 - SampleSet::kSubBucketBits) * kSubBuckets;

// Bucket of a value: exact below 2^kSubBucketBits, then the top kSubBucketBits+1 bits of the
// value (leading one included) select the bucket within its power of two.
size_t bucketIndex(uint64_t v) {
  if (v < kSubBuckets) return static_cast<size_t>(v);
  int exponent = 63 - std::countl_zero(v);  // floor(log2 v) >= kSubBucketBits
  int shift = exponent - SampleSet::kSubBucketBits;
  uint64_t sub = (v >> shift) - kSubBuckets;  // in [0, kSubBuckets)
  return static_cast<size_t>(kSubBuckets + static_cast<uint64_t>(shift) * kSubBuckets + sub);
}

// Smallest value of a bucket and its width (the bucket holds [lo, lo + width - 1]).
void bucketRange(size_t index, uint64_t& lo, uint64_t& width) {
  if (index < kSubBuckets) {
    lo = index;
    width = 1;
    return;
  }
  uint64_t shift = (index - kSubBuckets) / kSubBuckets;
  uint64_t sub = (index - kSubBuckets) % kSubBuckets;
  lo = (kSubBuckets + sub) << shift;
  width = uint64_t{1} << shift;
}

// Rank (1-based) of the nearest-rank p-th percentile among n values.
uint64_t nearestRankIndex(double p, uint64_t n) {
  if (n == 0) return 0;
  double r = std::clamp(p, 0.0, 100.0) * static_cast<double>(n) / 100.0;
  // Guard against p*n/100 landing a hair above an integer (0.99 is not exact in binary).
  auto rank = static_cast<uint64_t>(std::ceil(r - r * 1e-12));
  return std::clamp<uint64_t>(rank, 1, n);
}

double nsToUs(double ns) {
  return ns / 1000.0;
}

// Value (ns) of the `rank`-th smallest sample (1-based) as the histogram knows it: the midpoint
// of its bucket, kept inside the exact extremes. The error is at most half a bucket width, i.e.
// 2^-(kSubBucketBits+1) of the value (0.39%), within the 2^-kSubBucketBits the header promises.
double histogramValueAtRank(const std::vector<uint64_t>& histogram, uint64_t rank, int64_t minNs,
                            int64_t maxNs) {
  if (rank == 0) return 0.0;
  uint64_t seen = 0;
  for (size_t i = 0; i < histogram.size(); ++i) {
    seen += histogram[i];
    if (seen >= rank) {
      uint64_t lo = 0, width = 1;
      bucketRange(i, lo, width);
      double mid = static_cast<double>(lo) + static_cast<double>(width - 1) / 2.0;
      return std::clamp(mid, static_cast<double>(minNs), static_cast<double>(maxNs));
    }
  }
  return static_cast<double>(maxNs);
}

}  // namespace

double nearestRank(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  return static_cast<double>(sorted[nearestRankIndex(p, sorted.size()) - 1]);
}

SampleSet::SampleSet(size_t maxExactSamples) : maxExact_(maxExactSamples) {}

void SampleSet::add(int64_t ns) {
  if (ns < 0) ns = 0;
  if (count_ == 0) {
    minNs_ = maxNs_ = ns;
  } else {
    minNs_ = std::min(minNs_, ns);
    maxNs_ = std::max(maxNs_, ns);
  }
  ++count_;
  // Welford's online mean and sum of squared deviations (Knuth TAOCP vol. 2, 4.2.2).
  double x = static_cast<double>(ns);
  double delta = x - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (x - mean_);

  if (!histogram_.empty()) {
    addToHistogram(static_cast<uint64_t>(ns));
  } else if (samples_.size() < maxExact_) {
    samples_.push_back(ns);
  } else {
    spillToHistogram();
    addToHistogram(static_cast<uint64_t>(ns));
  }
}

void SampleSet::reserve(size_t n) {
  if (histogram_.empty()) samples_.reserve(std::min(n, maxExact_));
}

void SampleSet::clear() {
  samples_.clear();
  histogram_.clear();
  count_ = 0;
  minNs_ = maxNs_ = 0;
  mean_ = m2_ = 0;
}

void SampleSet::spillToHistogram() {
  histogram_.assign(kBucketCount, 0);
  for (int64_t s : samples_)
    addToHistogram(static_cast<uint64_t>(s));
  samples_.clear();
  samples_.shrink_to_fit();
}

void SampleSet::addToHistogram(uint64_t ns) {
  ++histogram_[bucketIndex(ns)];
}

double SampleSet::histogramPercentileNs(double p) const {
  return histogramValueAtRank(histogram_, nearestRankIndex(p, count_), minNs_, maxNs_);
}

Summary SampleSet::summarize() const {
  Summary s;
  if (count_ == 0) return s;
  s.count = count_;
  s.min = nsToUs(static_cast<double>(minNs_));
  s.max = nsToUs(static_cast<double>(maxNs_));
  s.mean = nsToUs(mean_);
  s.stdev = nsToUs(std::sqrt(m2_ / static_cast<double>(count_)));  // population (divide by n)

  if (histogram_.empty()) {
    std::vector<int64_t> sorted(samples_);
    std::sort(sorted.begin(), sorted.end());
    size_t n = sorted.size();
    double median =
        (n % 2 == 1)
            ? static_cast<double>(sorted[n / 2])
            : (static_cast<double>(sorted[n / 2 - 1]) + static_cast<double>(sorted[n / 2])) / 2.0;
    s.median = nsToUs(median);
    s.p50 = nsToUs(nearestRank(sorted, 50));
    s.p90 = nsToUs(nearestRank(sorted, 90));
    s.p99 = nsToUs(nearestRank(sorted, 99));
    s.p999 = nsToUs(nearestRank(sorted, 99.9));
    s.exact = true;
  } else {
    uint64_t n = count_;
    auto at = [&](uint64_t rank) { return histogramValueAtRank(histogram_, rank, minNs_, maxNs_); };
    double median = (n % 2 == 1) ? at(n / 2 + 1) : (at(n / 2) + at(n / 2 + 1)) / 2.0;
    s.median = nsToUs(median);
    s.p50 = nsToUs(histogramPercentileNs(50));
    s.p90 = nsToUs(histogramPercentileNs(90));
    s.p99 = nsToUs(histogramPercentileNs(99));
    s.p999 = nsToUs(histogramPercentileNs(99.9));
    s.exact = false;
  }
  return s;
}

}  // namespace rdmabench::stats
