#include "collective/topology.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench::collective {

int ceilLog2(int n) {
  int k = 0;
  while ((1 << k) < n)
    ++k;
  return k;
}

int floorPow2(int n) {
  int p = 1;
  while (p * 2 <= n)
    p *= 2;
  return p;
}

int treeParent(int rank, int n) {
  (void)n;
  if (rank == 0) return -1;
  return rank - (rank & -rank);
}

std::vector<int> treeChildren(int rank, int n) {
  int low = rank == 0 ? (1 << ceilLog2(n)) : (rank & -rank);
  std::vector<int> c;
  for (int d = 1; d < low; d <<= 1)
    if (rank + d < n) c.push_back(rank + d);
  return c;
}

std::vector<BarrierRound> disseminationRounds(int rank, int n) {
  std::vector<BarrierRound> r;
  for (int d = 1; d < n; d <<= 1)
    r.push_back({(rank + d) % n, (rank - d % n + n) % n});
  return r;
}

Fold fold(int rank, int n) {
  Fold f;
  f.pof2 = floorPow2(n);
  f.rem = n - f.pof2;
  if (rank < 2 * f.rem) {
    if (rank % 2 == 0) {
      f.virtualRank = -1;
      f.foldPeer = rank + 1;
      f.sendsFirst = true;
    } else {
      f.virtualRank = rank / 2;
      f.foldPeer = rank - 1;
    }
  } else {
    f.virtualRank = rank - f.rem;
  }
  return f;
}

int realRank(int v, int n) {
  int rem = n - floorPow2(n);
  return v < rem ? 2 * v + 1 : v + rem;
}

std::vector<int> recursiveDoublingPartners(int rank, int n) {
  Fold f = fold(rank, n);
  std::vector<int> p;
  if (f.virtualRank < 0) return p;
  for (int d = 1; d < f.pof2; d <<= 1)
    p.push_back(realRank(f.virtualRank ^ d, n));
  return p;
}

Range blockRange(uint64_t total, int blocks, int b) {
  uint64_t base = total / static_cast<uint64_t>(blocks);
  uint64_t extra = total % static_cast<uint64_t>(blocks);
  uint64_t ub = static_cast<uint64_t>(b);
  return Range{ub * base + std::min(ub, extra), base + (ub < extra ? 1 : 0)};
}

Range blocksRange(uint64_t total, int blocks, int first, int last) {
  if (first >= last) return Range{blockRange(total, blocks, std::min(first, blocks - 1)).offset, 0};
  Range a = blockRange(total, blocks, first), b = blockRange(total, blocks, last - 1);
  return Range{a.offset, b.offset + b.count - a.offset};
}

std::vector<HalvingStep> rabenseifnerSteps(int rank, int n) {
  Fold f = fold(rank, n);
  std::vector<HalvingStep> steps;
  if (f.virtualRank < 0) return steps;
  int v = f.virtualRank, lo = 0;
  for (int d = f.pof2 / 2; d >= 1; d /= 2) {
    HalvingStep s;
    s.peer = realRank(v ^ d, n);
    if ((v & d) == 0) {
      s.keepFirst = lo;
      s.keepLast = lo + d;
      s.sendFirst = lo + d;
      s.sendLast = lo + 2 * d;
    } else {
      s.keepFirst = lo + d;
      s.keepLast = lo + 2 * d;
      s.sendFirst = lo;
      s.sendLast = lo + d;
      lo += d;
    }
    steps.push_back(s);
  }
  return steps;
}

std::vector<int> peersFor(const std::string& algorithm, int rank, int n) {
  std::set<int> s;
  if (algorithm == "tree") {
    if (rank != 0) s.insert(treeParent(rank, n));
    for (int c : treeChildren(rank, n))
      s.insert(c);
  } else if (algorithm == "ring" || algorithm == "ringpingpong") {
    s.insert(ringLeft(rank, n));
    s.insert(ringRight(rank, n));
  } else if (algorithm == "rd" || algorithm == "rabenseifner") {
    Fold f = fold(rank, n);
    if (f.foldPeer >= 0) s.insert(f.foldPeer);
    for (int p : recursiveDoublingPartners(rank, n))
      s.insert(p);
  } else if (algorithm == "barrier") {
    for (const auto& r : disseminationRounds(rank, n)) {
      s.insert(r.sendTo);
      s.insert(r.recvFrom);
    }
  } else {
    throw UsageError(
        fmt::format("--algo {}: unknown (valid: tree, ring, rd, rabenseifner, auto)", algorithm));
  }
  s.erase(rank);
  return std::vector<int>(s.begin(), s.end());
}

std::vector<int> wireupOrder(int rank, std::vector<int> peers) {
  auto key = [rank](int p) {
    const int lo = std::min(rank, p), hi = std::max(rank, p), d = hi - lo;
    return std::make_tuple(d, (lo / d) % 2, lo);
  };
  std::sort(peers.begin(), peers.end(), [&](int a, int b) { return key(a) < key(b); });
  return peers;
}

}  // namespace rdmabench::collective
