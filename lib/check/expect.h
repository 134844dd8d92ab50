#pragma once
// Plain limits of `rdmabench check --expect` (docs/check.md): "lat_p99<=3us", "lat_p50<2.5us",
// "bw>=90%link", "bw>=40Gb/s", "bw>=3000MB/s". A limit applies to every measured port. Figures:
// lat_p50 and lat_p99 (one-way latency, units ns, us, ms, s; a bare number is us) and bw
// (units MB/s = 10^6 B/s, GB/s, Mb/s, Gb/s, or %link: a share of the port's rate from sysfs).
// Operators: <=, <, >=, >. Thread-safety: pure functions.

#include <string>

namespace rdmabench::check {

struct Expectation {
  std::string text;     // as given
  std::string figure;   // "lat_p50" | "lat_p99" | "bw"
  std::string op;       // "<=" | "<" | ">=" | ">"
  double value = 0;     // us for latency, MB/s for bandwidth, percent for %link
  bool ofLink = false;  // value is a percentage of the link rate
};

// Throws UsageError naming --expect, the text and what was expected (figure names, operators,
// units) for anything else.
Expectation parseExpectation(const std::string& text);

// The limit in the figure's unit (us, MB/s) for a port of `linkGbps` (sysfs rate); for %link
// with an unknown rate (0), returns a negative number: not judged.
double expectationLimit(const Expectation& e, double linkGbps);

// True when `value` (us or MB/s) meets `e` against `limit`.
bool meets(const Expectation& e, double value, double limit);

}  // namespace rdmabench::check
