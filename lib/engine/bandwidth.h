#pragma once
// Windowed bandwidth / message-rate engine (osu_bw, osu_bibw, perftest ib_*_bw).
//
// Each iteration the sender posts `window` messages per connection (a completion requested
// every `cqModeration` posts and for the last of the window), waits for their completions and,
// for send/recv, for a small ack from the receiver (osu_bw); RDMA write needs no ack (the
// write completion means the data was placed, as ib_write_bw). Bidirectional: both sides send
// and receive windows at once, no acks (osu_bibw). Receives are pre-posted (up to twice the
// window) and re-posted as they complete.
// Timing: from the first post of the first measured iteration to the last completion (and ack)
// of the last one, on each side. MB/s = bytes * messages / seconds / 10^6 (10^6 B/s, as OSU);
// bidirectional figures add both directions (osu_bibw).
// Errors: TimeoutError / TransportError (Progress), UsageError when the window exceeds the
// receive queue.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/link.h"
#include "engine/progress.h"

namespace rdmabench::engine {

struct BandwidthParams {
  std::string op = "send";  // send | write
  uint64_t bytes = 0;
  uint64_t iterations = 0;
  uint64_t warmup = 0;
  uint32_t window = 64;
  uint32_t cqModeration = 1;
  bool sender = true;          // unidirectional role
  bool bidirectional = false;  // both sides send and receive
};

struct BandwidthResult {
  double seconds = 0;             // measured interval on this side
  uint64_t messages = 0;          // messages this side sent in the measured interval
  uint64_t messagesBothWays = 0;  // bidirectional: sent + received
  double megabytesPerSec = 0;     // this side's figure (bidirectional: both directions)
  double messagesPerSec = 0;
};

BandwidthResult runBandwidth(transport::Device& device, std::vector<Link>& links,
                             Progress& progress, const BandwidthParams& params);

}  // namespace rdmabench::engine
