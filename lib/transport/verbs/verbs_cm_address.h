#pragma once
// Connection address of the verbs backend's rdma_cm mode (--rdma-cm; what its
// Connector::localAddress() carries): encoded and decoded without a device, so that it can be
// unit-tested and fuzzed (fuzz_address). Internal to lib/transport/verbs/ (verbs_cm.cc).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/error.h"

namespace rdmabench::transport::verbs {

// Address layout (little-endian, 40 bytes): 0 magic 'R', 1 version, 2 address family (4 or 6),
// 3 link layer, 4..5 port, 6..21 IP (IPv4 in the first 4 bytes), 22..29 token,
// 30 max_qp_init_rd_atom, 31 max_qp_rd_atom (each capped at 255), 32..39 reserved.
constexpr uint8_t kCmMagic = 'R';
constexpr uint8_t kCmVersion = 1;
constexpr size_t kCmBytes = 40;

struct CmAddress {
  uint8_t family = 4;
  uint8_t linkLayer = 0;
  uint16_t port = 0;
  std::array<uint8_t, 16> ip{};
  uint64_t token = 0;
  uint8_t initRdAtom = 0;
  uint8_t rdAtom = 0;

  std::vector<uint8_t> encode() const {
    std::vector<uint8_t> b(kCmBytes, 0);
    ByteWriter(b.data(), b.size())
        .u8(kCmMagic)
        .u8(kCmVersion)
        .u8(family)
        .u8(linkLayer)
        .u16(port)
        .raw(ip.data(), ip.size())
        .u64(token)
        .u8(initRdAtom)
        .u8(rdAtom);
    return b;
  }

  static CmAddress decode(const std::vector<uint8_t>& b, const std::string& dev) {
    if (b.size() != kCmBytes || b[0] != kCmMagic)
      throw ProtocolError(fmt::format(
          "verbs rdma_cm connect on {}: peer address is not an rdma_cm address ({} bytes, "
          "expected {}; does the peer use --rdma-cm too?)",
          dev, b.size(), kCmBytes));
    if (b[1] != kCmVersion)
      throw ProtocolError(
          fmt::format("verbs rdma_cm connect on {}: peer address version {} "
                      "(ours {})",
                      dev, b[1], kCmVersion));
    CmAddress a;
    ByteReader r(b.data(), b.size());
    r.seek(2);
    a.family = r.u8();
    a.linkLayer = r.u8();
    a.port = r.u16();
    r.raw(a.ip.data(), a.ip.size());
    a.token = r.u64();
    a.initRdAtom = r.u8();
    a.rdAtom = r.u8();
    if (a.family != 4 && a.family != 6)
      throw ProtocolError(
          fmt::format("verbs rdma_cm connect on {}: peer sent address family {}", dev, a.family));
    return a;
  }

  sockaddr_storage sockaddr() const {
    sockaddr_storage ss{};
    if (family == 4) {
      auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
      sin->sin_family = AF_INET;
      sin->sin_port = htons(port);
      std::memcpy(&sin->sin_addr, ip.data(), 4);
    } else {
      auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
      sin6->sin6_family = AF_INET6;
      sin6->sin6_port = htons(port);
      std::memcpy(&sin6->sin6_addr, ip.data(), 16);
    }
    return ss;
  }

  std::string text() const {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(family == 4 ? AF_INET : AF_INET6, ip.data(), buf, sizeof buf);
    return family == 4 ? fmt::format("{}:{}", buf, port) : fmt::format("[{}]:{}", buf, port);
  }

  // Ordering that picks the active side: lower (family, ip, port) connects.
  bool lessThan(const CmAddress& o) const {
    if (family != o.family) return family < o.family;
    if (ip != o.ip) return ip < o.ip;
    return port < o.port;
  }
};

}  // namespace rdmabench::transport::verbs
