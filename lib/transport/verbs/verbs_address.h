#pragma once
// Out-of-band connection address of a verbs RC QP (what Connector::localAddress() carries) and
// small text helpers shared by the verbs backend's .cc files. Internal to lib/transport/verbs/.

#include <infiniband/verbs.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "transport/verbs/gid_select.h"

namespace rdmabench::transport::verbs {

// strerror() text of `err`.
std::string errText(int err);

// The ibv_mtu enum for a path MTU in bytes (256..4096); nullopt for anything else.
std::optional<ibv_mtu> mtuFromBytes(uint32_t bytes);

// ---- Connection address (Connector::localAddress) ----------------------------------------
// Fixed little-endian layout, 36 bytes:
//   0 magic 'V', 1 version, 2 link layer, 3 path MTU (enum ibv_mtu), 4..5 LID, 6..9 QPN,
//   10..13 PSN (24 bit), 14..15 GID index, 16..31 GID, 32 max outstanding reads as initiator
//   (max_qp_init_rd_atom), 33 as responder (max_qp_rd_atom), 34..35 reserved.
constexpr uint8_t kAddrMagic = 'V';
constexpr uint8_t kAddrVersion = 1;
constexpr size_t kAddrBytes = 36;

struct QpAddress {
  uint8_t linkLayer = 0;
  uint8_t mtu = 0;
  uint16_t lid = 0;
  uint32_t qpn = 0;
  uint32_t psn = 0;
  uint16_t gidIndex = 0;
  GidBytes gid{};
  uint8_t initRdAtom = 0;
  uint8_t rdAtom = 0;

  // The fixed 36-byte layout above.
  std::vector<uint8_t> encode() const;
  // Parses a peer's address; throws ProtocolError (naming device `dev`) on a wrong size,
  // magic, version or MTU code.
  static QpAddress decode(const std::vector<uint8_t>& b, const std::string& dev);
};

// "RESET", "INIT", ... for a QP state.
const char* qpStateName(ibv_qp_state s);

// "QPN 0x.. @ <GID>" on Ethernet, "QPN 0x.. @ LID 0x.." on InfiniBand.
std::string describePeer(const QpAddress& a);

}  // namespace rdmabench::transport::verbs
