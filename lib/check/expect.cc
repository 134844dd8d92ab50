#include "check/expect.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench::check {

namespace {

constexpr const char* kForm =
    "expected FIGURE OP VALUE UNIT: lat_p50|lat_p99 with ns|us|ms|s, bw with "
    "MB/s|GB/s|Mb/s|Gb/s|%link; OP <=, <, >=, >; e.g. 'lat_p99<=3us', 'bw>=90%link'";

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && s[a] == ' ')
    ++a;
  while (b > a && s[b - 1] == ' ')
    --b;
  return s.substr(a, b - a);
}

// The factor of `unit` to the figure's unit; 0 = unknown.
double unitFactor(const std::string& figure, const std::string& unit, bool& ofLink) {
  ofLink = false;
  if (figure == "bw") {
    if (unit == "%link") {
      ofLink = true;
      return 1;
    }
    if (unit == "MB/s") return 1;
    if (unit == "GB/s") return 1e3;
    if (unit == "Mb/s") return 1.0 / 8;
    if (unit == "Gb/s") return 1e3 / 8;
    return 0;
  }
  if (unit == "" || unit == "us") return 1;
  if (unit == "ns") return 1e-3;
  if (unit == "ms") return 1e3;
  if (unit == "s") return 1e6;
  return 0;
}

}  // namespace

Expectation parseExpectation(const std::string& text) {
  Expectation e;
  e.text = text;
  const std::string s = trim(text);
  const size_t opAt = s.find_first_of("<>");
  auto bad = [&](const std::string& why) {
    return UsageError(fmt::format("--expect '{}': {} ({})", text, why, kForm));
  };
  if (opAt == std::string::npos) throw bad("no operator");
  e.figure = trim(s.substr(0, opAt));
  if (e.figure != "lat_p50" && e.figure != "lat_p99" && e.figure != "bw")
    throw bad(fmt::format("unknown figure '{}'", e.figure));
  e.op = s.substr(opAt, 1);
  size_t rest = opAt + 1;
  if (rest < s.size() && s[rest] == '=') {
    e.op += "=";
    ++rest;
  }
  const std::string v = trim(s.substr(rest));
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || !std::isfinite(x) || x < 0)
    throw bad("no valid number after the operator");
  const std::string unit = trim(std::string(end));
  const double f = unitFactor(e.figure, unit, e.ofLink);
  if (f == 0) throw bad(fmt::format("unit '{}' unknown for {}", unit, e.figure));
  if (e.ofLink && (x <= 0 || x > 100)) throw bad("a share of the link is 0..100 %");
  e.value = x * f;
  return e;
}

double expectationLimit(const Expectation& e, double linkGbps) {
  if (!e.ofLink) return e.value;
  if (linkGbps <= 0) return -1;
  return e.value / 100.0 * linkGbps * 1e3 / 8;  // Gb/s -> MB/s
}

bool meets(const Expectation& e, double value, double limit) {
  if (e.op == "<=") return value <= limit;
  if (e.op == "<") return value < limit;
  if (e.op == ">=") return value >= limit;
  return value > limit;
}

}  // namespace rdmabench::check
