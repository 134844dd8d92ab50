// Pure decoders of the pair protocol's control messages (control_decode.h).
#include "engine/control_decode.h"

#include <algorithm>
#include <cstring>

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

}  // namespace rdmabench::engine::pairing
