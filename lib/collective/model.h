#pragma once
// `--algo auto`: the alpha-beta-gamma (Hockney + reduction) cost model, fitted at start-up, and
// the per-size choice. Formulas from Thakur, Rabenseifner and Gropp, "Optimization of
// Collective Communication Operations in MPICH" (IJHPCA 2005), as summarised in
// docs/collectives.md, with p ranks and n bytes:
//   tree         2*ceil(lg p)*alpha + 2*ceil(lg p)*n*beta + ceil(lg p)*n*gamma
//   rd           lg p*(alpha + n*beta + n*gamma)            (+ 2(alpha + n*beta) + n*gamma fold)
//   rabenseifner 2 lg p*alpha + 2(p-1)/p*n*beta + (p-1)/p*n*gamma  (+ fold as rd)
//   ring         2(p-1)*alpha + 2(p-1)/p*n*beta + (p-1)/p*n*gamma
// Pure functions, thread-safe.

#include <cstdint>
#include <map>
#include <string>

namespace rdmabench::collective {

struct CostModel {
  double alphaUs = 0;         // per-message latency, us (half round trip of an 8 B ping-pong)
  double betaUsPerByte = 0;   // per-byte transfer time, us/B (from an 8 B vs 64 KiB ping-pong)
  double gammaUsPerByte = 0;  // per-byte local reduction time, us/B (1 MiB reduction)
};

// Predicted time in us of `algo` for `bytes` on `ranks` ranks.
double predictUs(const CostModel& m, const std::string& algo, int ranks, uint64_t bytes);
// The algorithm with the lowest prediction (ties: tree, rd, rabenseifner, ring order).
std::string chooseAlgorithm(const CostModel& m, int ranks, uint64_t bytes);

}  // namespace rdmabench::collective
