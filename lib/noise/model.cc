#include "noise/model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench::noise {

LogHistogram::LogHistogram()
    : counts_(static_cast<size_t>(kBins), 0), sums_(static_cast<size_t>(kBins), 0) {}

int LogHistogram::binOf(int64_t ns) {
  if (ns <= 0) return 0;
  const int b =
      1 + static_cast<int>(std::floor(std::log2(static_cast<double>(ns)) * kBinsPerOctave));
  return std::clamp(b, 1, kBins - 1);
}

void LogHistogram::add(int64_t ns) {
  const int b = binOf(ns);
  ++counts_[static_cast<size_t>(b)];
  sums_[static_cast<size_t>(b)] += static_cast<double>(std::max<int64_t>(ns, 0));
  ++total_;
}

void LogHistogram::merge(const LogHistogram& o) {
  for (size_t i = 0; i < counts_.size(); ++i) {
    counts_[i] += o.counts_[i];
    sums_[i] += o.sums_[i];
  }
  total_ += o.total_;
}

double LogHistogram::expectedMaxNs(double n) const {
  if (total_ == 0 || n < 1) return 0;
  double e = 0, prevPow = 0;
  uint64_t cum = 0;
  for (size_t k = 0; k < counts_.size(); ++k) {
    if (counts_[k] == 0) continue;
    cum += counts_[k];
    const double f = static_cast<double>(cum) / static_cast<double>(total_);
    const double pow = cum == total_ ? 1.0 : std::exp(n * std::log(f));
    e += (sums_[k] / static_cast<double>(counts_[k])) * (pow - prevPow);
    prevPow = pow;
  }
  return e;
}

double LogHistogram::probabilityDelayed(double n) const {
  if (total_ == 0 || n < 1) return 0;
  const double f0 = static_cast<double>(counts_[0]) / static_cast<double>(total_);
  return f0 <= 0 ? 1.0 : 1.0 - std::exp(n * std::log(f0));
}

double LogHistogram::quantileNs(double q) const {
  if (total_ == 0) return 0;
  const uint64_t rank = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(total_))));
  uint64_t cum = 0;
  for (size_t k = 0; k < counts_.size(); ++k) {
    cum += counts_[k];
    if (counts_[k] && cum >= rank) return sums_[k] / static_cast<double>(counts_[k]);
  }
  return 0;
}

double LogHistogram::sumNs() const {
  double s = 0;
  for (double x : sums_)
    s += x;
  return s;
}

std::vector<LogHistogram::Bin> LogHistogram::bins() const {
  std::vector<Bin> out;
  for (size_t k = 0; k < counts_.size(); ++k) {
    if (!counts_[k]) continue;
    Bin b;
    b.count = counts_[k];
    if (k > 0) {
      b.lowNs = std::exp2(static_cast<double>(k - 1) / kBinsPerOctave);
      b.highNs = std::exp2(static_cast<double>(k) / kBinsPerOctave);
    }
    out.push_back(b);
  }
  return out;
}

nlohmann::json LogHistogram::toJson() const {
  nlohmann::json a = nlohmann::json::array();
  for (size_t k = 0; k < counts_.size(); ++k)
    if (counts_[k])
      a.push_back(
          {k, counts_[k], static_cast<uint64_t>(std::llround(sums_[k]))});  // whole ns: shorter
  return a;
}

LogHistogram LogHistogram::fromJson(const nlohmann::json& j, std::string_view what) {
  LogHistogram h;
  if (!j.is_array() || j.size() > static_cast<size_t>(kBins))
    throw ProtocolError(
        fmt::format("{}: delay histogram is not an array of at most {} bins", what, kBins));
  for (const auto& e : j) {
    if (!e.is_array() || e.size() != 3 || !e[0].is_number_unsigned() ||
        !e[1].is_number_unsigned() || !e[2].is_number())
      throw ProtocolError(fmt::format("{}: malformed delay histogram bin", what));
    const uint64_t k = e[0].get<uint64_t>(), c = e[1].get<uint64_t>();
    const double s = e[2].get<double>();
    if (k >= static_cast<uint64_t>(kBins) || !std::isfinite(s) || s < 0 || c > (uint64_t{1} << 50))
      throw ProtocolError(fmt::format("{}: delay histogram bin {} out of range", what, k));
    h.counts_[k] += c;
    h.sums_[k] += s;
    h.total_ += c;
  }
  return h;
}

void addDelays(const DetourTrace& trace, int64_t workNs, size_t starts, LogHistogram& into) {
  const auto& d = trace.detours;
  // Calls start at evenly spaced points of the rank's own (undisturbed) time: a rank starts its
  // next call when it is running, never inside a detour.
  int64_t stolen = 0;
  for (const Detour& x : d)
    stolen += x.lengthNs;
  const int64_t undisturbed = trace.loopNs - stolen;
  if (workNs <= 0 || undisturbed <= workNs || starts == 0) return;
  const int64_t span = undisturbed - workNs;
  const size_t n = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(starts), span));
  size_t next = 0;     // first detour after the current start
  int64_t before = 0;  // lengths of the detours before it
  for (size_t i = 0; i < n; ++i) {
    const int64_t u = static_cast<int64_t>(static_cast<__int128>(span) * static_cast<__int128>(i) /
                                           static_cast<__int128>(n));
    // Detour k sits at undisturbed time start_k - (lengths before k).
    while (next < d.size() && d[next].startNs - before <= u) {
      before += d[next].lengthNs;
      ++next;
    }
    const int64_t s = u + before;  // wall time of the start
    int64_t pos = s, remaining = workNs;
    for (size_t j = next; j < d.size() && d[j].startNs < pos + remaining; ++j) {
      remaining -= std::max<int64_t>(0, d[j].startNs - pos);
      pos = std::max(pos, d[j].startNs + d[j].lengthNs);
    }
    into.add(pos + remaining - s - workNs);
  }
}

Prediction predict(const LogHistogram& pooled, int ranks, double workUs) {
  Prediction p;
  p.ranks = ranks;
  p.workUs = workUs;
  p.delayUs = pooled.expectedMaxNs(ranks) / 1e3;
  p.probDelayed = pooled.probabilityDelayed(ranks);
  p.slowdown = workUs > 0 ? (workUs + p.delayUs) / workUs : 0;
  return p;
}

}  // namespace rdmabench::noise
