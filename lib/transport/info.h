#pragma once
// Typed device and connection facts: what Device::info() and Endpoint::info() return for the
// run header, the A/B table and the control channel (the server sends its device's facts).
// Plain values, no JSON: the one conversion to JSON is toJson() in transport/info_json.h,
// called where the facts are written (the peer's are decoded once by its *FromJson()). Value types;
// not synchronized.
//
// What a program decides on is a typed field (common facts, depths, event mode, the data-path
// peer). The backend-specific facts (verbs QPN / GID / firmware, libfabric provider and
// thresholds, socket buffer sizes, ...) are `facts`: written as they are, never read back.

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace rdmabench::transport {

// The device and connection facts every backend states under one name (run header, A/B table,
// `rdmabench info`). Typed, so that a backend cannot spell a shared fact differently from the
// report that reads it (verbs once wrote "inline" where the A/B table read "inline_bytes", and
// the fact was lost). Unset = the backend does not have the fact. Units: bytes.
struct CommonProperties {
  std::optional<uint32_t> port;         // "port": verbs port number
  std::optional<uint32_t> gidIndex;     // "gid_index": verbs GID table index in use
  std::optional<uint32_t> activeMtu;    // "active_mtu": the port's active MTU
  std::optional<uint32_t> mtu;          // "mtu": path MTU in use (verbs: the QP's)
  std::optional<uint64_t> inlineBytes;  // "inline_bytes": largest payload posted inline
  std::optional<uint64_t> injectSize;   // "inject_size": libfabric's inject limit

  // The JSON names, in the order the A/B summary prints them.
  static const std::vector<const char*>& keys();
  // The set fields as "key=value" pairs joined by spaces, in keys() order.
  std::string summary() const;
};

// One backend-specific fact: its name (the JSON member it is written as) and its value (null,
// a flag, a signed or unsigned integer, a text, or a nested group of facts).
struct Fact;
using Facts = std::vector<Fact>;
struct Fact {
  using Value = std::variant<std::nullptr_t, bool, int64_t, uint64_t, std::string, Facts>;
  std::string name;
  Value value;
};

// Appends fact `name` = `value` to `facts`; integers keep their signedness, texts become
// std::string. Returns `facts` (chainable).
template <typename T>
Facts& addFact(Facts& facts, std::string name, T&& value) {
  using V = std::decay_t<T>;
  Fact::Value v;
  if constexpr (std::is_same_v<V, bool> || std::is_same_v<V, std::nullptr_t> ||
                std::is_same_v<V, Facts>)
    v = std::forward<T>(value);
  else if constexpr (std::is_integral_v<V> && std::is_signed_v<V>)
    v = static_cast<int64_t>(value);
  else if constexpr (std::is_integral_v<V>)
    v = static_cast<uint64_t>(value);
  else
    v = std::string(std::forward<T>(value));
  facts.push_back(Fact{std::move(name), std::move(v)});
  return facts;
}

// Facts of an opened device (Device::info()).
struct DeviceInfo {
  CommonProperties common;
  std::optional<uint32_t> txDepth;  // "tx_depth": send queue depth in use, work requests
  std::optional<uint32_t> rxDepth;  // "rx_depth": receive queue depth in use, work requests
  std::optional<bool> eventMode;    // "event_mode": sleeps on completion events (verbs, ofi)
  Facts facts;                      // backend-specific (device, provider, GID, limits, ...)
};

// Facts of one connection (Endpoint::info()).
struct ConnectionInfo {
  // The data-path peer as errors name it (verbs "QPN 0x12 @ GID", libfabric address, socket
  // "host:port"); written as "peer" (verbs, ofi) or "peer_address" (socket, `peerAddress`).
  std::optional<std::string> peer;
  bool peerAddress = false;
  CommonProperties common;  // verbs: the QP's path MTU, inline size, GID index
  Facts facts;              // backend-specific (QPN, GIDs, retry counts, socket buffers, ...)
};

// What a device (or backend) can do; chooses engine code paths and test skips.
// toJson (transport/info_json.h) writes the fields the run header and the accept carry.
struct Caps {
  bool rmaWrite = false;                // postWrite supported
  bool rmaRead = false;                 // postRead supported
  bool rmaEmulated = false;             // write/read are emulated with messages (socket)
  bool rmaNeedsTargetProgress = false;  // written data lands only while the target polls
  uint64_t maxMessageBytes = 0;         // largest single send/write/read, bytes
  uint32_t maxSendQueue = 0;            // outstanding sends+writes+reads per endpoint
  uint32_t maxRecvQueue = 0;            // outstanding receives per endpoint
  uint32_t inlineBytes = 0;             // sends <= this go inline/inject (buffer free at once)
  uint32_t maxOutstandingReads = 0;     // RDMA reads in flight per endpoint (0 = n/a)
  // Operations in flight that all endpoints of the device share (0 = no shared limit). ofi: its
  // op-context pool. Past it, posts return kRetry on every connection at once.
  uint32_t sharedOpSlots = 0;
};

// One side's facts for the run header (report::RunInfo): its device, its first connection and
// its caps. Unset = not stated (N-rank runs state the device only; the peer states its device
// and caps in its accept, decoded once by deviceInfoFromJson / capsFromJson).
struct SideInfo {
  DeviceInfo device;
  std::optional<ConnectionInfo> connection;
  std::optional<Caps> caps;
};

}  // namespace rdmabench::transport
