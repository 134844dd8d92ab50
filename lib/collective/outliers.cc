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
  r.thresholdUs = r.baselineUs + k * std::max(r.madUs, r.baselineUs / 10);
  for (size_t i = 0; i < links.size(); ++i)
    r.outlier[i] = links[i].us > r.thresholdUs;
  for (int x = 0; x < ranks; ++x)
    if (fastest[x] != inf && fastest[x] > r.thresholdUs) r.slowRanks.push_back(x);
  return r;
}

}  // namespace rdmabench::collective
