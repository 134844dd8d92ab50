#pragma once
// Topology math of the collective algorithms, separate from the timed loop so it is unit-tested
// on its own for any world size (docs/collectives.md). Ranks are 0..n-1, n >= 1. Pure functions,
// thread-safe.
//
//  - Binomial tree rooted at 0: parent(r) = r - lowbit(r); children r + 2^k for 2^k < lowbit(r)
//    (lowbit(0) = the power of two >= n). Depth ceil(log2 n).
//  - Dissemination barrier (Hensgen, Finkel, Manber 1988; MPICH): round k sends to
//    (r + 2^k) mod n and receives from (r - 2^k) mod n, k = 0..ceil(log2 n)-1.
//  - Recursive doubling / Rabenseifner for any n (MPICH's scheme, Thakur, Rabenseifner, Gropp
//    2005): with p2 = largest power of two <= n and rem = n - p2, ranks below 2*rem pair up
//    (even r sends its vector to r+1 and sits out); the p2 remaining ranks get "virtual" ranks
//    v (odd r < 2rem: r/2; r >= 2rem: r - rem) and run the power-of-two algorithm; at the end
//    odd r < 2rem send the result back to r-1.
//  - Ring: left (r-1) mod n, right (r+1) mod n; vector split into n blocks.

#include <cstdint>
#include <string>
#include <vector>

namespace rdmabench::collective {

// ceil(log2 n) for n >= 1 (0 for n = 1).
int ceilLog2(int n);
// Largest power of two <= n (n >= 1).
int floorPow2(int n);

// Binomial tree (root 0). parent(0) = -1. Children in ascending order.
int treeParent(int rank, int n);
std::vector<int> treeChildren(int rank, int n);

// Dissemination barrier partners per round: {sendTo, recvFrom}.
struct BarrierRound {
  int sendTo;
  int recvFrom;
};
std::vector<BarrierRound> disseminationRounds(int rank, int n);

// The non-power-of-two fold shared by recursive doubling and Rabenseifner.
struct Fold {
  int pof2 = 1;             // power-of-two group size
  int rem = 0;              // n - pof2
  int virtualRank = -1;     // -1: this rank sits out (even r < 2*rem)
  int foldPeer = -1;        // the partner of the pre/post step, -1 if none
  bool sendsFirst = false;  // true: sends its vector to foldPeer and waits for the result
};
Fold fold(int rank, int n);
// Real rank of virtual rank v in a fold of n ranks.
int realRank(int virtualRank, int n);

// Partners of the power-of-two phase of recursive doubling, in order (real ranks); empty for
// ranks that sit out.
std::vector<int> recursiveDoublingPartners(int rank, int n);

// Element range [offset, offset+count) of block `b` when `total` elements are split into `blocks`
// blocks as evenly as possible (the first total % blocks blocks get one extra element).
struct Range {
  uint64_t offset = 0;
  uint64_t count = 0;
};
Range blockRange(uint64_t total, int blocks, int b);
// Elements of blocks [first, last) (contiguous).
Range blocksRange(uint64_t total, int blocks, int first, int last);

// Rabenseifner's steps for one rank (virtual rank in the fold's power-of-two group).
// Reduce-scatter by recursive halving, step i (distance d = pof2/2, pof2/4, ..., 1): the rank
// keeps block range [keepFirst, keepLast) and sends [sendFirst, sendLast) to `peer`; after the
// last step it owns block `virtualRank`. The allgather by recursive doubling replays the steps
// in reverse: it sends what it kept and receives what it sent.
struct HalvingStep {
  int peer;  // real rank
  int keepFirst, keepLast;
  int sendFirst, sendLast;
};
std::vector<HalvingStep> rabenseifnerSteps(int rank, int n);

// Ring neighbours.
inline int ringLeft(int rank, int n) {
  return (rank + n - 1) % n;
}
inline int ringRight(int rank, int n) {
  return (rank + 1) % n;
}

// Every peer `rank` talks to for `algorithm` ("tree", "ring", "rd", "rabenseifner", "barrier",
// "ringpingpong"), ascending, without duplicates or itself: O(log n) except ring (2).
std::vector<int> peersFor(const std::string& algorithm, int rank, int n);

// The order in which `rank` connects to `peers` during wire-up (Communicator): ascending by the
// pair's global key (d = hi - lo, (lo / d) mod 2, lo) for the pair lo < hi. One total order of
// pairs that every rank follows, so the transports' blocking accepts cannot deadlock (a cycle of
// waits would need a pair whose key is below itself). And within one difference d the pairs of
// each parity form a matching (a rank x is lo of (x, x + d) and hi of (x - d, x), whose parities
// differ), so a chain of waits uses at most one pair per (d, parity): its length is at most
// twice the number of distinct differences, O(log n) for every peersFor() topology. Sorting by
// (lo, hi) instead chains 0-1, 1-2, 2-3, ...: n sequential handshakes. Returns the peers
// reordered; `rank` itself must not be among them.
std::vector<int> wireupOrder(int rank, std::vector<int> peers);

}  // namespace rdmabench::collective
