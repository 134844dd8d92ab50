// The engines' parameters of a test description (spec_params.h).
#include "engine/spec_params.h"

namespace rdmabench::engine {

PingPongParams pingPongParams(const TestSpec& spec, uint64_t bytes, uint64_t iterations,
                              uint64_t warmup, bool initiator) {
  PingPongParams p;
  p.op = dataOp(spec.op);
  p.bytes = bytes;
  p.iterations = iterations;
  p.warmup = warmup;
  p.initiator = initiator;
  p.check = spec.check;
  return p;
}

BandwidthParams bandwidthParams(const TestSpec& spec, uint64_t bytes, uint64_t iterations,
                                uint64_t warmup, bool sender) {
  BandwidthParams p;
  p.op = dataOp(spec.op);
  p.mode = spec.mode;
  p.bytes = bytes;
  p.iterations = iterations;
  p.warmup = warmup;
  p.window = spec.inFlight();
  p.cqModeration = spec.cqModeration;
  p.postList = spec.postList;
  p.sender = sender;
  p.bidirectional = spec.bidirectional;
  p.check = spec.check;
  return p;
}

}  // namespace rdmabench::engine
