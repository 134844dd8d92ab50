#include "collective/pairs_verdict.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "collective/outliers.h"
#include "collective/pairs.h"

namespace rdmabench::collective {

namespace {

using Matrix = std::vector<std::vector<double>>;

bool measured(double v) {
  return std::isfinite(v) && v > 0;
}

// Components of the graph "x - y when every measured direction between them is below
// `cutoff`" (union-find with path halving), as MatrixCut::groups.
std::vector<std::vector<int>> fastGroups(const Matrix& cost, double cutoff) {
  const int n = static_cast<int>(cost.size());
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](int x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  for (int x = 0; x < n; ++x)
    for (int y = x + 1; y < n; ++y) {
      const double a = cost[x][y], b = cost[y][x];
      if (!measured(a) && !measured(b)) continue;
      if ((measured(a) && a >= cutoff) || (measured(b) && b >= cutoff)) continue;
      parent[root(y)] = root(x);
    }
  std::vector<std::vector<int>> groups;
  std::vector<int> index(n, -1);
  for (int x = 0; x < n; ++x) {
    int& g = index[root(x)];
    if (g < 0) {
      g = static_cast<int>(groups.size());
      groups.emplace_back();
    }
    groups[g].push_back(x);
  }
  return groups;
}

// Whether link s -> d is already a finding of `o` (a slow link, or a link of a slow node).
bool explainedBy(const MatrixOutliers& o, int s, int d) {
  for (const auto& f : o.ranked)
    if (f.node ? (f.src == s || f.src == d) : (f.src == s && f.dst == d)) return true;
  return false;
}

// CPU time the initiator of one measurement lost (an extra.descheduled entry), us: run delay +
// steal, or the yielding ranks' shortfall; infinity when the amount is not known (no
// schedstat). Fields of another type count as unknown.
double lostUs(const nlohmann::json& e) {
  auto num = [&](const char* k) {
    return e.contains(k) && e[k].is_number() ? e[k].get<double>() : -1.0;
  };
  const double run = num("run_delay_us"), steal = num("steal_us"),
               shortfall = num("cpu_shortfall_us");
  if (run < 0 && shortfall <= 0) return std::numeric_limits<double>::infinity();
  return std::max(std::max(run, 0.0) + std::max(steal, 0.0), shortfall);
}

// Whether the scheduler can explain link s -> d's figure `value` against `baseline` (us; MB/s
// for bandwidth): its measurement lost at least the time by which it exceeded the baseline.
// Latency: for the median one-way time to rise by x, at least half of the iterations took 2x
// longer per round trip, so the loop took >= iterations * x longer. Bandwidth: the measured
// bytes took bytes / value instead of bytes / baseline (MB/s = bytes per us).
class Scheduler {
 public:
  Scheduler(const PairsResult& r, const Matrix& lost) : r_(r), lost_(lost) {}
  bool explains(bool bw, int s, int d, double value, double baseline) const {
    const double lost = lost_[s][d];
    if (lost <= 0) return false;
    double excess = 0;
    if (bw) {
      const double bytes = static_cast<double>(r_.bwBytes) * static_cast<double>(r_.window) *
                           static_cast<double>(r_.bwIterations);
      excess = value > 0 && baseline > 0 ? bytes / value - bytes / baseline : 0;
    } else {
      excess = (value - baseline) * static_cast<double>(r_.latIterations);
    }
    return lost >= excess;
  }

 private:
  const PairsResult& r_;
  const Matrix& lost_;
};

double shown(bool bw, double cost) {
  return bw ? (cost > 0 ? 1 / cost : 0) : cost;
}

MatrixCut judgeCut(const Matrix& cost, const MatrixOutliers& o, const Scheduler& sched, bool bw,
                   double minGap) {
  MatrixCut c = findCut(cost, minGap);
  if (!c.found) return c;
  size_t clean = 0;
  c.explained = true;
  for (auto [s, d] : c.slowLinks) {
    c.explained = c.explained && explainedBy(o, s, d);
    clean += sched.explains(bw, s, d, shown(bw, cost[s][d]), shown(bw, c.fastMedian)) ? 0 : 1;
  }
  c.confirmed = 2 * clean >= c.slowLinks.size();
  return c;
}

// PairsVerdict::*OutlierConfirmed for the findings of `o`.
std::vector<bool> confirmOutliers(const Matrix& cost, const MatrixOutliers& o,
                                  const Scheduler& sched, bool bw) {
  std::vector<bool> ok;
  const int n = static_cast<int>(cost.size());
  for (const auto& f : o.ranked) {
    if (!f.node) {
      ok.push_back(!sched.explains(bw, f.src, f.dst, shown(bw, f.cost), shown(bw, f.baseline)));
      continue;
    }
    int links = 0, cleanAbove = 0;
    for (int y = 0; y < n; ++y) {
      if (y == f.src) continue;
      for (auto [s, d] : {std::pair{f.src, y}, std::pair{y, f.src}}) {
        if (!measured(cost[s][d])) continue;
        ++links;
        if (cost[s][d] > o.nodeThreshold &&
            !sched.explains(bw, s, d, shown(bw, cost[s][d]), shown(bw, o.nodeBaseline)))
          ++cleanAbove;
      }
    }
    ok.push_back(2 * cleanAbove >= links);
  }
  return ok;
}

// Links of `value` beyond `bound` (above it for latency, below for bandwidth), worst first.
std::vector<BoundBreach> breaches(const Matrix& value, double bound, bool bw,
                                  const Scheduler& sched) {
  std::vector<BoundBreach> out;
  if (bound <= 0) return out;
  const int n = static_cast<int>(value.size());
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d && measured(value[s][d]) && (bw ? value[s][d] < bound : value[s][d] > bound))
        out.push_back(
            BoundBreach{s, d, value[s][d], !sched.explains(bw, s, d, value[s][d], bound)});
  std::stable_sort(out.begin(), out.end(), [bw](const BoundBreach& a, const BoundBreach& b) {
    return bw ? a.value < b.value : a.value > b.value;
  });
  return out;
}

}  // namespace

double cutMinGap(double k) {
  return std::max(3.0, 1 + k / 10);
}

MatrixCut findCut(const Matrix& cost, double minGap) {
  const size_t n = cost.size();
  for (const auto& row : cost)
    if (row.size() != n) throw std::invalid_argument("findCut: matrix is not square");
  MatrixCut c;
  std::vector<double> v;
  for (size_t x = 0; x < n; ++x)
    for (size_t y = 0; y < n; ++y)
      if (x != y && measured(cost[x][y])) v.push_back(cost[x][y]);
  if (n < 3 || v.size() < 2) return c;
  std::sort(v.begin(), v.end());
  size_t at = 1;
  for (size_t i = 2; i < v.size(); ++i)
    if (v[i] / v[i - 1] > v[at] / v[at - 1]) at = i;
  c.gap = v[at] / v[at - 1];
  if (c.gap < minGap) return c;
  c.found = true;
  const double cutoff = v[at];
  c.fastMedian = median(std::vector<double>(v.begin(), v.begin() + static_cast<long>(at)));
  c.slowMedian = median(std::vector<double>(v.begin() + static_cast<long>(at), v.end()));
  c.groups = fastGroups(cost, cutoff);
  std::vector<size_t> groupOf(n);
  for (size_t g = 0; g < c.groups.size(); ++g)
    for (int x : c.groups[g])
      groupOf[x] = g;
  for (size_t x = 0; x < n; ++x)
    for (size_t y = 0; y < n; ++y) {
      if (x == y || !measured(cost[x][y])) continue;
      const bool slow = cost[x][y] >= cutoff, cross = groupOf[x] != groupOf[y];
      if (slow) c.slowLinks.emplace_back(static_cast<int>(x), static_cast<int>(y));
      c.crossLinks += cross ? 1 : 0;
      c.slowCross += cross && slow ? 1 : 0;
    }
  return c;
}

PairsVerdict judgePairs(const PairsResult& r, const PairsBounds& bounds) {
  PairsVerdict v;
  v.bounds = bounds;
  v.cutMinGap = cutMinGap(r.outlierK);
  const int n = r.ranks;
  v.lostUs.assign(n, std::vector<double>(n, 0));
  const auto lost = r.info.extra.find("descheduled");
  if (lost != r.info.extra.end() && lost->is_array())
    for (const auto& e : *lost) {
      const int s = e.value("src", -1), d = e.value("dst", -1);
      if (s >= 0 && s < n && d >= 0 && d < n && s != d && v.lostUs[s][d] <= 0) {
        v.lostUs[s][d] = std::max(lostUs(e), 1e-9);
        ++v.descheduledCount;
      }
    }
  Matrix bwCost(n, std::vector<double>(n, std::nan("")));
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      if (s != d && measured(r.bwMBs[s][d])) bwCost[s][d] = 1 / r.bwMBs[s][d];
      if (s != d && (measured(r.latMedianUs[s][d]) || measured(r.bwMBs[s][d]))) ++v.measurements;
    }
  const Scheduler sched(r, v.lostUs);
  v.latCut = judgeCut(r.latMedianUs, r.latOutliers, sched, false, v.cutMinGap);
  v.bwCut = judgeCut(bwCost, r.bwOutliers, sched, true, v.cutMinGap);
  v.latOutlierConfirmed = confirmOutliers(r.latMedianUs, r.latOutliers, sched, false);
  v.bwOutlierConfirmed = confirmOutliers(bwCost, r.bwOutliers, sched, true);
  v.latBreaches = breaches(r.latMedianUs, bounds.maxLatUs, false, sched);
  v.bwBreaches = breaches(r.bwMBs, bounds.minBwMBs, true, sched);
  return v;
}

}  // namespace rdmabench::collective
