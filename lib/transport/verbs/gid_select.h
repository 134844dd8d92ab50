#pragma once
// GID table model and automatic GID selection for the verbs backend. Pure functions (no
// libibverbs calls), so the policy is unit-testable on hosts without RDMA.
//
// Policy (the RoCE addressing trouble perftest users report, see shared/research/perftest.md
// section 4.1): prefer a RoCE v2 GID holding an IPv4-mapped address that is the local source
// address towards the peer (or equals --local-host), then a RoCE v2 GID on the netdev carrying
// that address, then any RoCE v2 IPv4-mapped GID, then any RoCE v2 GID, then index 0 (IB, or
// RoCE v1). Thread-safe (no state).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rdmabench::transport::verbs {

using GidBytes = std::array<uint8_t, 16>;

// GID types as reported by ibv_query_gid_ex / sysfs gid_attrs/types.
enum class GidType { kIb, kRoceV1, kRoceV2 };

const char* toString(GidType type);  // "IB", "RoCE v1", "RoCE v2"

// One populated entry of a port's GID table.
struct GidEntry {
  int index = 0;
  GidBytes gid{};
  GidType type = GidType::kIb;
  std::string netdev;  // "" when the entry has no netdev (IB)
};

// True when `gid` is ::ffff:a.b.c.d; then `*ipv4` (network byte order) is set if non-null.
bool isIpv4Mapped(const GidBytes& gid, uint32_t* ipv4 = nullptr);

// Text form: "::ffff:10.0.0.1" style IPv6 notation (inet_ntop).
std::string gidToString(const GidBytes& gid);

// What the selection knows about the local end of the route to the peer.
struct RouteHint {
  std::optional<uint32_t> sourceIpv4;  // local address the kernel uses towards the peer
                                       // (or the --local-host address), network byte order
  std::string sourceNetdev;            // netdev that holds sourceIpv4 ("" = unknown)
};

// Picks the GID index for `entries` (one port's populated entries) by the policy above.
// Returns 0 when `entries` is empty. Deterministic: ties go to the lowest index.
int selectGidIndex(const std::vector<GidEntry>& entries, const RouteHint& hint);

// Resolves the route hint for `peerHost` / `localHost` (either may be empty): the source
// IPv4 address the kernel would use towards peerHost (UDP connect + getsockname, no packet
// is sent), else localHost's IPv4 address; plus the netdev holding it (getifaddrs).
// Never throws: unresolvable names give an empty hint.
RouteHint resolveRouteHint(const std::string& peerHost, const std::string& localHost);

}  // namespace rdmabench::transport::verbs
