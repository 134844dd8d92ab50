#pragma once
// Internal to collective/congestion*.cc: the traffic of `rdmabench congestion` (congestion.h):
// the victims' random-ring exchange and an aggressor's windowed streams, over one Communicator
// whose data area follows Layout. Thread-safety: one thread per rank.

#include <cstdint>
#include <vector>

#include "collective/comm.h"
#include "collective/congestion_plan.h"
#include "rendezvous/store.h"

namespace rdmabench::collective::detail {

inline constexpr uint32_t kTagData = 1, kTagFlag = 2, kTagAck = 3, kTagStop = 4;

// The buffer: [0, data) message area (contents never read), then 8-byte words: "more" flag (1),
// "last" flag (0), zeros (acknowledgement and stop sources), a sink for acknowledgements and
// the stop message, and one flag slot per rank (the flag of its current window).
struct Layout {
  uint64_t data = 0;
  uint64_t more() const { return data; }
  uint64_t last() const { return data + 8; }
  uint64_t zero() const { return data + 16; }
  uint64_t sink() const { return data + 24; }
  uint64_t slot(int rank) const { return data + 32 + 8 * static_cast<uint64_t>(rank); }
  uint64_t total(int n) const { return slot(n) + 64; }
};

// The random-ring exchange of one victim: per iteration `window` messages of `bytes` to and
// from each neighbour; the next iteration's receives are posted before this one's sends leave,
// so a neighbour that is one iteration ahead always finds them. Samples in microseconds.
std::vector<double> ringExchange(Communicator& c, RingNeighbours nb, uint64_t bytes,
                                 uint64_t window, uint64_t warm, uint64_t iters);

// What one aggressor sent: data bytes, and seconds from its first window to the stop message.
struct AggOutcome {
  uint64_t bytes = 0;
  double seconds = 0;
};

// What an aggressor streams: to `targets`, from `sources`, windows of `window` x `bytes`, until
// victim rank `leader` sends the stop message; TimeoutError at `deadlineNs` (limitSec in the
// message).
struct AggressorPlan {
  std::vector<int> targets, sources;
  int leader = 0;
  uint64_t bytes = 0, window = 0;
  int64_t deadlineNs = 0;
  double limitSec = 0;
};

// One aggressor under congestion: streams to the targets, receives from the sources, announces
// "cong/started/<me>" once every target acknowledged a window, and finishes after the leader's
// stop message with nothing left posted. TimeoutError at the deadline naming the leader.
AggOutcome aggress(Communicator& c, rendezvous::Store& store, const Layout& L,
                   const AggressorPlan& plan);

}  // namespace rdmabench::collective::detail
