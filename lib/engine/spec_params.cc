// The engines' parameters of a test description (spec_params.h).
#include "engine/spec_params.h"

#include <fmt/format.h>

#include "common/error.h"
#include "transport/transport.h"

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

// Here, not in spec.cc: spec.cc is also in the fuzz library, which has no transport::Device.
void checkOpCaps(Op op, const transport::Device& device) {
  const transport::Caps caps = device.caps();
  if (op == Op::kWrite && !caps.rmaWrite)
    throw UsageError(fmt::format("--op write: the {} transport on {} does not support RDMA write",
                                 device.backend(), device.name()));
  if (op == Op::kRead && !caps.rmaRead)
    throw UsageError(fmt::format("--op read: the {} transport on {} does not support RDMA read",
                                 device.backend(), device.name()));
}

}  // namespace rdmabench::engine
