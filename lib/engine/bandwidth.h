#pragma once
// Bandwidth / message-rate engine (osu_bw, osu_bibw, perftest ib_{send,write,read}_bw).
//
// Two methods (docs/metrics.md, "window vs stream"):
//  - BwMode::kWindow (osu_bw / osu_bibw): each iteration posts `window` messages per connection
//    and waits for their completions; for send/recv the receiver acks every window (osu_bw).
//    Bidirectional: both sides post and receive windows at once, no per-window acks (osu_bibw).
//    The loop is the measurement core's (engine/timed_loop.h runWindows), as pairs' stream.
//    `iterations` and `warmup` count windows.
//  - BwMode::kStream (perftest, ucx_perftest STREAM_UNI): keeps `window` posts (the --tx-depth)
//    in flight per connection and re-posts as completions arrive. `iterations` and `warmup`
//    count messages per connection. Warmup posts are drained before the clock starts.
// Delivery: the clock stops only when the target holds the data, on every transport. For send,
// the receiver acks after it received the last message (per window in window mode); for write,
// the writer sends a fin after its last write and the target acks it (ordered after the writes:
// docs/transport.md); for read, the reader's last read completion is local delivery. So the
// timed interval runs from the first measured post to that delivery event.
// The target times its own interval: send, from its last warmup receive (or the first measured
// one, which it then does not count) to the last receive; write/read, from the initiator's start
// marker (sent just before the first measured post) to its fin.
// MB/s = bytes * messages / seconds / 10^6 (10^6 B/s, as OSU); bidirectional figures add both
// directions (osu_bibw).
// --check: the sender stamps its send area with a per-size pattern before the run and the target
// verifies the last message landed; then a separate, untimed verification pass sends up to
// kCheckMessages messages one at a time, each with its own pattern, and the target verifies each
// (bidirectional: one direction after the other). Wrong messages are counted in `wrong`.
// Errors: TimeoutError / TransportError (Progress), UsageError for bad parameters.
// Thread-safety: one run per thread; the Device/Links belong to the caller's thread.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/desched.h"
#include "common/measure_clock.h"
#include "common/stall.h"
#include "engine/link.h"
#include "engine/progress.h"
#include "engine/spec.h"

namespace rdmabench::engine {

// DataOp and BwMode (and their names) are the test description's (engine/spec.h).

// Largest number of messages the untimed verification pass of --check sends per direction.
inline constexpr uint64_t kCheckMessages = 256;

struct BandwidthParams {
  DataOp op = DataOp::kSend;
  BwMode mode = BwMode::kWindow;
  uint64_t bytes = 0;
  uint64_t iterations = 0;    // window mode: windows; stream mode: messages per connection
  uint64_t warmup = 0;        // same unit as iterations
  uint32_t window = 64;       // window mode: messages per window; stream: posts in flight
  uint32_t cqModeration = 1;  // a completion every N posts; capped at the depth / send queue
  // Posts handed to the transport in one call (perftest -l): 1..window. Stream mode posts a
  // batch once that many slots are free (or the rest of the run is shorter).
  uint32_t postList = 1;
  bool sender = true;          // unidirectional role (client = sender/initiator)
  bool bidirectional = false;  // both sides send and receive
  bool check = false;          // verify payloads (see above)
  // The interval's clock, nanoseconds (differences only). Default: measureNs, the measurement
  // clock (common/measure_clock.h: --clock, selected at start-up; CLOCK_MONOTONIC in a process
  // that never selected one). Tests inject a fake; null is refused (runBandwidth: Error).
  int64_t (*clock)() = &measureNs;
  // Called once this side's first receives are posted, before it sends or waits: the server
  // tells the client "size ready" here (as PingPongParams::ready). Empty: nothing to call.
  std::function<void()> ready;
};

struct BandwidthResult {
  double seconds = 0;             // this side's measured interval
  uint64_t messages = 0;          // messages this side sent (or, target: received) while timed
  uint64_t messagesBothWays = 0;  // bidirectional: sent + received; else = messages
  double megabytesPerSec = 0;     // this side's figure (bidirectional: both directions)
  double messagesPerSec = 0;
  bool target = false;   // this side was the data target (uni receiver / write-read target)
  uint64_t checked = 0;  // messages verified by this side (check = true)
  uint64_t wrong = 0;    // of those, messages whose payload or length was wrong
  DeschedDelta desched;  // what this side's loop (warmup included) lost (common/desched.h)
  // The sending side's longest pause in its timed interval (common/stall.h): marks per window
  // (window mode) or per --tx-depth completions of the first connection (stream mode).
  // Empty (intervals 0) on a side that only receives.
  GapStats stall;
  // Times a data receive's completion left its connection with no data receive posted while
  // more messages were still due (the peer's next message then waits as an unexpected one;
  // on ofi rxm, whose connections share one socket, it holds up every connection). A
  // diagnostic count, 0 when each connection's receives are kept posted: a poll returns at
  // most 32 completions and every connection is refilled after each poll, so it stays 0
  // whenever the run keeps more than 32 receives posted per connection.
  uint64_t recvStarved = 0;
};

// Messages posted per connection and direction by a run (warmup included); the engine's
// counters are 64-bit, so any value fits (contexts carry the low 40 bits, see link.h).
uint64_t bandwidthPosts(const BandwidthParams& params);

BandwidthResult runBandwidth(transport::Device& device, std::vector<Link>& links,
                             Progress& progress, const BandwidthParams& params);

}  // namespace rdmabench::engine
