#include "engine/spec.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"
#include "common/json_read.h"
#include "common/units.h"
#include "engine/buffers.h"

namespace rdmabench::engine {

using nlohmann::json;

json deviceOptionsToJson(const transport::DeviceOptions& o) {
  json j{{"device", o.device},
         {"provider", o.provider},
         {"endpoint_type", o.endpointType},
         {"inline", o.inlineBytes},
         {"tx_depth", o.txDepth},
         {"rx_depth", o.rxDepth},
         {"mtu", o.mtu},
         {"use_event", o.useEvent()},
         {"rdma_cm", o.rdmaCm},
         {"ib_port", o.ibPort},
         {"gid_index", o.gidIndex}};
  // Only when yield: a server from before yield mode reads the same description (and busy
  // polls, use_event false); no protocol version change (docs/wire-protocol.md).
  if (o.progress == transport::ProgressMode::kYield) j["progress"] = toString(o.progress);
  return j;
}

transport::DeviceOptions deviceOptionsFromJson(const json& j) {
  constexpr std::string_view what = "test description server_device";
  transport::DeviceOptions o;
  o.device = jsonString(j, "device", what, {}, 256);
  o.provider = jsonString(j, "provider", what, {}, 256);
  o.endpointType = jsonString(j, "endpoint_type", what, {}, 16);
  o.inlineBytes = jsonInt(j, "inline", what, -1, -1, 1 << 20);
  o.txDepth = static_cast<uint32_t>(jsonUint(j, "tx_depth", what, 0, 0, 1u << 20));
  o.rxDepth = static_cast<uint32_t>(jsonUint(j, "rx_depth", what, 0, 0, 1u << 20));
  o.mtu = static_cast<uint32_t>(jsonUint(j, "mtu", what, 0, 0, 1u << 20));
  o.progress = jsonBool(j, "use_event", what, false) ? transport::ProgressMode::kEvent
                                                     : transport::ProgressMode::kBusyPoll;
  if (jsonFind(j, "progress", what))
    o.progress = parseProgressMode(jsonString(j, "progress", what, {}, 16), "progress");
  o.rdmaCm = jsonBool(j, "rdma_cm", what, false);
  o.ibPort = static_cast<int>(jsonInt(j, "ib_port", what, 1, 0, 255));
  o.gidIndex = static_cast<int>(jsonInt(j, "gid_index", what, -1, -1, 1 << 16));
  return o;
}

namespace {
// `names` in enumerator order; `quoted`: the message quotes the bad name ("--op: 'x' unknown")
// or not ("--mode x: unknown"), as the messages always read.
template <typename Enum, size_t N>
Enum parseName(std::string_view name, const char* const (&names)[N], std::string_view option,
               bool quoted) {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i]) return static_cast<Enum>(i);
  std::string valid;
  for (const char* n : names)
    valid += (valid.empty() ? "" : ", ") + std::string(n);
  throw UsageError(quoted ? fmt::format("{} '{}' unknown (valid: {})", option, name, valid)
                          : fmt::format("{} {}: unknown (valid: {})", option, name, valid));
}
constexpr const char* kTestNames[] = {"lat", "bw"};
constexpr const char* kOpNames[] = {"send", "write", "read", "tagged"};
constexpr const char* kModeNames[] = {"window", "stream"};
constexpr const char* kProgressNames[] = {"busy-poll", "yield", "event"};  // ProgressMode order
}  // namespace

const char* toString(TestKind kind) {
  return kTestNames[static_cast<size_t>(kind)];
}
const char* toString(Op op) {
  return kOpNames[static_cast<size_t>(op)];
}
const char* toString(DataOp op) {
  return kOpNames[static_cast<size_t>(op)];
}
const char* toString(BwMode mode) {
  return kModeNames[static_cast<size_t>(mode)];
}
TestKind parseTestKind(std::string_view name) {
  return parseName<TestKind>(name, kTestNames, "test", true);
}
Op parseOp(std::string_view name) {
  return parseName<Op>(name, kOpNames, "--op:", true);
}
BwMode parseBwMode(std::string_view name) {
  return parseName<BwMode>(name, kModeNames, "--mode", false);
}
transport::ProgressMode parseProgressMode(std::string_view name, std::string_view option) {
  return parseName<transport::ProgressMode>(name, kProgressNames, option, true);
}
transport::OpKind opKind(DataOp op) {
  return op == DataOp::kWrite  ? transport::OpKind::kWrite
         : op == DataOp::kRead ? transport::OpKind::kRead
                               : transport::OpKind::kSend;
}
DataOp dataOp(Op op) {
  switch (op) {
    case Op::kWrite:
      return DataOp::kWrite;
    case Op::kRead:
      return DataOp::kRead;
    case Op::kSend:
    case Op::kTagged:
      break;
  }
  return DataOp::kSend;
}

json TestSpec::toJson() const {
  json j{{"test", toString(test)},
         {"transport", transport},
         {"op", toString(op)},
         {"bidirectional", bidirectional},
         {"sizes", sizes},
         {"iterations", iterations},
         {"warmup", warmup},
         {"duration_s", durationSec},
         {"window", window},
         {"mode", toString(mode)},
         {"queue_pairs", queuePairs},
         {"cq_moderation", cqModeration},
         {"check", check},
         {"timeout_ms", timeoutMs},
         {"server_device", deviceOptionsToJson(serverDevice)}};
  if (postList != 1) j["post_list"] = postList;  // absent = 1 (peers before post lists)
  return j;
}

TestSpec TestSpec::fromJson(const json& j) {
  // Every field through the range-checked readers (common/json_read.h): out-of-range values are
  // refused with the field named, never truncated; limits wider than validate()'s only where
  // validate() names the option in its message.
  constexpr std::string_view what = "test description";
  TestSpec s;
  if (!j.is_object()) throw ProtocolError("test description is not a JSON object");
  auto required = [&](const char* key) {
    if (!jsonFind(j, key, what))
      throw ProtocolError(fmt::format("test description: field \"{}\" missing", key));
    return jsonString(j, key, what, {}, 64);
  };
  s.test = parseTestKind(required("test"));
  s.transport = required("transport");
  s.op = parseOp(required("op"));
  s.bidirectional = jsonBool(j, "bidirectional", what, false);
  const json* sizes = jsonArray(j, "sizes", what, kMaxSizes);
  if (!sizes) throw ProtocolError("test description: field \"sizes\" missing");
  for (const json& v : *sizes) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      throw ProtocolError(
          fmt::format("test description: field \"sizes\" holds {}, not a byte count",
                      escapeForLog(v.dump(), 40)));
    s.sizes.push_back(v.get<uint64_t>());
  }
  s.iterations = jsonUint(j, "iterations", what, 0, 0, kMaxIterations);
  s.warmup = jsonInt(j, "warmup", what, -1, -1, static_cast<int64_t>(kMaxIterations));
  s.durationSec = jsonDouble(j, "duration_s", what, 0.0, 0, 3600);
  s.window = static_cast<uint32_t>(jsonUint(j, "window", what, 64, 0, kMaxWindow));
  s.mode = parseBwMode(jsonString(j, "mode", what, "window", 16));
  s.queuePairs = static_cast<uint32_t>(jsonUint(j, "queue_pairs", what, 1, 0, kMaxQueuePairs));
  s.cqModeration = static_cast<uint32_t>(jsonUint(j, "cq_moderation", what, 1, 0, kMaxWindow));
  s.postList = static_cast<uint32_t>(jsonUint(j, "post_list", what, 1, 0, kMaxWindow));
  s.check = jsonBool(j, "check", what, false);
  s.timeoutMs = jsonInt(j, "timeout_ms", what, 10'000, 0, kMaxTimeoutMs);
  if (const json* dev = jsonObject(j, "server_device", what))
    s.serverDevice = deviceOptionsFromJson(*dev);
  s.txDepth = s.serverDevice.txDepth;  // the client's --tx-depth (TestSpec::txDepth)
  s.validate();
  return s;
}

void TestSpec::validate() const {
  validateOperation();
  validateSizes();
  validateCounts();
  if (transport.empty()) throw UsageError("--transport: empty");
}

void TestSpec::validateOperation() const {
  // libfabric RDM endpoints post every message with fi_tsend/fi_trecv on a per-connection tag
  // (docs/transport-ofi.md), so `tagged` names that path explicitly; elsewhere it does not exist.
  if (op == Op::kTagged && (transport != "ofi" || serverDevice.endpointType == "msg"))
    throw UsageError(
        fmt::format("--op tagged: only for -t ofi with --ep rdm (FI_TAGGED), not -t {}{}",
                    transport, serverDevice.endpointType == "msg" ? " --ep msg" : ""));
  if (bandwidth() && op == Op::kRead && check)
    throw UsageError(
        "--check: not available for `bw --op read` (the reader cannot tell a stale buffer from a "
        "fresh one without a target pass; use `lat --op read --check`)");
}

void TestSpec::validateSizes() const {
  if (sizes.empty()) throw UsageError("--size: no message sizes given");
  if (sizes.size() > kMaxSizes)
    throw UsageError(fmt::format("--size: {} sizes given, limit {}", sizes.size(), kMaxSizes));
  for (uint64_t b : sizes) {
    if (b > kMaxMessageBytes)
      throw UsageError(fmt::format("--size {}: larger than the limit of {} bytes (2 GiB - 1)", b,
                                   kMaxMessageBytes));
    if (b == 0 && oneSided())
      throw UsageError(fmt::format("--size 0: --op {} needs at least 1 byte", toString(op)));
    if (b == 0 && bandwidth()) throw UsageError("--size 0: bandwidth needs at least 1 byte");
  }
}

void TestSpec::validateCounts() const {
  if (iterations > kMaxIterations)
    throw UsageError(fmt::format("--iters {}: out of range 1..{}", iterations, kMaxIterations));
  if (warmup > static_cast<int64_t>(kMaxIterations) || warmup < -1)
    throw UsageError(fmt::format("--warmup {}: out of range 0..{}", warmup, kMaxIterations));
  if (durationSec < 0 || durationSec > 3600)
    throw UsageError(fmt::format("--duration {}: out of range 0..3600 seconds", durationSec));
  if (window < 1 || window > kMaxWindow)
    throw UsageError(fmt::format("--window {}: out of range 1..{}", window, kMaxWindow));
  if (queuePairs < 1 || queuePairs > kMaxQueuePairs)
    throw UsageError(fmt::format("--qp {}: out of range 1..{}", queuePairs, kMaxQueuePairs));
  if (latency() && queuePairs != 1)
    throw UsageError("--qp: several queue pairs only apply to `bw`");
  const uint32_t inFlight = stream() ? streamDepth() : window;
  if (cqModeration < 1 || cqModeration > inFlight)
    throw UsageError(fmt::format("--cq-mod {}: out of range 1..{} ({})", cqModeration, inFlight,
                                 stream() ? "the --tx-depth" : "the window"));
  if (postList < 1 || postList > inFlight)
    throw UsageError(fmt::format("--post-list {}: out of range 1..{} ({})", postList, inFlight,
                                 stream() ? "the --tx-depth" : "the window"));
  if (timeoutMs < 100 || timeoutMs > kMaxTimeoutMs)
    throw UsageError(fmt::format("--timeout {}: out of range 0.1..3600 seconds",
                                 static_cast<double>(timeoutMs) / 1000));
}

uint64_t TestSpec::iterationsFor(uint64_t bytes) const {
  if (latency()) return osuIterations(iterations, bytes, kLatencyIterations);
  return osuIterations(iterations, bytes, kBandwidthIterations, stream() ? 64 : 1);
}

uint64_t TestSpec::warmupFor(uint64_t bytes) const {
  if (latency()) return osuWarmup(warmup, bytes, kLatencyIterations);
  return osuWarmup(warmup, bytes, kBandwidthIterations, stream() ? 64 : 1);
}

uint64_t perftestDefaultIterations(const TestSpec& spec) {
  if (spec.latency()) return kPerftestIterations;
  const uint64_t messages =
      spec.op == Op::kWrite ? kPerftestWriteBwIterations : kPerftestIterations;
  if (spec.stream()) return messages;
  const uint64_t window = std::max<uint32_t>(1, spec.window);
  return (messages + window - 1) / window;
}

uint64_t TestSpec::maxSize() const {
  uint64_t m = 0;
  for (uint64_t b : sizes)
    m = b > m ? b : m;
  return m;
}

uint64_t TestSpec::bytesPerConnection() const {
  return BufferLayout::forMaxMessage(maxSize()).total();
}

DurationChunks::DurationChunks(double targetSec, double estimateSec, uint64_t calibrationIterations)
    : target_(targetSec),
      estimate_(estimateSec > 0 ? estimateSec : 1e-6),
      calibration_(std::max<uint64_t>(calibrationIterations, 1)) {}

uint64_t DurationChunks::next() const {
  const double remaining = target_ - measured_;
  if (remaining <= 0 || (iterations_ > 0 && remaining < 0.5 * estimate_)) return 0;
  const double chunk = std::min(remaining, (iterations_ == 0 ? 0.02 : 0.1) * target_);
  const double ramp = static_cast<double>(iterations_ == 0 ? calibration_ : 2 * iterations_);
  const double n = std::min(std::round(chunk / estimate_), ramp);
  return static_cast<uint64_t>(std::clamp(n, 1.0, static_cast<double>(kMaxIterations)));
}

void DurationChunks::record(uint64_t iterations, double seconds) {
  measured_ += seconds;
  iterations_ += iterations;
  if (iterations > 0 && seconds > 0) estimate_ = seconds / static_cast<double>(iterations);
}

AlignedBuffer::AlignedBuffer(size_t bytes) : size_(bytes) {
  void* p = nullptr;
  size_t rounded = (bytes + 4095) / 4096 * 4096;
  if (rounded == 0) rounded = 4096;
  int rc = posix_memalign(&p, 4096, rounded);
  if (rc != 0) throw SystemError(fmt::format("allocate {} bytes", rounded), rc);
  std::memset(p, 0, rounded);
  data_.reset(static_cast<uint8_t*>(p));
}

void AlignedBuffer::Free::operator()(uint8_t* p) const {
  std::free(p);
}

}  // namespace rdmabench::engine
