// Instrument 1 of issue #26: the ceiling of rdmabench's own loops on one core. Runs the real
// bandwidth engine (runBandwidth, stream mode, RDMA write, like ib_write_bw's message rate)
// and the real ping-pong engine (runPingPong, send) over the null transport
// (lib/transport/null_device.h), which completes every post at once: what is left is the
// engine's and the transport interface's cost per message. Prints, per case, messages (or
// iterations) per second and ns per message: median and [min, max] over the reps.
//
// Usage: engine_ceiling [--reps R] [--messages N] [--only bw|bw32|pp] [--bytes B]
//   --only: run one case once (callgrind: tests/perf/instructions_per_message.sh)
// Build and run: bench/engine_ceiling.sh (one command; this target is outside `all`).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/measure_clock.h"
#include "engine/bandwidth.h"
#include "engine/buffers.h"
#include "engine/pingpong.h"
#include "engine/progress.h"
#include "transport/null_device.h"

namespace {

using namespace rdmabench;

struct Setup {
  std::unique_ptr<transport::Device> device;
  std::unique_ptr<transport::Endpoint> endpoint;
  std::unique_ptr<engine::AlignedBuffer> buffer;
  std::unique_ptr<transport::MemoryRegion> region;
  std::vector<engine::Link> links;

  Setup(uint64_t bytes, uint32_t txDepth) {
    transport::DeviceOptions o;
    o.txDepth = txDepth;
    device = transport::openNullDevice(o);
    endpoint = transport::openNullEndpoint(*device);
    engine::Link link;
    link.layout = engine::BufferLayout::forMaxMessage(bytes);
    buffer = std::make_unique<engine::AlignedBuffer>(link.layout.total());
    region = device->registerMemory(buffer->data(), buffer->size());
    link.endpoint = endpoint.get();
    link.region = region.get();
    link.remote = region->exportRegion();
    links.push_back(link);
  }
};

// Messages per second of one bw stream run (write, both directions over the self connection:
// the writes cost the initiator only; the handshakes are a constant per run).
double bwRate(uint64_t bytes, uint64_t messages, uint32_t postList) {
  Setup s(bytes, 128);
  engine::Progress progress(*s.device, 10'000, {}, "self", transport::ProgressMode::kBusyPoll);
  engine::BandwidthParams p;
  p.op = engine::DataOp::kWrite;
  p.mode = engine::BwMode::kStream;
  p.bytes = bytes;
  p.iterations = messages;
  p.warmup = 1000;
  p.window = 128;
  p.cqModeration = 64;
  p.postList = postList;
  p.bidirectional = true;
  engine::BandwidthResult r = engine::runBandwidth(*s.device, s.links, progress, p);
  return static_cast<double>(r.messages) / r.seconds;
}

// Iterations per second of one send ping-pong run (the echo is the initiator's own message).
double pingPongRate(uint64_t bytes, uint64_t iterations) {
  Setup s(bytes, 128);
  engine::Progress progress(*s.device, 10'000, {}, "self", transport::ProgressMode::kBusyPoll);
  engine::PingPongParams p;
  p.op = engine::DataOp::kSend;
  p.bytes = bytes;
  p.iterations = iterations;
  p.warmup = 100;
  engine::PingPongResult r = engine::runPingPong(*s.device, s.links[0], progress, p);
  return static_cast<double>(iterations) / r.seconds;
}

void report(const char* name, std::vector<double> rates) {
  std::sort(rates.begin(), rates.end());
  const double med = rates[rates.size() / 2];
  std::printf("%-22s %10.2f %8.2f %8.2f %8.1f %5zu\n", name, med / 1e6, rates.front() / 1e6,
              rates.back() / 1e6, 1e9 / med, rates.size());
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7;
  uint64_t messages = 2'000'000, bytes = 8;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--reps")
      reps = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--messages")
      messages = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--bytes")
      bytes = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--only")
      only = argv[i + 1];
    else {
      std::fprintf(stderr, "engine_ceiling: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  rdmabench::selectMeasureClock("auto");
  if (only == "bw") return bwRate(bytes, messages, 1) > 0 ? 0 : 1;
  if (only == "bw32") return bwRate(bytes, messages, 32) > 0 ? 0 : 1;
  if (only == "pp") return pingPongRate(bytes, messages) > 0 ? 0 : 1;
  std::printf("%-22s %10s %8s %8s %8s %5s\n", "case (8 B)", "median[M/s]", "min", "max", "ns/msg",
              "reps");
  std::vector<double> bw1, bw32, pp;
  for (int r = 0; r < reps; ++r) {  // interleaved reps
    bw1.push_back(bwRate(bytes, messages, 1));
    bw32.push_back(bwRate(bytes, messages, 32));
    pp.push_back(pingPongRate(bytes, messages / 4));
  }
  report("bw write, post list 1", bw1);
  report("bw write, post list 32", bw32);
  report("ping-pong send [it]", pp);
  return 0;
}
