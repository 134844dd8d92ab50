// Verbs QP connection address codec and text helpers (verbs_address.h).

#include "transport/verbs/verbs_address.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench::transport::verbs {

std::string errText(int err) {
  return std::strerror(err);
}

std::optional<ibv_mtu> mtuFromBytes(uint32_t bytes) {
  switch (bytes) {
    case 256:
      return IBV_MTU_256;
    case 512:
      return IBV_MTU_512;
    case 1024:
      return IBV_MTU_1024;
    case 2048:
      return IBV_MTU_2048;
    case 4096:
      return IBV_MTU_4096;
  }
  return std::nullopt;
}

std::vector<uint8_t> QpAddress::encode() const {
  std::vector<uint8_t> b(kAddrBytes, 0);
  b[0] = kAddrMagic;
  b[1] = kAddrVersion;
  b[2] = linkLayer;
  b[3] = mtu;
  for (int i = 0; i < 2; ++i)
    b[4 + i] = static_cast<uint8_t>(lid >> (8 * i));
  for (int i = 0; i < 4; ++i)
    b[6 + i] = static_cast<uint8_t>(qpn >> (8 * i));
  for (int i = 0; i < 4; ++i)
    b[10 + i] = static_cast<uint8_t>(psn >> (8 * i));
  for (int i = 0; i < 2; ++i)
    b[14 + i] = static_cast<uint8_t>(gidIndex >> (8 * i));
  std::copy(gid.begin(), gid.end(), b.begin() + 16);
  b[32] = initRdAtom;
  b[33] = rdAtom;
  return b;
}

QpAddress QpAddress::decode(const std::vector<uint8_t>& b, const std::string& dev) {
  if (b.size() != kAddrBytes || b[0] != kAddrMagic)
    throw ProtocolError(fmt::format(
        "verbs connect on {}: peer address is not a verbs QP address ({} bytes, expected {}; "
        "is the peer using another transport?)",
        dev, b.size(), kAddrBytes));
  if (b[1] != kAddrVersion)
    throw ProtocolError(fmt::format("verbs connect on {}: peer address version {} (ours {})", dev,
                                    b[1], kAddrVersion));
  QpAddress a;
  a.linkLayer = b[2];
  a.mtu = b[3];
  for (int i = 0; i < 2; ++i)
    a.lid |= static_cast<uint16_t>(b[4 + i] << (8 * i));
  for (int i = 0; i < 4; ++i)
    a.qpn |= static_cast<uint32_t>(b[6 + i]) << (8 * i);
  for (int i = 0; i < 4; ++i)
    a.psn |= static_cast<uint32_t>(b[10 + i]) << (8 * i);
  for (int i = 0; i < 2; ++i)
    a.gidIndex |= static_cast<uint16_t>(b[14 + i] << (8 * i));
  std::copy(b.begin() + 16, b.begin() + 32, a.gid.begin());
  a.initRdAtom = b[32];
  a.rdAtom = b[33];
  if (a.mtu < IBV_MTU_256 || a.mtu > IBV_MTU_4096)
    throw ProtocolError(
        fmt::format("verbs connect on {}: peer sent invalid MTU code {}", dev, a.mtu));
  return a;
}

const char* qpStateName(ibv_qp_state s) {
  switch (s) {
    case IBV_QPS_RESET:
      return "RESET";
    case IBV_QPS_INIT:
      return "INIT";
    case IBV_QPS_RTR:
      return "RTR";
    case IBV_QPS_RTS:
      return "RTS";
    case IBV_QPS_SQD:
      return "SQD";
    case IBV_QPS_SQE:
      return "SQE";
    case IBV_QPS_ERR:
      return "ERR";
    default:
      return "?";
  }
}

std::string describePeer(const QpAddress& a) {
  if (a.linkLayer == IBV_LINK_LAYER_ETHERNET)
    return fmt::format("QPN {:#x} @ {}", a.qpn, gidToString(a.gid));
  return fmt::format("QPN {:#x} @ LID {:#x}", a.qpn, a.lid);
}

}  // namespace rdmabench::transport::verbs
