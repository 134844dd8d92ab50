#include "collective/pairs_outliers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "collective/outliers.h"

namespace rdmabench::collective {

namespace {

bool measured(double v) {
  return std::isfinite(v) && v > 0;
}

double spread(const std::vector<double>& v, double med) {
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v)
    dev.push_back(std::fabs(x - med));
  return std::max(median(dev), med / 10);
}

}  // namespace

MatrixOutliers classifyMatrix(const std::vector<std::vector<double>>& cost, double k) {
  const size_t n = cost.size();
  for (const auto& row : cost)
    if (row.size() != n) throw std::invalid_argument("classifyMatrix: matrix is not square");
  MatrixOutliers out;
  out.nodeFigure.assign(n, std::numeric_limits<double>::quiet_NaN());
  if (n < 3) return out;
  std::vector<double> figures;
  for (size_t x = 0; x < n; ++x) {
    std::vector<double> links;
    for (size_t y = 0; y < n; ++y) {
      if (y == x) continue;
      if (measured(cost[x][y])) links.push_back(cost[x][y]);
      if (measured(cost[y][x])) links.push_back(cost[y][x]);
    }
    if (links.empty()) continue;
    out.nodeFigure[x] = median(links);
    figures.push_back(out.nodeFigure[x]);
  }
  if (figures.size() < 3) return out;
  out.nodeBaseline = median(figures);
  out.nodeThreshold = out.nodeBaseline + k * spread(figures, out.nodeBaseline);
  std::vector<bool> slowNode(n, false);
  for (size_t x = 0; x < n; ++x)
    if (out.nodeFigure[x] > out.nodeThreshold) {
      slowNode[x] = true;
      out.ranked.push_back(MatrixFinding{true, static_cast<int>(x), -1, out.nodeFigure[x],
                                         out.nodeBaseline, out.nodeThreshold,
                                         out.nodeFigure[x] / out.nodeBaseline});
    }
  std::vector<double> healthy;
  for (size_t x = 0; x < n; ++x)
    for (size_t y = 0; y < n; ++y)
      if (x != y && !slowNode[x] && !slowNode[y] && measured(cost[x][y]))
        healthy.push_back(cost[x][y]);
  if (healthy.size() >= 2) {
    out.linkBaseline = median(healthy);
    out.linkThreshold = out.linkBaseline + k * spread(healthy, out.linkBaseline);
    for (size_t x = 0; x < n; ++x)
      for (size_t y = 0; y < n; ++y)
        if (x != y && !slowNode[x] && !slowNode[y] && measured(cost[x][y]) &&
            cost[x][y] > out.linkThreshold)
          out.ranked.push_back(MatrixFinding{false, static_cast<int>(x), static_cast<int>(y),
                                             cost[x][y], out.linkBaseline, out.linkThreshold,
                                             cost[x][y] / out.linkBaseline});
  }
  std::stable_sort(
      out.ranked.begin(), out.ranked.end(),
      [](const MatrixFinding& a, const MatrixFinding& b) { return a.severity > b.severity; });
  return out;
}

}  // namespace rdmabench::collective
