#pragma once
// The point-to-point engines' parameters of a test description: the one mapping from a TestSpec
// (engine/spec.h) to PingPongParams / BandwidthParams, used by `lat` / `bw` (pair_side.cc
// runSize) and by `pairs` (collective/pairs_loops.h), so the two commands hand the engines the
// same operation, method, window, completion moderation and post list for the same options.
// Pure functions of their arguments; thread-safe.

#include <cstdint>

#include "engine/bandwidth.h"
#include "engine/pingpong.h"
#include "engine/spec.h"

namespace rdmabench::engine {

// One size of a latency test: `bytes` per message, `iterations` measured after `warmup`
// (exchanges); the initiator role, --check and the operation (tagged posts as a send) from the
// description. `ready`, `samplesInto` and `clock` are left at their defaults for the caller.
PingPongParams pingPongParams(const TestSpec& spec, uint64_t bytes, uint64_t iterations,
                              uint64_t warmup, bool initiator);

// One size of a bandwidth test: `iterations` and `warmup` in the method's unit (window mode:
// windows; stream mode: messages per connection), the window or stream depth
// (TestSpec::inFlight), --cq-mod, --post-list, --bidir and --check from the description.
BandwidthParams bandwidthParams(const TestSpec& spec, uint64_t bytes, uint64_t iterations,
                                uint64_t warmup, bool sender);

}  // namespace rdmabench::engine
