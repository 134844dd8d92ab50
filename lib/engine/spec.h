#pragma once
// The complete description of a point-to-point test. The client builds it from its options and
// sends it to the server (kTestRequest), so the server needs no matching flags; both sides
// validate it with the same function. Units: bytes, milliseconds, seconds where named.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/iterations.h"  // the iteration-count policy (OSU, --max-time)
#include "transport/transport.h"

namespace rdmabench::engine {

// What a point-to-point test measures: ping-pong latency (`lat`) or bandwidth (`bw`).
enum class TestKind : uint8_t { kLatency, kBandwidth };
// The data operation (--op): two-sided send/receive, RDMA write, RDMA read, or libfabric tagged
// send (RDM endpoints; the engines post it as a send: every RDM message is tagged).
enum class Op : uint8_t { kSend, kWrite, kRead, kTagged };
// What the engines post: tagged is a send (see Op).
enum class DataOp : uint8_t { kSend, kWrite, kRead };
// bw method (docs/metrics.md, "window vs stream"): osu_bw's acked windows or perftest's stream.
enum class BwMode : uint8_t { kWindow, kStream };

// Names as on the command line and the wire: "lat"/"bw", "send"/"write"/"read"/"tagged",
// "window"/"stream".
const char* toString(TestKind kind);
const char* toString(Op op);
const char* toString(DataOp op);
const char* toString(BwMode mode);
// The inverse, for the command line and the wire alike (one set of messages); UsageError naming
// the option and the valid names, e.g. "--op: 'atomic' unknown (valid: send, write, read,
// tagged)".
TestKind parseTestKind(std::string_view name);
Op parseOp(std::string_view name);
BwMode parseBwMode(std::string_view name);
// A progress mode by its wire name (transport::toString: busy-poll, yield, event); UsageError
// "OPTION 'x' unknown (valid: busy-poll, yield, event)".
transport::ProgressMode parseProgressMode(std::string_view name, std::string_view option);
// The engines' operation for `op` (tagged -> send).
DataOp dataOp(Op op);
// The transport's work request kind of a data op (send, write, read).
transport::OpKind opKind(DataOp op);

// Hard limits a test description must respect (the server additionally applies its --max-bytes).
inline constexpr uint64_t kMaxIterations = 1'000'000'000;
inline constexpr uint32_t kMaxWindow = 4096;
inline constexpr uint32_t kMaxQueuePairs = 64;
inline constexpr size_t kMaxSizes = 64;
// The largest message size of lat/bw, bytes (2 GiB - 1: verbs' 31-bit lengths).
inline constexpr uint64_t kMaxMessageBytes = (1ull << 31) - 1;
inline constexpr int64_t kMaxTimeoutMs = 3'600'000;

struct TestSpec {
  TestKind test = TestKind::kLatency;
  std::string transport = "socket";  // backend name
  Op op = Op::kSend;
  bool bidirectional = false;     // bw: both sides send at once (osu_bibw)
  std::vector<uint64_t> sizes;    // message sizes, bytes, in run order
  uint64_t iterations = 0;        // measured iterations per size; 0 = automatic
  int64_t warmup = -1;            // warmup iterations per size; -1 = automatic
  double durationSec = 0;         // > 0: each size runs this long by the clock (DurationChunks)
  uint32_t window = 64;           // bw window mode: messages per window (osu_bw's 64)
  BwMode mode = BwMode::kWindow;  // bw only
  uint32_t queuePairs = 1;        // bw: connections used in parallel (perftest -q)
  uint32_t cqModeration = 1;      // bw: request a completion every N posts (perftest -Q)
  // bw: posts handed to the transport per call (perftest -l), 1..the window / --tx-depth. On
  // the wire "post_list", sent only when not 1 (absent = 1: older peers post one at a time).
  uint32_t postList = 1;
  // bw stream mode: posts kept in flight per connection (--tx-depth); 0 = perftest's 128. On the
  // wire it travels as server_device.tx_depth (the same --tx-depth; protocol unchanged).
  uint32_t txDepth = 0;
  bool check = false;          // verify payload data (latency echo / bandwidth pattern)
  int64_t timeoutMs = 10'000;  // longest wait without progress, on either side
  // Device options for the server's side (provider, depths, inline, mtu, event, rdma_cm);
  // `device` is the server's device name (empty = its default).
  transport::DeviceOptions serverDevice;

  nlohmann::json toJson() const;
  // Parses and validates; throws ProtocolError for malformed JSON shapes and UsageError for
  // values out of range (messages name the option and limit).
  static TestSpec fromJson(const nlohmann::json& j);
  // The one check of a description, on the client (cli::parseClientCommand) and on the server
  // (fromJson): throws UsageError naming the option, the value and the limit.
  void validate() const;
  void validateOperation() const;  // op x test x transport
  void validateSizes() const;
  void validateCounts() const;  // iterations, warmup, duration, window, qp, cq-mod, timeout

  bool latency() const { return test == TestKind::kLatency; }
  bool bandwidth() const { return test == TestKind::kBandwidth; }
  bool stream() const { return bandwidth() && mode == BwMode::kStream; }
  // One-sided (RDMA write or read).
  bool oneSided() const { return op == Op::kWrite || op == Op::kRead; }

  // Iterations / warmup actually used for `bytes` (OSU defaults when automatic:
  // latency 10000/100 up to 8 KiB and 1000/10 above; bandwidth 100/10 and 20/2 windows; bw
  // stream mode counts messages: the same data as 64-message windows, 6400/640 and 1280/128).
  uint64_t iterationsFor(uint64_t bytes) const;
  uint64_t warmupFor(uint64_t bytes) const;
  // bw stream mode: posts kept in flight per connection = --tx-depth, default 128 as
  // perftest's bandwidth tests.
  uint32_t streamDepth() const { return txDepth ? txDepth : 128; }
  // Messages in flight per connection and iteration: the window, or the stream depth; 0 = lat.
  uint32_t inFlight() const { return latency() ? 0 : (stream() ? streamDepth() : window); }
  // Largest size in the sweep.
  uint64_t maxSize() const;
  // Bytes one side allocates per connection for this test (buffer layout in buffers.h).
  uint64_t bytesPerConnection() const;
};

// perftest's default counts (perftest_parameters.c: DEF_ITERS 1000; DEF_ITERS_WB 5000 for
// ib_write_bw), in perftest's unit: exchanges (lat) or messages per connection (bw).
inline constexpr uint64_t kPerftestIterations = 1000;
inline constexpr uint64_t kPerftestWriteBwIterations = 5000;

// The `iterations` that give `spec` perftest's default count (-f perftest without -n): lat 1000;
// bw 1000 messages (write 5000): stream mode counts messages, window mode windows, so
// ceil(messages / window) windows (1000 / 64 -> 16 windows, 1024 messages).
uint64_t perftestDefaultIterations(const TestSpec& spec);

// -D SEC: one size measured in chunks (one SizeStart each) until the measured time reaches
// `targetSec`, checked against the clock after every chunk, so noise in the warmup that gave
// the first estimate cannot stretch or shrink the run. A chunk aims at 10% of the target (the
// first at 2%, the last at what remains) at the rate of the chunk before, and has at most as
// many iterations as the calibration (first chunk) or twice those run so far, so a calibration
// that was far too optimistic costs little. The run ends when what remains is under half an
// iteration. Units: seconds. Not thread-safe.
class DurationChunks {
 public:
  // `estimateSec`: seconds per iteration from the calibration (> 0; else 1 us is assumed) of
  // `calibrationIterations` iterations.
  DurationChunks(double targetSec, double estimateSec, uint64_t calibrationIterations);
  // Iterations of the next chunk (1..kMaxIterations); 0 = the target is reached.
  uint64_t next() const;
  // The chunk just run: `iterations` took `seconds` of measured time.
  void record(uint64_t iterations, double seconds);
  double measuredSec() const { return measured_; }
  uint64_t iterations() const { return iterations_; }

 private:
  double target_, estimate_, measured_ = 0;
  uint64_t calibration_, iterations_ = 0;
};

// RDMA write or read on a device whose caps lack it: UsageError "--op write: the ofi transport
// on DEVICE does not support RDMA write" (send and tagged always pass). lat / bw check each
// side's device when it opens (pair_side.cc), pairs each rank's once its Communicator opened.
void checkOpCaps(Op op, const transport::Device& device);

// JSON (de)serialisation of the DeviceOptions subset that travels to the server.
nlohmann::json deviceOptionsToJson(const transport::DeviceOptions& o);
transport::DeviceOptions deviceOptionsFromJson(const nlohmann::json& j);

}  // namespace rdmabench::engine
