#pragma once
// Where a server session may send or connect on a client's behalf (docs/wire-protocol.md, threat
// model, "Data path direction"): only to the host that opened the control connection. Used where a
// transport must address the client itself: ofi FI_EP_RDM (rxm connects on the first send) and
// verbs rdma_cm when the server is the active side.

#include <string>

namespace rdmabench::transport {

// A numeric IP (IPv4, IPv6, IPv4-mapped IPv6 read as IPv4, brackets and an IPv6 scope suffix
// ignored) in one canonical text form; "" when `host` is not a numeric IP.
std::string canonicalIp(const std::string& host);

// Why a server session refuses to address `peerIp` (numeric) for a client whose control connection
// came from `controlPeer`, or "" when allowed: the same IP, or, when the control peer is a loopback
// address, any of this host's own addresses (a local client naming, say, the RDMA interface's IP).
// An empty or non-numeric `controlPeer` (not a server session) allows everything; a non-numeric
// `peerIp` is refused. Thread-safe; may bind() a probe socket, sends nothing.
std::string serverPeerRefusal(const std::string& controlPeer, const std::string& peerIp);

}  // namespace rdmabench::transport
