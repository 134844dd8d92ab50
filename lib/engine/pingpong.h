#pragma once
// Ping-pong latency engine (perftest ib_*_lat, osu_latency, sockperf ping-pong).
//
// The initiator times every iteration on its own clock: t0 just before the post, t1 when the
// reply is seen; one-way latency = (t1 - t0) / 2 for send and write (as perftest, OSU, IMB and
// sockperf report), the full round trip for read (as ib_read_lat). Warmup iterations run first
// in the same loop and are not recorded.
//  - send: the responder echoes each message back from the buffer it arrived in (so `check`
//    verifies the payload round trip at no extra cost); its next receive is posted before the
//    echo leaves, so the initiator's next message never meets an empty receive queue.
//  - write: each side writes into the other's receive area and spins on the last byte of its
//    own receive area (ib_write_lat's method). Where the transport delivers without target
//    progress (Caps::rmaNeedsTargetProgress false: verbs, most libfabric providers) the spin
//    reads only the byte and polls the CQ every `spinsPerPoll` spins (for the moderated send
//    completions, error completions and the timeout checks); where it needs target progress
//    (socket) every spin polls. Needs bytes >= 1.
//  - read: the initiator reads the responder's send area; the responder only progresses its
//    device until the initiator's final control message. Needs bytes >= 1.
// --check: send verifies the echoed payload; write stamps a per-iteration pattern on both sides and
// each side verifies what arrived; read verifies the responder's pattern (readPatternTag, stamped
// by the caller before the size starts: see pair.cc) and clears the landing area after each read.
// The initiators' iteration loop is the measurement core's (engine/timed_loop.h runIterations),
// the one pairs, ring and congestion run too. Timing uses the measurement clock
// (common/measure_clock.h: TSC or CLOCK_MONOTONIC) unless `clock` is injected. Data
// sends and writes are signaled only every `signalEvery` posts (moderated completions, like
// ib_send_lat); the echo of iteration i arriving proves iteration i's send was delivered.
// Errors: TimeoutError / TransportError (from Progress), UsageError for unsupported ops.

#include <cstdint>
#include <functional>

#include "common/desched.h"
#include "engine/link.h"
#include "engine/progress.h"
#include "engine/spec.h"
#include "stats/summary.h"

namespace rdmabench::engine {

struct PingPongParams {
  DataOp op = DataOp::kSend;
  uint64_t bytes = 0;
  uint64_t iterations = 0;  // measured
  uint64_t warmup = 0;
  bool initiator = true;
  bool check = false;
  // Clock in nanoseconds (differences only); nullptr = rdmabench::measureNs. Tests inject a fake.
  int64_t (*clock)() = nullptr;
  // Send/write completions are requested every `signalEvery` posts and for the last post
  // (ib_send_lat's cq_mod); capped at half the send queue. 1 = every post signaled.
  uint32_t signalEvery = 64;
  // Write latency: spins on the payload's last byte between two CQ polls, where the transport
  // needs no target progress (1 = poll every spin; 0 is taken as 1).
  uint32_t spinsPerPoll = 16;
  // Called once this side can take the peer's first message (its first receive posted), before
  // it waits for anything: the server tells the client "size ready" here. A peer told earlier
  // may send into an empty receive queue (RNR), which soft-RoCE fails after about a second
  // (docs/fault-matrix.md). Empty: nothing to call.
  std::function<void()> ready;
  // Where the samples go: nullptr = PingPongResult::samples; else appended to this set (-D runs
  // a size in chunks and keeps one distribution).
  stats::SampleSet* samplesInto = nullptr;
};

struct PingPongResult {
  stats::SampleSet samples;  // per-iteration latency, ns (one-way, or round trip for read)
  uint64_t checkErrors = 0;  // iterations whose payload differed (check = true; this side's view)
  double seconds = 0;        // wall time of the measured iterations (warmup excluded)
  DeschedDelta desched;      // what this side's loop (warmup included) lost (common/desched.h)
};

// Runs one size on `link`. The caller has synchronised both sides (the receive area is
// zeroed before the size starts) and set the Progress phase.
PingPongResult runPingPong(transport::Device& device, Link& link, Progress& progress,
                           const PingPongParams& params);

}  // namespace rdmabench::engine
