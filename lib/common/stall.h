#pragma once
// Stalls of a timed bandwidth loop (docs/metrics.md, "Stalls"): one long pause inside an
// otherwise steady row (a spurious TCP retransmission timeout on a loaded veth, a link flap, a
// paused peer) makes the row's MB/s 10-1000x too low, and the mean over the row hides why.
// The engine marks the clock once per window (window mode) or once per --tx-depth completions
// of its first connection (stream mode), outside the per-message path, and keeps only the
// longest interval between marks (the first interval starts at the row's t0; the closing one,
// from the last mark to t1, counts in the row's time but is never the longest: it is the drain
// of what a socket buffered): a compare and a clock read per window, no allocation, no
// formatting.
// Thread-safety: a GapWatch belongs to the timed loop's thread; GapStats is plain data.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace rdmabench {

// A row is flagged when its longest interval is at least this share of the row's time ...
inline constexpr double kStallShare = 0.25;
// ... and at least this many times the mean of its other intervals ...
inline constexpr double kStallRatio = 10;
// ... and at least this long (ns): shorter pauses are clock and scheduling noise.
inline constexpr int64_t kStallMinNs = 1'000'000;

// The longest interval of a row and what it is compared with. Units: ns.
struct GapStats {
  int64_t longestNs = 0;   // the longest interval between t0 and the last mark
  int64_t totalNs = 0;     // the row's timed interval (sum of all intervals)
  uint64_t intervals = 0;  // number of intervals (marks + 1, the closing one included)
  // Mean of the intervals other than the longest (ns); 0 with fewer than 2 intervals.
  double typicalNs() const;
  // The flag rule (constants above); false with fewer than 2 intervals (nothing to compare).
  bool stalled() const;
  // Adds another run of the same row (-D chunks): longest = max, totals and counts summed.
  void add(const GapStats& o);
  // {"longest_gap_us": L, "share": L/total, "typical_gap_us": T, "intervals": N} (pair.cc adds
  // "tcp_retransmits" on socket).
  nlohmann::json toJson() const;
};

// Records marks of one timed loop; inline, no allocation. Usage: mark(now()) at each window
// (or every N completions) inside the timed interval, then finish(t0, t1) once.
class GapWatch {
 public:
  void mark(int64_t t) {
    if (marks_++ == 0) {
      first_ = t;
    } else if (t - last_ > longest_) {
      longest_ = t - last_;
    }
    last_ = t;
  }
  // The row's statistics for the timed interval [t0, t1] (marks outside it are clamped). No
  // mark: one interval, never flagged.
  GapStats finish(int64_t t0, int64_t t1) const;

 private:
  int64_t first_ = 0, last_ = 0, longest_ = 0;
  uint64_t marks_ = 0;
};

// The advice line for tables when a row was flagged.
std::string stallAdvice();

}  // namespace rdmabench
