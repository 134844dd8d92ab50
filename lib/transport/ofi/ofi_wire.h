#pragma once
// Connection address blobs of the ofi backend (Connector::localAddress), decoded without
// libfabric: pure functions, unit-tested and fuzzed (fuzz_address). The encoder is
// OfiDevice::localAddress (ofi_address.cc).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rdmabench::transport::ofi {

// Our address blob: magic, version, name length, our connection tag, addr_format, then the
// fi_getname bytes of the shared endpoint.
constexpr uint32_t kAddressMagic = 0x464f4252;  // "RBOF" little-endian
constexpr uint8_t kAddressVersion = 1;
constexpr size_t kAddressHeader = 20;
// FI_EP_MSG address blob: the same first 20 bytes (type byte 1, the device id in place of the
// tag), then the connector's random token (8 B), then the fi_getname bytes of its passive
// endpoint.
constexpr uint8_t kTypeMsg = 1;
constexpr size_t kMsgAddressHeader = 28;
// The peer's endpoint name is handed to the provider (fi_av_insert, fi_av_straddr, fi_connect,
// our own sockaddr formatting), which reads as many bytes as its address format takes, not as
// many as the peer sent: the decoded name is zero-padded to at least this many bytes.
constexpr size_t kNameBuffer = 256;

struct PeerAddress {
  uint64_t id = 0;            // RDM: the peer connection's tag; FI_EP_MSG: the peer's device id
  uint32_t addrFormat = 0;    // the peer provider's addr_format
  uint64_t token = 0;         // FI_EP_MSG: the peer connector's token; RDM: 0
  size_t nameBytes = 0;       // length of the endpoint name the peer sent
  std::vector<uint8_t> name;  // that name, zero-padded to max(nameBytes, kNameBuffer) bytes
};

// Decodes a peer's blob: the RDM layout, or the FI_EP_MSG one when `msg`. Throws ProtocolError
// naming device `label` for a wrong size, magic, version or type (not an rdmabench ofi device
// of this version, or the other endpoint type).
PeerAddress decodePeerAddress(const std::vector<uint8_t>& remote, bool msg,
                              const std::string& label);

}  // namespace rdmabench::transport::ofi
