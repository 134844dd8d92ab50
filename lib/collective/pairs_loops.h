#pragma once
// Internal to lib/collective (pairs.cc, allreduce's cost model in bench_allreduce.cc) and its
// tests: the two sides of a pair's measurements, run on the measurement core's loops
// (engine/timed_loop.h) over a connected
// Communicator whose data area holds at least max(2 * latency bytes, bandwidth bytes + 4).
// Both sides run the same counts; errors are the Communicator's (TimeoutError, TransportError
// naming the stage). Nothing allocates or formats per iteration. Thread-safety: one thread.

#include <cstdint>

#include "collective/comm.h"
#include "stats/summary.h"

namespace rdmabench::collective::detail {

// Latency initiator: `warm` + `iters` ping-pongs of `bytes` with `peer` (the ping-pong engine's
// method: the reply's receive posted outside the timed interval); the summary of the measured
// iterations' one-way latency (round trip / 2, microseconds). Its waits' errors name `step`
// (an engine::Step pattern whose argument is the peer; a string literal).
stats::Summary pingInitiator(Communicator& c, int peer, uint64_t bytes, uint64_t warm,
                             uint64_t iters, const char* step = "latency ping-pong with rank {}");
// Latency responder: echoes `total` (= warm + iters) messages, its next receive posted before
// each reply leaves. `step` as pingInitiator's (nullptr: the step set before stays).
void pingResponder(Communicator& c, int peer, uint64_t bytes, uint64_t total,
                   const char* step = nullptr);

// Bandwidth sender: osu_bw's window loop, `warm` + `iters` windows of `window` x `bytes`, each
// acknowledged by the receiver; MB/s (10^6 B/s) of the measured windows, from before the first
// measured window to the last acknowledgement.
double streamSender(Communicator& c, int peer, uint64_t bytes, uint64_t window, uint64_t warm,
                    uint64_t iters);
// Bandwidth receiver: `total` windows, the next window's receives posted before each
// acknowledgement leaves.
void streamReceiver(Communicator& c, int peer, uint64_t bytes, uint64_t window, uint64_t total);

}  // namespace rdmabench::collective::detail
