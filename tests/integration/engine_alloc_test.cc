// Issue #26: the timed loops of lat and bw (the engine's ping-pong and bandwidth loops, every
// data op, window and stream mode, post lists of 1 and 32) do not allocate per message. Each case
// runs on the null transport (lib/transport/null_device.h) twice, with N and 2N measured
// iterations, counting every allocation of the whole run (alloc_count.h); set-up and teardown are
// the same for both, so the two counts must be equal: a single allocation or formatted string per
// message or per window would add at least N.
// --check runs for send ping-pong only: on the null device's self connection a written or read
// payload is the initiator's own, not the responder's pattern, and bw's verification pass
// waits for a peer that a self connection does not have. (--check's payload test runs outside
// the timed part of bw; its socket/ofi/verbs runs are in the transport tests.)
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "alloc_count.h"
#include "engine/bandwidth.h"
#include "engine/buffers.h"
#include "engine/pingpong.h"
#include "engine/progress.h"
#include "transport/null_device.h"

namespace rdmabench::engine {
namespace {

// One null device and its self-connected endpoint, as bench/engine_ceiling sets them up.
struct NullLink {
  std::unique_ptr<transport::Device> device;
  std::unique_ptr<transport::Endpoint> endpoint;
  std::unique_ptr<AlignedBuffer> buffer;
  std::unique_ptr<transport::MemoryRegion> region;
  std::vector<Link> links;

  explicit NullLink(uint64_t bytes) {
    transport::DeviceOptions o;
    o.txDepth = 128;
    device = transport::openNullDevice(o);
    endpoint = transport::openNullEndpoint(*device);
    Link link;
    link.layout = BufferLayout::forMaxMessage(bytes);
    buffer = std::make_unique<AlignedBuffer>(link.layout.total());
    region = device->registerMemory(buffer->data(), buffer->size());
    link.endpoint = endpoint.get();
    link.region = region.get();
    link.remote = region->exportRegion();
    links.push_back(link);
  }
};

const char* opName(DataOp op) {
  return op == DataOp::kSend ? "send" : op == DataOp::kWrite ? "write" : "read";
}

// Allocations of one whole bandwidth run of `iterations` measured iterations.
uint64_t bandwidthAllocations(BandwidthParams p, uint64_t iterations) {
  NullLink n(p.bytes);
  Progress progress(*n.device, 10'000, {}, "self", transport::ProgressMode::kBusyPoll);
  p.iterations = iterations;
  rdmabench::testing::startCountingAllocations();
  const BandwidthResult r = runBandwidth(*n.device, n.links, progress, p);
  const uint64_t count = rdmabench::testing::stopCountingAllocations();
  EXPECT_GT(r.messages, 0u);
  EXPECT_EQ(r.wrong, 0u);
  return count;
}

// Allocations of one whole ping-pong run of `iterations` measured iterations.
uint64_t pingPongAllocations(PingPongParams p, uint64_t iterations) {
  NullLink n(p.bytes);
  Progress progress(*n.device, 10'000, {}, "self", transport::ProgressMode::kBusyPoll);
  p.iterations = iterations;
  rdmabench::testing::startCountingAllocations();
  const PingPongResult r = runPingPong(*n.device, n.links[0], progress, p);
  const uint64_t count = rdmabench::testing::stopCountingAllocations();
  EXPECT_EQ(r.checkErrors, 0u);
  return count;
}

TEST(EngineTimedLoop, BandwidthDoesNotAllocatePerMessage) {
  for (BwMode mode : {BwMode::kWindow, BwMode::kStream})
    for (DataOp op : {DataOp::kSend, DataOp::kWrite, DataOp::kRead})
      for (uint32_t postList : {1u, 32u}) {
        BandwidthParams p;
        p.op = op;
        p.mode = mode;
        p.bytes = 64;
        p.warmup = 4;
        p.window = 64;
        p.cqModeration = 16;
        p.postList = postList;
        p.bidirectional = true;  // a self connection is both sides
        const uint64_t n = mode == BwMode::kStream ? 4000 : 60;
        const uint64_t a = bandwidthAllocations(p, n);
        const uint64_t b = bandwidthAllocations(p, 2 * n);
        EXPECT_EQ(a, b) << (mode == BwMode::kStream ? "stream " : "window ") << opName(op)
                        << ", post list " << postList << ": " << n << " iterations allocate " << a
                        << " times, " << 2 * n << ": " << b;
      }
}

TEST(EngineTimedLoop, PingPongDoesNotAllocatePerIteration) {
  for (DataOp op : {DataOp::kSend, DataOp::kWrite, DataOp::kRead})
    for (bool check : {false, true}) {
      if (check && op != DataOp::kSend) continue;  // see the note at the top
      PingPongParams p;
      p.op = op;
      p.bytes = 32;
      p.warmup = 10;
      p.check = check;
      const uint64_t a = pingPongAllocations(p, 2000);
      const uint64_t b = pingPongAllocations(p, 4000);
      EXPECT_EQ(a, b) << opName(op) << (check ? ", --check" : "") << ": 2000 iterations allocate "
                      << a << " times, 4000: " << b;
    }
}

}  // namespace
}  // namespace rdmabench::engine
