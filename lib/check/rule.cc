#include "check/rule.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace rdmabench::check {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
  const double hi = v[n / 2];
  if (n % 2) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2));
  return (lo + hi) / 2;
}

double scaledMad(const std::vector<double>& v) {
  if (v.empty()) return 0;
  const double m = median(v);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v)
    dev.push_back(std::fabs(x - m));
  return kMadScale * median(std::move(dev));
}

Judgement judge(double value, const std::vector<double>& history, bool higherIsBetter,
                const RuleParams& p) {
  Judgement j;
  j.runs = history.size();
  if (history.size() < p.minRuns) {
    j.reason = fmt::format("{} of {} runs needed", history.size(), p.minRuns);
    return j;
  }
  j.judged = true;
  j.median = median(history);
  j.mad = scaledMad(history);
  j.allowance = std::max(p.k * j.mad, p.marginPct / 100.0 * std::fabs(j.median));
  j.limit = higherIsBetter ? j.median - j.allowance : j.median + j.allowance;
  j.worse = higherIsBetter ? value < j.limit : value > j.limit;
  j.changePct = j.median != 0 ? (value - j.median) / std::fabs(j.median) * 100 : 0;
  return j;
}

}  // namespace rdmabench::check
