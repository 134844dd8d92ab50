#pragma once
// The pure parts of `rdmabench congestion` (docs/congestion.md), after GPCNeT (Chunduri et al.,
// "GPCNeT: Designing a Benchmark Suite for Inducing and Measuring Contention in HPC Networks",
// SC19): which ranks are victims and which aggressors, the victims' random ring, whom each
// aggressor streams to, and how per-iteration times become pooled percentiles and impact
// factors. Pure functions of their arguments; thread-safe.

#include <cstdint>
#include <string>
#include <vector>

namespace rdmabench::collective {

// Aggressor traffic: every aggressor streams to one target (incast, many-to-one) or every
// aggressor to every other (all-to-all).
enum class CongestionPattern { kIncast, kAlltoall };
// "incast" / "alltoall"; parseCongestionPattern throws UsageError naming --pattern.
std::string toString(CongestionPattern p);
CongestionPattern parseCongestionPattern(const std::string& s);

// Victims = ceil(fraction x ranks). UsageError naming --victims, the rank count and the limit
// when that leaves fewer than 2 victims or no aggressor. fraction must be in (0, 1).
int victimCount(int ranks, double fraction);

// Fisher-Yates shuffle driven by std::mt19937_64(seed): the same permutation on every
// platform (std::shuffle's is implementation-defined).
std::vector<int> seededShuffle(std::vector<int> v, uint64_t seed);

// Who does what. Ranks ascending in `victims` and `aggressors`.
struct CongestionPlan {
  std::vector<int> victims, aggressors;
  std::vector<int> ring;  // the victims in random-ring order (ring[i] talks to ring[i +- 1])
  int incastTarget = -1;  // incast: the aggressor every other aggressor streams to
};

// `nodeOfRank[r]` names rank r's node (any string; equal = same node). Victims are spread over
// the nodes: the nodes in seeded random order, each node's ranks in seeded random order, then
// one victim per node in turn until `victims` are taken (so with one rank per node whole nodes
// are victims, as in GPCNeT; with several, every node gets victims and aggressors alike). The
// ring is a seeded permutation of the victims. The incast target is the aggressor sharing a
// node with the most victims (ties: the first in seeded order), the harshest case for the
// victims' last hop; with no such aggressor, a seeded pick. std::invalid_argument when
// victims < 2 or victims >= nodeOfRank.size().
CongestionPlan planCongestion(const std::vector<std::string>& nodeOfRank, int victims,
                              uint64_t seed);

// The ring neighbours of victim `rank` (left = previous, right = next in plan.ring).
// std::invalid_argument when `rank` is not a victim.
struct RingNeighbours {
  int left = -1, right = -1;
};
RingNeighbours ringNeighbours(const CongestionPlan& plan, int rank);

// The aggressor `rank` streams to (targets) and receives streams from (sources), ascending.
// Empty for a victim.
std::vector<int> aggressorTargets(const CongestionPlan& plan, CongestionPattern p, int rank);
std::vector<int> aggressorSources(const CongestionPlan& plan, CongestionPattern p, int rank);

// The quantile grid one victim publishes: kGridPoints values, point j = the nearest-rank
// quantile j / (kGridPoints - 1) of `samples` (so p50 and p99 are exact grid points).
// Empty input gives an empty grid.
constexpr int kGridPoints = 201;
std::vector<double> quantileGrid(std::vector<double> samples);
// Nearest-rank quantile q (0..1) of all grids' points pooled with equal weight (every victim
// runs the same number of iterations); NaN when there are none.
double pooledQuantile(const std::vector<std::vector<double>>& grids, double q);

// GPCNeT's congestion impact factor on times: congested / isolated (> 1 = slower under
// congestion; for bandwidth this equals isolated MB/s / congested MB/s). NaN unless both are
// finite and > 0.
double impactFactor(double isolatedTime, double congestedTime);

}  // namespace rdmabench::collective
