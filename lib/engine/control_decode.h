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

}  // namespace rdmabench::engine::pairing
