#include "common/stall.h"

#include <algorithm>

namespace rdmabench {

double GapStats::typicalNs() const {
  if (intervals < 2) return 0;
  return static_cast<double>(totalNs - longestNs) / static_cast<double>(intervals - 1);
}

bool GapStats::stalled() const {
  if (intervals < 2 || totalNs <= 0 || longestNs < kStallMinNs) return false;
  const double longest = static_cast<double>(longestNs);
  return longest >= kStallShare * static_cast<double>(totalNs) &&
         longest >= kStallRatio * typicalNs();
}

void GapStats::add(const GapStats& o) {
  longestNs = std::max(longestNs, o.longestNs);
  totalNs += o.totalNs;
  intervals += o.intervals;
}

nlohmann::json GapStats::toJson() const {
  return {
      {"longest_gap_us", static_cast<double>(longestNs) / 1000},
      {"share", totalNs > 0 ? static_cast<double>(longestNs) / static_cast<double>(totalNs) : 0.0},
      {"typical_gap_us", typicalNs() / 1000},
      {"intervals", intervals}};
}

GapStats GapWatch::finish(int64_t t0, int64_t t1) const {
  GapStats s;
  s.totalNs = std::max<int64_t>(0, t1 - t0);
  if (marks_ == 0) {
    s.longestNs = s.totalNs;
    s.intervals = 1;
    return s;
  }
  const int64_t first = std::clamp(first_, t0, std::max(t0, t1));
  // The closing interval (last mark .. t1) counts in the total, not as a candidate: on a
  // transport whose completion is local (socket, most libfabric providers) it is the drain of
  // what the transport buffered, long by design; a pause inside it goes unflagged.
  s.longestNs = std::min(std::max(longest_, first - t0), s.totalNs);
  s.intervals = marks_ + 1;
  return s;
}

std::string stallAdvice() {
  return "rows marked 'stall' spent most of their time in one pause (one interval between "
         "completions took >= 25% of the row and >= 10x the others: a TCP retransmission "
         "timeout, a link flap, a paused peer); the figure is not the link's rate: rerun the "
         "size, and look at the retransmit counters (json \"stalled\", docs/metrics.md)";
}

}  // namespace rdmabench
