#pragma once
// Internal to lib/collective (pairs.cc, allreduce's cost model in bench_allreduce.cc) and its
// tests: a pair's measurements are the point-to-point engines' own, run on the link to the peer
// (Communicator::link): latency is engine::runPingPong, bandwidth engine::runBandwidth, so pairs
// and `lat` / `bw` measure with one loop each (engine/timed_loop.h) and give the same figures
// between the same two ranks. Both sides call with the same description; each call starts with
// a handshake of the two (Communicator::pairSync, untimed), after which the receive area is
// zeroed and the pair's receives may be posted in any order. The Communicator's data area must
// hold pairLayout(largest size).total() bytes. Errors: the engines' (TimeoutError,
// TransportError naming the stage), turned into the root cause when the store knows a rank died
// (Communicator::rethrowWithCause); UsageError for a size above the transport's largest
// message. Nothing allocates or formats per iteration. Thread-safety: one thread.

#include <cstdint>

#include "collective/comm.h"
#include "engine/bandwidth.h"
#include "engine/buffers.h"
#include "engine/pingpong.h"
#include "engine/spec.h"

namespace rdmabench::collective::detail {

// The engines' buffer layout (engine/buffers.h) for messages of up to `maxBytes`.
inline engine::BufferLayout pairLayout(uint64_t maxBytes) {
  return engine::BufferLayout::forMaxMessage(maxBytes);
}

// One latency measurement: the ping-pong engine's parameters (engine/pingpong.h: one-way =
// RTT / 2 for send and write, the round trip for read); `initiator` is set per side.
struct PairLatency {
  engine::PingPongParams run;
  // Names the pair's handshake in errors: an engine::Step pattern whose argument is the peer
  // (a string literal).
  const char* step = "latency ping-pong with rank {}";
};

// One bandwidth measurement: the bandwidth engine's parameters (engine/bandwidth.h: window mode
// counts windows of `window` messages, stream mode messages with `window` in flight); `sender`
// is set per side.
struct PairBandwidth {
  engine::BandwidthParams run;
  const char* step = "bandwidth with rank {}";
};

// UsageError "OPTION BYTES: above the transport's largest message of N bytes" when one message
// of `bytes` is more than the transport sends at once (the engines do not split messages).
void checkPairSize(Communicator& c, uint64_t bytes, const char* option);

// runPingPong on the link to `peer`: the initiator's result carries the samples, the
// responder's is empty of them.
engine::PingPongResult pairLatency(Communicator& c, int peer, bool initiator, const PairLatency& t);
// runBandwidth on the link to `peer`, `sender` the unidirectional role (the initiator of
// write and read).
engine::BandwidthResult pairBandwidth(Communicator& c, int peer, bool sender,
                                      const PairBandwidth& t);

}  // namespace rdmabench::collective::detail
