#pragma once
// Decoders of the pair protocol's control messages (docs/wire-protocol.md) that need no device,
// socket or process state: what the server's session and the client read from the peer's
// untrusted JSON frames, checked before anything acts on it. Pure functions, unit-tested and
// driven with arbitrary bytes by fuzz/ (fuzz_control). Errors: ProtocolError naming the message
// (`what` / `peer`), the field and the limit.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/desched.h"
#include "common/stall.h"
#include "engine/spec.h"
#include "transport/transport.h"

namespace rdmabench::engine::pairing {

// One size of a sweep: message bytes, measured iterations, warmup iterations.
struct SizeRun {
  uint64_t bytes = 0, iterations = 0, warmup = 0;
};

// Most wire-relevant variables a test description may carry.
inline constexpr size_t kMaxWireEnv = 64;
// Longest value of one of them, bytes.
inline constexpr size_t kMaxWireEnvValue = 256;

// A libfabric variable that changes what goes on the wire (FI_OFI_RXM_*, FI_OFI_RXD_*, FI_SHM_*:
// upper case, digits and '_', at most 64 bytes).
bool isWireEnvName(std::string_view name);
// Checks the "provider_env" object of a test description (`requested`; nullptr = absent): at
// most kMaxWireEnv members, each a wire-relevant name with a string value of at most
// kMaxWireEnvValue bytes and no control character.
void checkWireEnv(const nlohmann::json* requested, std::string_view what);

// What a server session lets a client's libfabric variables cost (boundWireEnv).
struct WireEnvBudget {
  uint64_t maxBytes = 0;     // the server's --max-bytes
  uint64_t bufferBytes = 0;  // the test's own buffers on the server (queue pairs x per connection)
};

// The server's allowlist of adoptable variables (after checkWireEnv): each name must be one the
// server knows (the FI_OFI_RXM_*, FI_OFI_RXD_* and FI_SHM_* variables of libfabric 1.17, as
// `fi_info -e` lists them), each value a plain decimal within that variable's bounds (sizes,
// depths), a boolean (0/1, on/off, true/false, yes/no) or one of the listed words. The ofi_rxm
// pools the client sizes, max(FI_OFI_RXM_BUFFER_SIZE, FI_OFI_RXM_EAGER_LIMIT) x (FI_OFI_RXM_TX_SIZE
// + FI_OFI_RXM_RX_SIZE + FI_OFI_RXM_MSG_TX_SIZE + FI_OFI_RXM_MSG_RX_SIZE) bytes (libfabric's
// defaults for unset ones: 16384 x 4352 = 71 MB), plus budget.bufferBytes must stay within
// budget.maxBytes whenever they exceed the defaults' cost. Throws UsageError naming the variable,
// its value and the limit (the client exits 2).
void boundWireEnv(const nlohmann::json* requested, const WireEnvBudget& budget,
                  std::string_view what);
// The bytes of ofi_rxm bounce buffers `env` asks for (name -> string value, already checked by
// boundWireEnv's per-variable rules; unset or unparsable: libfabric's default).
uint64_t rxmPoolBytes(const nlohmann::json& env);

// The peer's side of one connection, from its Addresses frame.
struct PeerConnection {
  std::vector<uint8_t> address;  // opaque connector address (<= transport::kMaxAddressBytes)
  transport::RemoteRegion region;
};
// Decodes an Addresses frame ({"connectors": [hex...], "regions": [hex...]}) from `peer`: exactly
// `expected` of each, every region at least `minRegionBytes` long.
std::vector<PeerConnection> decodeAddresses(const nlohmann::json& remote, size_t expected,
                                            uint64_t minRegionBytes, const std::string& peer);

// Decodes a SizeStart frame ({"bytes", "iterations", "warmup"}) against the test description:
// the size must be one of spec.sizes, iterations in 1..kMaxIterations.
SizeRun decodeSizeStart(const nlohmann::json& j, const TestSpec& spec, std::string_view what);

// One side's measurement of one run of a size (pair_side.h runSize), as the client uses it and
// as the server sends it (kSizeResult).
struct SizeResult {
  double seconds = 0;          // this side's measured interval
  uint64_t wrong = 0;          // --check: payload errors this side found (lat: iterations)
  double megabytesPerSec = 0;  // bw: this side's figure (MB/s = 10^6 B/s)
  double messagesPerSec = 0;   // bw: messages/s
  uint64_t messages = 0;       // bw: messages this side sent (or, target: received) while timed
  bool target = false;         // bw: this side was the data target
  uint64_t checked = 0;        // bw --check: messages this side verified
  DeschedDelta desched;        // what this side's loop lost (common/desched.h; not on the wire)
  GapStats stall;              // bw sender: its longest pause (common/stall.h; not on the wire)
};
// The kSizeResult frame: lat {"seconds", "check_errors", "wrong"}; bw {"seconds", "mb_per_s",
// "msg_per_s", "messages", "target", "checked", "wrong"}.
nlohmann::json encodeSizeResult(const SizeResult& r, TestKind test);
// What the client reads of the server's kSizeResult: wrong, seconds and mb_per_s (>= 0; absent
// = 0). ProtocolError naming `what` and the field for a wrong type or range.
SizeResult decodeSizeResult(const nlohmann::json& j, std::string_view what);

}  // namespace rdmabench::engine::pairing
