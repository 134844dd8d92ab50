#include "noise/detour.h"

#include <algorithm>
#include <cmath>

#include "common/interrupt.h"
#include "common/measure_clock.h"

namespace rdmabench::noise {

double medianClockStepNs(uint64_t reads) {
  reads = std::max<uint64_t>(reads, 16);
  std::vector<int64_t> steps;
  steps.reserve(reads);
  int64_t prev = measureNs();
  for (uint64_t i = 0; i < reads; ++i) {
    const int64_t now = measureNs();
    steps.push_back(now - prev);
    prev = now;
  }
  auto mid = steps.begin() + static_cast<std::ptrdiff_t>(steps.size() / 2);
  std::nth_element(steps.begin(), mid, steps.end());
  return static_cast<double>(*mid);
}

int64_t defaultThresholdNs(double medianStepNs) {
  return std::max<int64_t>(1000, static_cast<int64_t>(std::ceil(5 * medianStepNs)));
}

DetourTrace runDetourLoop(int64_t durationNs, int64_t thresholdNs, double medianStepNs,
                          size_t maxStored) {
  DetourTrace t;
  t.thresholdNs = thresholdNs;
  t.medianStepNs = medianStepNs;
  // Growing the vector inside the loop (a copy of megabytes, fresh pages faulted in) would be
  // noise of our own, recorded as detours: reserve and touch, before the clock starts, room for
  // 20,000 detours/s (a very noisy core at a 1 us threshold), at most 1M entries (16 MB).
  const double expected = 20'000.0 * static_cast<double>(durationNs) / 1e9 + 1024;
  t.detours.resize(std::min<size_t>(maxStored, static_cast<size_t>(std::min(expected, 1e6))));
  t.detours.clear();
  const int64_t start = measureNs();
  const int64_t end = start + durationNs;
  int64_t prev = start;
  uint64_t it = 0;
  for (;;) {
    const int64_t now = measureNs();
    ++it;
    const int64_t gap = now - prev;
    if (gap > thresholdNs) [[unlikely]] {
      ++t.count;
      t.stolenNs += gap;
      t.maxNs = std::max(t.maxNs, gap);
      if (t.detours.size() < maxStored) t.detours.push_back({prev - start, gap});
    }
    prev = now;
    if (now >= end) break;
    if ((it & 0xffff) == 0 && interrupted()) [[unlikely]] {
      t.interrupted = true;
      break;
    }
  }
  t.loopNs = prev - start;
  t.iterations = it;
  return t;
}

DetourStats summarize(const DetourTrace& t) {
  DetourStats s;
  s.seconds = static_cast<double>(t.loopNs) / 1e9;
  s.count = t.count;
  if (t.loopNs > 0) {
    s.perSecond = static_cast<double>(t.count) / s.seconds;
    s.stolenPct = 100.0 * static_cast<double>(t.stolenNs) / static_cast<double>(t.loopNs);
  }
  s.maxUs = static_cast<double>(t.maxNs) / 1e3;
  stats::SampleSet set(t.detours.size() + 1);
  set.reserve(t.detours.size());
  for (const Detour& d : t.detours)
    set.add(d.lengthNs);
  if (set.count() > 0) {
    const stats::Summary sum = set.summarize();
    s.p50Us = sum.p50;
    s.p99Us = sum.p99;
    s.p999Us = sum.p999;
    s.meanUs = sum.mean;
  }
  return s;
}

namespace {

// Register-only work whose result the compiler cannot drop (FWQ's loop of increments).
__attribute__((noinline)) uint64_t work(uint64_t n) {
  uint64_t a = 1;
  for (uint64_t i = 0; i < n; ++i) {
    a += i ^ (a >> 3);
    asm volatile("" : "+r"(a));
  }
  return a;
}

int64_t timeWork(uint64_t n) {
  const int64_t t0 = measureNs();
  uint64_t r = work(n);
  asm volatile("" : : "r"(r));
  return measureNs() - t0;
}

}  // namespace

FwqTrace runFwq(double quantumUs, int64_t durationNs, size_t maxQuanta) {
  FwqTrace t;
  t.quantumUs = quantumUs;
  const double targetNs = quantumUs * 1e3;
  // Grow a probe until it takes at least 1 ms (or the quantum), then scale by the fastest of 5.
  uint64_t n = 1024;
  while (n < (uint64_t{1} << 40) && timeWork(n) < std::min(1e6, targetNs))
    n *= 2;
  int64_t best = INT64_MAX;
  for (int i = 0; i < 5; ++i)
    best = std::min(best, std::max<int64_t>(1, timeWork(n)));
  t.workUnits = std::max<uint64_t>(
      1, static_cast<uint64_t>(static_cast<double>(n) * targetNs / static_cast<double>(best)));
  t.ns.reserve(std::min<size_t>(maxQuanta, static_cast<size_t>(durationNs / targetNs) + 16));
  const int64_t end = measureNs() + durationNs;
  for (;;) {
    const int64_t ns = timeWork(t.workUnits);
    if (t.ns.size() < maxQuanta) t.ns.push_back(ns);
    if (measureNs() >= end) break;
    if (interrupted()) {
      t.interrupted = true;
      break;
    }
  }
  return t;
}

FwqStats summarizeFwq(const FwqTrace& t) {
  FwqStats s;
  stats::SampleSet set(t.ns.size() + 1);
  for (int64_t ns : t.ns)
    set.add(ns);
  if (set.count() == 0) return s;
  const stats::Summary sum = set.summarize();
  s.quanta = sum.count;
  s.minUs = sum.min;
  s.medianUs = sum.median;
  s.p99Us = sum.p99;
  s.maxUs = sum.max;
  s.meanUs = sum.mean;
  s.stdevUs = sum.stdev;
  s.noiseRatio = sum.min > 0 ? (sum.mean - sum.min) / sum.min : 0;
  return s;
}

nlohmann::json FwqStats::toJson() const {
  return {{"quanta", quanta},    {"min_us", minUs},          {"median_us", medianUs},
          {"p99_us", p99Us},     {"max_us", maxUs},          {"mean_us", meanUs},
          {"stdev_us", stdevUs}, {"noise_ratio", noiseRatio}};
}

}  // namespace rdmabench::noise
