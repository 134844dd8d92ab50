#include "collective/congestion_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench::collective {

std::string toString(CongestionPattern p) {
  return p == CongestionPattern::kIncast ? "incast" : "alltoall";
}

CongestionPattern parseCongestionPattern(const std::string& s) {
  if (s == "incast") return CongestionPattern::kIncast;
  if (s == "alltoall") return CongestionPattern::kAlltoall;
  throw UsageError(fmt::format("--pattern {}: unknown (valid: incast, alltoall)", s));
}

int victimCount(int ranks, double fraction) {
  if (!(fraction > 0 && fraction < 1))
    throw UsageError(fmt::format("--victims {}: out of range (0, 1)", fraction));
  const int v = static_cast<int>(std::ceil(fraction * ranks - 1e-9));
  // Two aggressors at least: one alone has nobody to stream to (incast needs a target and a
  // source, all-to-all a second rank), so the "congested" phase would carry no traffic.
  if (v < 2 || ranks - v < 2)
    throw UsageError(fmt::format(
        "--victims {}: {} victim(s) and {} aggressor(s) of {} ranks; congestion needs at least 2 "
        "victims and 2 aggressors (victims = ceil(fraction x ranks); at least 4 ranks)",
        fraction, v, ranks - v, ranks));
  return v;
}

std::vector<int> seededShuffle(std::vector<int> v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (size_t i = v.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(rng() % i);  // bias < i / 2^64: negligible
    std::swap(v[i - 1], v[j]);
  }
  return v;
}

CongestionPlan planCongestion(const std::vector<std::string>& nodeOfRank, int victims,
                              uint64_t seed) {
  const int n = static_cast<int>(nodeOfRank.size());
  if (victims < 2 || victims >= n)
    throw std::invalid_argument(
        fmt::format("planCongestion: {} victims of {} ranks (need 2 .. ranks-1)", victims, n));
  // Nodes in order of first appearance, each with its ranks.
  std::vector<std::string> names;
  std::map<std::string, std::vector<int>> ranksOf;
  for (int r = 0; r < n; ++r) {
    auto& v = ranksOf[nodeOfRank[r]];
    if (v.empty()) names.push_back(nodeOfRank[r]);
    v.push_back(r);
  }
  std::vector<int> nodeOrder(names.size());
  for (size_t i = 0; i < names.size(); ++i)
    nodeOrder[i] = static_cast<int>(i);
  nodeOrder = seededShuffle(nodeOrder, seed);
  std::vector<std::vector<int>> local(names.size());
  for (size_t i = 0; i < names.size(); ++i)
    local[i] = seededShuffle(ranksOf[names[i]], seed + 1 + i);
  std::vector<bool> isVictim(static_cast<size_t>(n), false);
  std::vector<size_t> taken(names.size(), 0);
  for (int got = 0; got < victims;)
    for (int node : nodeOrder) {
      if (got == victims) break;
      if (taken[node] < local[node].size()) {
        isVictim[local[node][taken[node]++]] = true;
        ++got;
      }
    }
  CongestionPlan plan;
  for (int r = 0; r < n; ++r)
    (isVictim[r] ? plan.victims : plan.aggressors).push_back(r);
  plan.ring = seededShuffle(plan.victims, seed ^ 0x9e3779b97f4a7c15ull);
  std::map<std::string, int> victimsOn;
  for (int v : plan.victims)
    ++victimsOn[nodeOfRank[v]];
  int best = -1;
  for (int a : seededShuffle(plan.aggressors, seed ^ 0x51ed270b27a3c1e5ull)) {
    if (best < 0 || victimsOn[nodeOfRank[a]] > victimsOn[nodeOfRank[best]]) best = a;
  }
  plan.incastTarget = best;
  return plan;
}

RingNeighbours ringNeighbours(const CongestionPlan& plan, int rank) {
  const auto it = std::find(plan.ring.begin(), plan.ring.end(), rank);
  if (it == plan.ring.end())
    throw std::invalid_argument(fmt::format("ringNeighbours: rank {} is not a victim", rank));
  const size_t m = plan.ring.size(), i = static_cast<size_t>(it - plan.ring.begin());
  return RingNeighbours{plan.ring[(i + m - 1) % m], plan.ring[(i + 1) % m]};
}

namespace {
bool isAggressor(const CongestionPlan& plan, int rank) {
  return std::binary_search(plan.aggressors.begin(), plan.aggressors.end(), rank);
}
}  // namespace

std::vector<int> aggressorTargets(const CongestionPlan& plan, CongestionPattern p, int rank) {
  if (!isAggressor(plan, rank)) return {};
  if (p == CongestionPattern::kIncast)
    return rank == plan.incastTarget ? std::vector<int>{} : std::vector<int>{plan.incastTarget};
  std::vector<int> v;
  for (int a : plan.aggressors)
    if (a != rank) v.push_back(a);
  return v;
}

std::vector<int> aggressorSources(const CongestionPlan& plan, CongestionPattern p, int rank) {
  if (!isAggressor(plan, rank)) return {};
  if (p == CongestionPattern::kIncast && rank != plan.incastTarget) return {};
  std::vector<int> v;
  for (int a : plan.aggressors)
    if (a != rank) v.push_back(a);
  return v;
}

std::vector<double> quantileGrid(std::vector<double> samples) {
  std::vector<double> grid;
  if (samples.empty()) return grid;
  std::sort(samples.begin(), samples.end());
  const size_t m = samples.size();
  for (int j = 0; j < kGridPoints; ++j) {
    const double q = static_cast<double>(j) / (kGridPoints - 1);
    // Nearest rank: the ceil(q m)-th smallest (1-based), the smallest for q = 0.
    size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(m) - 1e-9));
    k = std::clamp<size_t>(k, 1, m);
    grid.push_back(samples[k - 1]);
  }
  return grid;
}

double pooledQuantile(const std::vector<std::vector<double>>& grids, double q) {
  std::vector<double> all;
  for (const auto& g : grids)
    all.insert(all.end(), g.begin(), g.end());
  if (all.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(all.begin(), all.end());
  size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(all.size()) - 1e-9));
  k = std::clamp<size_t>(k, 1, all.size());
  return all[k - 1];
}

double impactFactor(double isolatedTime, double congestedTime) {
  if (!std::isfinite(isolatedTime) || !std::isfinite(congestedTime) || isolatedTime <= 0 ||
      congestedTime <= 0)
    return std::numeric_limits<double>::quiet_NaN();
  return congestedTime / isolatedTime;
}

}  // namespace rdmabench::collective
