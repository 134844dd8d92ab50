#pragma once
// The baseline rule of `rdmabench check --baseline` (docs/check.md, "The baseline rule"): a figure
// is worse than its history when it lies beyond the history's median, in its bad direction, by
// more than max(k x MAD, margin x |median|). MAD is the median absolute deviation scaled by
// 1.4826 so that it estimates the standard deviation of normally distributed data (Leys et al.,
// "Detecting outliers: Do not use standard deviation around the mean, use absolute deviation
// around the median", J. Exp. Soc. Psychol. 2013, who recommend k = 2.5 to 3). The relative
// margin keeps a history with almost no spread (MAD near 0) from failing on noise.
// Thread-safety: pure functions.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rdmabench::check {

// Scale of the raw MAD to a standard-deviation estimate (1 / Phi^-1(3/4)).
inline constexpr double kMadScale = 1.4826;

struct RuleParams {
  double k = 3;           // --mad-k
  double marginPct = 10;  // --margin, % of the median
  size_t minRuns = 5;     // --min-runs: fewer judge nothing
};

// The median of `v` (mean of the two middle values for an even count); 0 for an empty vector.
double median(std::vector<double> v);
// The scaled MAD of `v` (kMadScale x median |v_i - median(v)|); 0 for an empty vector.
double scaledMad(const std::vector<double>& v);

struct Judgement {
  bool judged = false;  // false: fewer than minRuns values (`reason` says so)
  bool worse = false;   // beyond the allowance in the bad direction
  size_t runs = 0;
  double median = 0, mad = 0;
  double allowance = 0;  // max(k x mad, margin x |median|)
  double limit = 0;      // median + allowance (lower is better) or median - allowance
  double changePct = 0;  // (value - median) / median x 100; 0 when the median is 0
  std::string reason;    // when not judged: "2 of 5 runs needed"
};

// Judges `value` against `history` by the rule above. `higherIsBetter`: bandwidth (a fall is
// worse); otherwise latency, noise and congestion rates (a rise is worse).
Judgement judge(double value, const std::vector<double>& history, bool higherIsBetter,
                const RuleParams& p);

}  // namespace rdmabench::check
