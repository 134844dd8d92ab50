#pragma once
// What noise costs a synchronising collective (docs/noise.md, "Cost to a collective").
//
// Model. Every rank computes for a noise-free time T between two synchronisations; rank i needs
// T + D_i because detours interrupt it, and the collective completes after the slowest rank:
// its expected delay is E[max_{i=1..N} D_i]. This is the bulk-synchronous noise model of
// Petrini, Kerbyson, Pakin, "The Case of the Missing Supercomputer Performance" (SC'03) and of
// Hoefler, Schneider, Lumsdaine, "Characterizing the Influence of System Noise on Large-Scale
// Applications by Simulation" (SC'10), who inject measured detour traces into the compute phases
// of a simulation; here the measured traces are replayed directly:
//  1. D for one call: the call starts at a time s when the rank runs (never inside a detour: a
//     rank starts its next call when it is running), walks the rank's detour trace from s
//     accumulating T of undisturbed time, and every detour that begins before the work is done
//     adds its whole length. Start times are evenly spaced over the rank's undisturbed time (up
//     to kModelStarts per rank), so a call meets a detour with probability ~ rate x T, as
//     back-to-back calls do (sampling wall-clock times instead would land inside long detours in
//     proportion to their length: the inspection paradox).
//  2. The D values of all ranks are pooled into one histogram (8 log2 bins per octave of ns, each
//     bin keeping its sum, so its representative value is the mean of its members).
//  3. With F the pooled CDF and the D_i taken as independent draws from it,
//     E[max_N D] = sum_k v_k (F_k^N - F_{k-1}^N) over bins k (v_k the bin's mean), and
//     P(a collective is delayed at all) = 1 - F(0)^N.
// Assumptions (docs/noise.md): ranks' noise is independent (noise synchronised across nodes
// costs less, Beckman et al. 2008) and the collective is one synchronisation; a collective of
// log2 N stages can pay up to one such delay per stage. When N exceeds the number of pooled
// samples the estimate saturates at the largest delay seen.
// Thread-safety: pure value types.

#include <cstdint>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "noise/detour.h"

namespace rdmabench::noise {

// Start times per rank and window (caps the model's work at O(starts + detours)).
inline constexpr size_t kModelStarts = 200'000;

// A log-binned histogram of non-negative durations (delays here, detour lengths in report.h).
class LogHistogram {
 public:
  static constexpr int kBinsPerOctave = 8;
  static constexpr int kBins = 1 + 48 * kBinsPerOctave;  // bin 0 = no delay; up to 2^48 ns

  LogHistogram();
  void add(int64_t ns);
  void merge(const LogHistogram& other);
  uint64_t count() const { return total_; }
  // E[max of n independent draws], ns (0 when empty).
  double expectedMaxNs(double n) const;
  // P(max of n draws > 0).
  double probabilityDelayed(double n) const;
  // Nearest-rank quantile q in [0, 1]: the mean of the bin holding that rank, ns (0 when empty;
  // within one bin, 9% wide, of the exact value).
  double quantileNs(double q) const;
  // Sum of all values, ns.
  double sumNs() const;
  // Non-empty bins as (lower edge ns, upper edge ns, count), for histograms.
  struct Bin {
    double lowNs = 0, highNs = 0;
    uint64_t count = 0;
  };
  std::vector<Bin> bins() const;
  // Sparse [[bin, count, sum_ns], ...].
  nlohmann::json toJson() const;
  // Inverse of toJson, bounded: ProtocolError naming `what` for a malformed document.
  static LogHistogram fromJson(const nlohmann::json& j, std::string_view what);

 private:
  static int binOf(int64_t ns);
  std::vector<uint64_t> counts_;
  std::vector<double> sums_;
  uint64_t total_ = 0;
};

// Adds the delays D of a compute of `workNs` started at up to `starts` evenly spaced times of
// `trace` (step 1 above). Uses the stored detours only.
void addDelays(const DetourTrace& trace, int64_t workNs, size_t starts, LogHistogram& into);

// One line of the prediction table.
struct Prediction {
  int ranks = 0;
  double workUs = 0;       // T
  double delayUs = 0;      // E[max_N D]
  double probDelayed = 0;  // 0..1
  double slowdown = 0;     // (T + delay) / T
};
Prediction predict(const LogHistogram& pooled, int ranks, double workUs);

}  // namespace rdmabench::noise
