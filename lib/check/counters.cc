#include "check/counters.h"

#include <time.h>

#include <array>
#include <cstdlib>
#include <string_view>

namespace rdmabench::check {

const char* toString(CounterClass c) {
  switch (c) {
    case CounterClass::kError:
      return "error";
    case CounterClass::kCongestion:
      return "congestion";
    case CounterClass::kTraffic:
      return "traffic";
  }
  return "?";
}

namespace {

bool hasAny(std::string_view name, const std::string_view* words, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (name.find(words[i]) != std::string_view::npos) return true;
  return false;
}

// "err", "errs" or "error..." as a word of a snake_case name (ack_deferred has none).
bool hasErrToken(std::string_view name) {
  size_t i = 0;
  while (i <= name.size()) {
    size_t j = name.find('_', i);
    if (j == std::string_view::npos) j = name.size();
    const std::string_view t = name.substr(i, j - i);
    if (t == "err" || t == "errs" || t.substr(0, 5) == "error") return true;
    i = j + 1;
  }
  return false;
}

int64_t monoNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void readDir(const std::string& dir, const std::string& prefix, CounterSnapshot& s) {
  for (const std::string& n : listDir(dir)) {
    const std::string v = readLine(dir + "/" + n);
    if (v.empty() || v[0] < '0' || v[0] > '9') continue;
    char* end = nullptr;
    const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
    if (*end != '\0') continue;
    s.values[prefix + n] = static_cast<uint64_t>(x);
  }
}

}  // namespace

CounterClass classifyCounter(const std::string& name) {
  // Errors that exhausted a retry count are errors even where the word says congestion (mlx5
  // rnr_nak_retry_err, rxe retry_rnr_exceeded_err).
  static constexpr std::array<std::string_view, 3> kExhausted = {"exceeded", "retry_err",
                                                                 "rnr_nak_retry"};
  static constexpr std::array<std::string_view, 10> kCongestion = {
      "xmit_wait", "ecn",    "cnp", "pause",         "pfc",
      "congest",   "marked", "rnr", "out_of_buffer", "xoff"};
  static constexpr std::array<std::string_view, 23> kError = {
      "discard", "drop",    "downed",      "recovery", "overrun",    "integrity",
      "retry",   "retrans", "out_of_seq",  "seq_",     "duplicate",  "timeout",
      "symbol",  "crc",     "fcs",         "fifo",     "collisions", "carrier",
      "missed",  "lost",    "implied_nak", "corrupt",  "abort"};
  if (hasAny(name, kExhausted.data(), kExhausted.size())) return CounterClass::kError;
  if (hasAny(name, kCongestion.data(), kCongestion.size())) return CounterClass::kCongestion;
  if (hasAny(name, kError.data(), kError.size()) || hasErrToken(name)) return CounterClass::kError;
  return CounterClass::kTraffic;
}

CounterSnapshot readCounters(const std::string& root, const PortState& port) {
  CounterSnapshot s;
  s.monoNs = monoNs();
  const std::string dir =
      root + "/class/infiniband/" + port.device + "/ports/" + std::to_string(port.port) + "/";
  readDir(dir + "counters", "counters/", s);
  readDir(dir + "hw_counters", "hw_counters/", s);
  if (port.ethernet() && !port.netdev.name.empty())
    readDir(root + "/class/net/" + port.netdev.name + "/statistics", "netdev/", s);
  return s;
}

std::vector<CounterDelta> counterDeltas(const CounterSnapshot& before,
                                        const CounterSnapshot& after) {
  std::vector<CounterDelta> out;
  const double seconds = static_cast<double>(after.monoNs - before.monoNs) / 1e9;
  for (const auto& [key, a] : after.values) {
    auto it = before.values.find(key);
    if (it == before.values.end()) continue;
    CounterDelta d;
    d.key = key;
    const size_t slash = key.find('/');
    d.cls = classifyCounter(slash == std::string::npos ? key : key.substr(slash + 1));
    d.before = it->second;
    d.after = a;
    d.reset = a < it->second;
    d.delta = d.reset ? 0 : a - it->second;
    d.perSecond = seconds > 0 ? static_cast<double>(d.delta) / seconds : 0;
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace rdmabench::check
