#include "collective/pairs_schedule.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rdmabench::collective {

std::vector<PairRound> roundRobinSchedule(int n) {
  if (n < 0 || n > (1 << 16))
    throw std::invalid_argument("roundRobinSchedule: " + std::to_string(n) +
                                " ranks, out of range 0..65536");
  std::vector<PairRound> rounds;
  if (n <= 1) return rounds;
  const int m = n % 2 ? n + 1 : n;  // rank m-1 = n is the bye when n is odd
  // pos[i]: the rank at circle position i; position m-1 is fixed.
  std::vector<int> pos(static_cast<size_t>(m));
  for (int i = 0; i < m; ++i)
    pos[static_cast<size_t>(i)] = i;
  for (int r = 0; r < m - 1; ++r) {
    PairRound round;
    for (int i = 0; i < m / 2; ++i) {
      int a = pos[static_cast<size_t>(i)], b = pos[static_cast<size_t>(m - 1 - i)];
      if (a >= n || b >= n) continue;  // the bye
      round.emplace_back(std::min(a, b), std::max(a, b));
    }
    std::sort(round.begin(), round.end());
    rounds.push_back(std::move(round));
    // Rotate positions 0..m-2 by one.
    std::rotate(pos.begin(), pos.begin() + (m - 2), pos.begin() + (m - 1));
  }
  return rounds;
}

}  // namespace rdmabench::collective
