#pragma once
// The complete description of a point-to-point test. The client builds it from its options and
// sends it to the server (kTestRequest), so the server needs no matching flags; both sides
// validate it with the same function. Units: bytes, milliseconds, seconds where named.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/iterations.h"  // the iteration-count policy (OSU, --max-time)
#include "transport/transport.h"

namespace rdmabench::engine {

// Hard limits a test description must respect (the server additionally applies its --max-bytes).
inline constexpr uint64_t kMaxIterations = 1'000'000'000;
inline constexpr uint32_t kMaxWindow = 4096;
inline constexpr uint32_t kMaxQueuePairs = 64;
inline constexpr size_t kMaxSizes = 64;
inline constexpr int64_t kMaxTimeoutMs = 3'600'000;

struct TestSpec {
  std::string test = "lat";          // "lat" (ping-pong) or "bw" (windowed bandwidth)
  std::string transport = "socket";  // backend name
  std::string op = "send";           // "send", "write", "read" (read: lat only here)
  bool bidirectional = false;        // bw: both sides send at once (osu_bibw)
  std::vector<uint64_t> sizes;       // message sizes, bytes, in run order
  uint64_t iterations = 0;           // measured iterations per size; 0 = automatic
  int64_t warmup = -1;               // warmup iterations per size; -1 = automatic
  double durationSec = 0;            // > 0: each size runs this long by the clock (DurationChunks)
  uint32_t window = 64;              // bw window mode: messages per window (osu_bw's 64)
  std::string mode = "window";       // bw: "window" (osu_bw) or "stream" (perftest)
  uint32_t queuePairs = 1;           // bw: connections used in parallel (perftest -q)
  uint32_t cqModeration = 1;         // bw: request a completion every N posts (perftest -Q)
  bool check = false;                // verify payload data (latency echo / bandwidth pattern)
  int64_t timeoutMs = 10'000;        // longest wait without progress, on either side
  // Device options for the server's side (provider, depths, inline, mtu, event, rdma_cm);
  // `device` is the server's device name (empty = its default).
  transport::DeviceOptions serverDevice;

  nlohmann::json toJson() const;
  // Parses and validates; throws ProtocolError for malformed JSON shapes and UsageError for
  // values out of range (messages name the option and limit).
  static TestSpec fromJson(const nlohmann::json& j);
  // Throws UsageError naming the option, the value and the limit.
  void validate() const;

  // Iterations / warmup actually used for `bytes` (OSU defaults when automatic:
  // latency 10000/100 up to 8 KiB and 1000/10 above; bandwidth 100/10 and 20/2 windows; bw
  // stream mode counts messages: the same data as 64-message windows, 6400/640 and 1280/128).
  uint64_t iterationsFor(uint64_t bytes) const;
  uint64_t warmupFor(uint64_t bytes) const;
  // bw stream mode: posts kept in flight per connection = --tx-depth (serverDevice.txDepth,
  // which the CLI copies from the client's), default 128 as perftest's bandwidth tests.
  uint32_t streamDepth() const { return serverDevice.txDepth ? serverDevice.txDepth : 128; }
  // Largest size in the sweep.
  uint64_t maxSize() const;
  // Bytes one side allocates per connection for this test (buffer layout in buffers.h).
  uint64_t bytesPerConnection() const;
};

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

// JSON (de)serialisation of the DeviceOptions subset that travels to the server.
nlohmann::json deviceOptionsToJson(const transport::DeviceOptions& o);
transport::DeviceOptions deviceOptionsFromJson(const nlohmann::json& j);

}  // namespace rdmabench::engine
