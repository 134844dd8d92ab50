#pragma once
// Round-robin tournament schedule of `rdmabench pairs` (docs/fabric-map.md): every unordered
// pair of n ranks meets exactly once, in rounds where no rank is in two pairs, so a measurement
// never shares a node with another. Algorithm: the circle method (Kirkman 1847; the classic
// "round-robin tournament" scheduling, e.g. Knuth TAOCP vol. 4A, or Wikipedia's "Round-robin
// tournament, circle method"): with m = n rounded up to even, rank m-1 stays fixed and the
// others rotate one place per round; round r pairs position i with position m-1-i. For odd n
// the phantom rank n is a bye: its partner sits the round out.
// Pure, thread-safe.

#include <utility>
#include <vector>

namespace rdmabench::collective {

// One round: disjoint pairs (a, b) with a < b, ascending by a.
using PairRound = std::vector<std::pair<int, int>>;

// The schedule for `n` ranks: max(0, m-1) rounds of floor(n/2) pairs each (m = n rounded up to
// even), n(n-1)/2 pairs in all. n <= 1 gives no rounds. Throws std::invalid_argument for
// n < 0 or n > 1 << 16 (the pair count would not fit the store's bounded results).
std::vector<PairRound> roundRobinSchedule(int n);

}  // namespace rdmabench::collective
