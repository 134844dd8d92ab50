// Verbs QP connection address codec and text helpers (verbs_address.h).

#include "transport/verbs/verbs_address.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "common/bytes.h"
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
  ByteWriter(b.data(), b.size())
      .u8(kAddrMagic)
      .u8(kAddrVersion)
      .u8(linkLayer)
      .u8(mtu)
      .u16(lid)
      .u32(qpn)
      .u32(psn)
      .u16(gidIndex)
      .raw(gid.data(), gid.size())
      .u8(initRdAtom)
      .u8(rdAtom);
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
  ByteReader r(b.data(), b.size());
  r.seek(2);
  a.linkLayer = r.u8();
  a.mtu = r.u8();
  a.lid = r.u16();
  a.qpn = r.u32();
  a.psn = r.u32();
  a.gidIndex = r.u16();
  r.raw(a.gid.data(), a.gid.size());
  a.initRdAtom = r.u8();
  a.rdAtom = r.u8();
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
