#include "noise/outliers.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "collective/outliers.h"

namespace rdmabench::noise {

OutlierRule flagNoisy(const std::vector<double>& figures, double k, double floor) {
  OutlierRule r;
  r.ranked.resize(figures.size());
  std::iota(r.ranked.begin(), r.ranked.end(), size_t{0});
  std::stable_sort(r.ranked.begin(), r.ranked.end(),
                   [&](size_t a, size_t b) { return figures[a] > figures[b]; });
  if (figures.empty()) return r;
  r.baseline = collective::median(figures);
  std::vector<double> dev;
  for (double f : figures)
    dev.push_back(std::fabs(f - r.baseline));
  r.mad = collective::median(dev);
  r.spread = std::max({r.mad, r.baseline / 10, floor});
  r.threshold = r.baseline + k * r.spread;
  if (figures.size() < 3) return r;
  r.decided = true;
  for (size_t i : r.ranked)
    if (figures[i] > r.threshold) r.outliers.push_back(i);
  return r;
}

}  // namespace rdmabench::noise
