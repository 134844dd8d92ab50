#include "collective/outliers.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rdmabench::collective {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

OutlierReport findOutliers(const std::vector<LinkLatency>& links, int ranks, double k) {
  OutlierReport r;
  r.outlier.assign(links.size(), false);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> fastest(static_cast<size_t>(std::max(ranks, 0)), inf);
  for (const auto& l : links)
    for (int x : {l.src, l.dst})
      if (x >= 0 && x < ranks) fastest[x] = std::min(fastest[x], l.us);
  std::vector<double> per;
  for (double f : fastest)
    if (f != inf) per.push_back(f);
  if (per.empty()) return r;
  r.baselineUs = median(per);
  std::vector<double> dev;
  for (double f : per)
    dev.push_back(std::fabs(f - r.baselineUs));
  r.madUs = median(dev);
  const double floorUs = r.baselineUs / 10;
  double spread = std::max(r.madUs, floorUs);
  // Second pass: the spread of the links between hosts that pass the first threshold. The
  // per-host minima hide how much a healthy link's median wanders (scheduler noise, event
  // wake-ups), and that wander is what a threshold must stand above.
  const double firstThreshold = r.baselineUs + k * spread;
  auto slow = [&](int x) { return x >= 0 && x < ranks && fastest[x] > firstThreshold; };
  std::vector<double> healthy;
  for (const auto& l : links)
    if (!slow(l.src) && !slow(l.dst)) healthy.push_back(l.us);
  if (healthy.size() >= 2) {
    const double m = median(healthy);
    std::vector<double> hdev;
    for (double us : healthy)
      hdev.push_back(std::fabs(us - m));
    r.linkMadUs = median(hdev);
    spread = std::max(spread, r.linkMadUs);
  }
  r.thresholdUs = r.baselineUs + k * spread;
  for (size_t i = 0; i < links.size(); ++i)
    r.outlier[i] = links[i].us > r.thresholdUs;
  for (int x = 0; x < ranks; ++x)
    if (fastest[x] != inf && fastest[x] > r.thresholdUs) r.slowRanks.push_back(x);
  return r;
}

}  // namespace rdmabench::collective
