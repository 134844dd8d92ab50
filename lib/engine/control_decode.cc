// Pure decoders of the pair protocol's control messages (control_decode.h).
#include "engine/control_decode.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "common/error.h"
#include "common/json_read.h"
#include "rendezvous/protocol.h"

namespace rdmabench::engine::pairing {

using nlohmann::json;

// libfabric variables that change what goes on the wire (rxm/rxd eager, SAR and rendezvous
// protocols, shm's), so both sides must agree: the client sends its own with the test
// description and the server's session adopts them. Local-only ones (interfaces, logging,
// provider paths) stay each side's own.
constexpr const char* kWireEnvPrefixes[] = {"FI_OFI_RXM_", "FI_OFI_RXD_", "FI_SHM_"};

bool isWireEnvName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  for (const char* p : kWireEnvPrefixes)
    if (name.rfind(p, 0) == 0 && name.size() > std::strlen(p)) return true;
  return false;
}

void checkWireEnv(const json* requested, std::string_view what) {
  if (!requested) return;
  if (!requested->is_object()) throw ProtocolError(fmt::format("{}: not a JSON object", what));
  if (requested->size() > kMaxWireEnv)
    throw ProtocolError(
        fmt::format("{}: {} variables, limit {}", what, requested->size(), kMaxWireEnv));
  for (const auto& [name, value] : requested->items()) {
    if (!isWireEnvName(name))
      throw ProtocolError(fmt::format("{}: \"{}\" is not a libfabric protocol variable ({}*)", what,
                                      escapeForLog(name, 64), "FI_OFI_RXM_, FI_OFI_RXD_, FI_SHM_"));
    std::string v = jsonString(*requested, name, what, {}, kMaxWireEnvValue);
    for (unsigned char c : v)
      if (c < 0x20 || c == 0x7f)
        throw ProtocolError(fmt::format("{}: {} holds a control character", what, name));
  }
}

namespace {

enum class EnvKind { kNumber, kBool, kWaitObj };

// One adoptable variable: its kind and, for numbers, the accepted range.
struct EnvRule {
  const char* name;
  EnvKind kind;
  uint64_t min = 0, max = 0;
};

constexpr uint64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;

// libfabric 1.17's wire-relevant variables (`fi_info -e`). Bounds: a few times the defaults
// for sizes and depths, so every tuning of docs/transport-ofi.md fits, and the memory they size
// is further bounded by --max-bytes (rxmPoolBytes); CPU-only knobs within sane ranges.
constexpr EnvRule kEnvRules[] = {
    {"FI_OFI_RXM_BUFFER_SIZE", EnvKind::kNumber, 256, 16 * kMiB},
    {"FI_OFI_RXM_EAGER_LIMIT", EnvKind::kNumber, 0, 16 * kMiB},
    {"FI_OFI_RXM_SAR_LIMIT", EnvKind::kNumber, 0, 1 * kGiB},
    {"FI_OFI_RXM_COMP_PER_PROGRESS", EnvKind::kNumber, 1, 4096},
    {"FI_OFI_RXM_USE_SRX", EnvKind::kBool},
    {"FI_OFI_RXM_TX_SIZE", EnvKind::kNumber, 1, 65536},
    {"FI_OFI_RXM_RX_SIZE", EnvKind::kNumber, 1, 65536},
    {"FI_OFI_RXM_MSG_TX_SIZE", EnvKind::kNumber, 1, 65536},
    {"FI_OFI_RXM_MSG_RX_SIZE", EnvKind::kNumber, 1, 65536},
    {"FI_OFI_RXM_CM_PROGRESS_INTERVAL", EnvKind::kNumber, 0, 10'000'000},
    {"FI_OFI_RXM_CQ_EQ_FAIRNESS", EnvKind::kNumber, 1, 65536},
    {"FI_OFI_RXM_DATA_AUTO_PROGRESS", EnvKind::kBool},
    {"FI_OFI_RXM_USE_RNDV_WRITE", EnvKind::kBool},
    {"FI_OFI_RXM_ENABLE_DYN_RBUF", EnvKind::kBool},
    {"FI_OFI_RXM_ENABLE_DIRECT_SEND", EnvKind::kBool},
    {"FI_OFI_RXM_ENABLE_PASSTHRU", EnvKind::kBool},
    {"FI_OFI_RXM_DEF_WAIT_OBJ", EnvKind::kWaitObj},
    {"FI_OFI_RXM_DEF_TCP_WAIT_OBJ", EnvKind::kWaitObj},
    {"FI_OFI_RXD_SPIN_COUNT", EnvKind::kNumber, 1, 1'000'000},
    {"FI_OFI_RXD_RETRY", EnvKind::kBool},
    {"FI_OFI_RXD_MAX_PEERS", EnvKind::kNumber, 1, 1024},
    {"FI_OFI_RXD_MAX_UNACKED", EnvKind::kNumber, 1, 1024},
    {"FI_SHM_SAR_THRESHOLD", EnvKind::kNumber, 0, UINT64_MAX},
    {"FI_SHM_TX_SIZE", EnvKind::kNumber, 1, 16384},
    {"FI_SHM_RX_SIZE", EnvKind::kNumber, 1, 16384},
    {"FI_SHM_DISABLE_CMA", EnvKind::kBool},
    {"FI_SHM_USE_DSA_SAR", EnvKind::kBool},
    {"FI_SHM_ENABLE_DSA_PAGE_TOUCH", EnvKind::kBool},
};

const EnvRule* findRule(std::string_view name) {
  for (const EnvRule& r : kEnvRules)
    if (name == r.name) return &r;
  return nullptr;
}

// A plain decimal (1..20 digits, no sign, base prefix or exponent: libfabric's strtol-style
// parsers read those differently); nullopt when not one or above UINT64_MAX.
std::optional<uint64_t> parseDecimal(std::string_view v) {
  if (v.empty() || v.size() > 20) return std::nullopt;
  uint64_t x = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (x > (UINT64_MAX - d) / 10) return std::nullopt;
    x = x * 10 + d;
  }
  return x;
}

bool isBoolWord(std::string_view v) {
  for (const char* w : {"0", "1", "on", "off", "true", "false", "yes", "no"})
    if (v == w) return true;
  return false;
}

bool truthy(std::string_view v) {
  return v == "1" || v == "on" || v == "true" || v == "yes";
}

std::string envValue(const json& env, const char* name) {
  auto it = env.find(name);
  return it != env.end() && it->is_string() ? it->get<std::string>() : std::string();
}

uint64_t envNumber(const json& env, const char* name, uint64_t def) {
  return parseDecimal(envValue(env, name)).value_or(def);
}

// The variables that size ofi_rxm's bounce-buffer pools.
constexpr const char* kRxmPoolVars[] = {
    "FI_OFI_RXM_BUFFER_SIZE", "FI_OFI_RXM_EAGER_LIMIT", "FI_OFI_RXM_TX_SIZE", "FI_OFI_RXM_RX_SIZE",
    "FI_OFI_RXM_MSG_TX_SIZE", "FI_OFI_RXM_MSG_RX_SIZE", "FI_OFI_RXM_USE_SRX"};

}  // namespace

uint64_t rxmPoolBytes(const json& env) {
  // libfabric 1.17 defaults (fi_info -e); every factor <= 2^24, so the product fits 64 bits.
  const uint64_t buffer = std::max(envNumber(env, "FI_OFI_RXM_BUFFER_SIZE", 16384),
                                   envNumber(env, "FI_OFI_RXM_EAGER_LIMIT", 16384));
  const bool srx = truthy(envValue(env, "FI_OFI_RXM_USE_SRX"));
  const uint64_t entries = envNumber(env, "FI_OFI_RXM_TX_SIZE", 2048) +
                           envNumber(env, "FI_OFI_RXM_RX_SIZE", 2048) +
                           envNumber(env, "FI_OFI_RXM_MSG_TX_SIZE", 128) +
                           envNumber(env, "FI_OFI_RXM_MSG_RX_SIZE", srx ? 4096 : 128);
  return buffer * entries;
}

void boundWireEnv(const json* requested, const WireEnvBudget& budget, std::string_view what) {
  if (!requested || !requested->is_object()) return;
  bool sizesPools = false;
  for (const auto& [name, value] : requested->items()) {
    const EnvRule* rule = findRule(name);
    if (!rule) {
      std::string known;
      for (const EnvRule& r : kEnvRules)
        known += fmt::format("{}{}", known.empty() ? "" : ", ", r.name);
      throw UsageError(fmt::format(
          "{}: {} is not one of the libfabric variables this server adopts from a client ({}); "
          "unset it on the client",
          what, escapeForLog(name, 64), known));
    }
    const std::string v = value.is_string() ? value.get<std::string>() : std::string();
    const std::string shown = escapeForLog(v, 40);
    switch (rule->kind) {
      case EnvKind::kNumber: {
        auto x = parseDecimal(v);
        if (!x || *x < rule->min || *x > rule->max)
          throw UsageError(fmt::format(
              "{}: {}={}: the server accepts a decimal number in {}..{} for this variable", what,
              name, shown, rule->min, rule->max));
        break;
      }
      case EnvKind::kBool:
        if (!isBoolWord(v))
          throw UsageError(
              fmt::format("{}: {}={}: the server accepts 0/1, on/off, true/false or yes/no", what,
                          name, shown));
        break;
      case EnvKind::kWaitObj:
        if (v != "fd" && v != "pollfd")
          throw UsageError(
              fmt::format("{}: {}={}: the server accepts fd or pollfd", what, name, shown));
        break;
    }
    for (const char* p : kRxmPoolVars)
      if (name == p) sizesPools = true;
  }
  if (!sizesPools) return;
  // A client may always ask for libfabric's defaults; beyond them, within --max-bytes.
  const uint64_t pools = rxmPoolBytes(*requested);
  if (pools <= rxmPoolBytes(json::object())) return;
  if (pools > budget.maxBytes || budget.bufferBytes > budget.maxBytes - pools) {
    std::string set;
    for (const char* p : kRxmPoolVars)
      if (auto it = requested->find(p); it != requested->end() && it->is_string())
        set += fmt::format("{}{}={}", set.empty() ? "" : ", ", p,
                           escapeForLog(it->get<std::string>(), 24));
    throw UsageError(fmt::format(
        "{}: {} size ofi_rxm's bounce buffers to {} bytes (max(buffer size, eager limit) x (tx + "
        "rx + msg tx + msg rx entries)), which with the test's {} bytes of buffers is above the "
        "server's --max-bytes {}",
        what, set, pools, budget.bufferBytes, budget.maxBytes));
  }
}

std::vector<PeerConnection> decodeAddresses(const json& remote, size_t expected,
                                            uint64_t minRegionBytes, const std::string& peer) {
  // By reference through the bounded readers: never a copy of the peer's DOM.
  const std::string what = fmt::format("connection addresses from {}", peer);
  const json* conns = jsonArray(remote, "connectors", what, kMaxQueuePairs);
  const json* regions = jsonArray(remote, "regions", what, kMaxQueuePairs);
  size_t nc = conns ? conns->size() : 0, nr = regions ? regions->size() : 0;
  if (nc != expected || nr != expected)
    throw ProtocolError(
        fmt::format("peer {} sent {} connection addresses and {} regions, expected {}", peer, nc,
                    nr, expected));
  auto hexItem = [&](const json& v, const char* field) -> const std::string& {
    if (!v.is_string())
      throw ProtocolError(
          fmt::format("{}: field \"{}\" holds a {}, not a hex string", what, field, v.type_name()));
    return v.get_ref<const std::string&>();
  };
  std::vector<PeerConnection> out;
  for (size_t i = 0; i < expected; ++i) {
    PeerConnection c;
    c.address =
        rendezvous::fromHex(hexItem((*conns)[i], "connectors"), transport::kMaxAddressBytes);
    c.region = transport::RemoteRegion::decode(
        rendezvous::fromHex(hexItem((*regions)[i], "regions"), 17 + transport::kMaxKeyBytes));
    if (c.region.length < minRegionBytes)
      throw ProtocolError(fmt::format("peer {} exported a {}-byte buffer, expected {}", peer,
                                      c.region.length, minRegionBytes));
    out.push_back(std::move(c));
  }
  return out;
}

SizeRun decodeSizeStart(const json& j, const TestSpec& spec, std::string_view what) {
  SizeRun run{jsonUint(j, "bytes", what, 0), jsonUint(j, "iterations", what, 0, 1, kMaxIterations),
              jsonUint(j, "warmup", what, 0, 0, kMaxIterations)};
  if (std::find(spec.sizes.begin(), spec.sizes.end(), run.bytes) == spec.sizes.end())
    throw ProtocolError(
        fmt::format("client asked for size {} / {} iterations outside the test "
                    "description",
                    run.bytes, run.iterations));
  return run;
}

json encodeSizeResult(const SizeResult& r, TestKind test) {
  if (test == TestKind::kLatency)
    return json{{"seconds", r.seconds}, {"check_errors", r.wrong}, {"wrong", r.wrong}};
  return json{{"seconds", r.seconds},
              {"mb_per_s", r.megabytesPerSec},
              {"msg_per_s", r.messagesPerSec},
              {"messages", r.messages},
              {"target", r.target},
              {"checked", r.checked},
              {"wrong", r.wrong}};
}

SizeResult decodeSizeResult(const json& j, std::string_view what) {
  SizeResult r;
  r.wrong = jsonUint(j, "wrong", what, 0);
  r.megabytesPerSec = jsonDouble(j, "mb_per_s", what, 0.0, 0.0);
  r.seconds = jsonDouble(j, "seconds", what, 0.0, 0.0);
  return r;
}

}  // namespace rdmabench::engine::pairing
