#include "collective/model.h"

#include <cmath>

#include "collective/allreduce.h"
#include "collective/topology.h"

namespace rdmabench::collective {

double predictUs(const CostModel& m, const std::string& algo, int p, uint64_t bytes) {
  if (p <= 1) return 0;
  const double n = static_cast<double>(bytes);
  const double a = m.alphaUs, b = m.betaUsPerByte, g = m.gammaUsPerByte;
  const double lg = ceilLog2(p);
  const double lgPow = std::log2(static_cast<double>(floorPow2(p)));
  const bool pow2 = floorPow2(p) == p;
  const double frac = static_cast<double>(p - 1) / p;
  // The fold of non-power-of-two worlds: one message in, one out, one reduction.
  const double foldCost = pow2 ? 0 : 2 * (a + n * b) + n * g;
  if (algo == "tree") return 2 * lg * a + 2 * lg * n * b + lg * n * g;
  if (algo == "rd") return lgPow * (a + n * b + n * g) + foldCost;
  if (algo == "rabenseifner") return 2 * lgPow * a + 2 * frac * n * b + frac * n * g + foldCost;
  if (algo == "ring") return 2 * (p - 1) * a + 2 * frac * n * b + frac * n * g;
  return 1e300;
}

std::string chooseAlgorithm(const CostModel& m, int ranks, uint64_t bytes) {
  std::string best = "tree";
  double bestT = predictUs(m, best, ranks, bytes);
  for (const char* a : {"rd", "rabenseifner", "ring"}) {
    double t = predictUs(m, a, ranks, bytes);
    if (t < bestT) {
      bestT = t;
      best = a;
    }
  }
  return best;
}

}  // namespace rdmabench::collective
