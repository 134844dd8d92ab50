#include "transport/socket/framing.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/error.h"

namespace rdmabench::transport::socket {
namespace {

constexpr uint8_t kHelloMagic[4] = {'R', 'B', 'S', 'K'};
constexpr uint16_t kHelloVersion = 1;

}  // namespace

void encodeHeader(const WireHeader& h, uint8_t* out) {
  out[0] = static_cast<uint8_t>(h.op);
  out[1] = out[2] = out[3] = 0;
  putLe(out + 4, h.length, 4);
  putLe(out + 8, h.offset, 8);
  putLe(out + 16, h.key, 8);
}

std::optional<WireHeader> decodeHeader(const uint8_t* in) {
  if (in[0] < static_cast<uint8_t>(WireOp::kMsg) || in[0] > static_cast<uint8_t>(WireOp::kReadResp))
    return std::nullopt;
  if (in[1] != 0 || in[2] != 0 || in[3] != 0) return std::nullopt;
  WireHeader h;
  h.op = static_cast<WireOp>(in[0]);
  h.length = static_cast<uint32_t>(getLe(in + 4, 4));
  h.offset = getLe(in + 8, 8);
  h.key = getLe(in + 16, 8);
  if (h.length > kMaxMessageBytes) return std::nullopt;
  return h;
}

std::vector<uint8_t> encodeAddress(const ListenAddress& a) {
  std::vector<uint8_t> out(kAddressBytes, 0);
  out[0] = kAddressVersion;
  if (a.addr.ss_family == AF_INET) {
    const auto* in4 = reinterpret_cast<const sockaddr_in*>(&a.addr);
    out[1] = 4;
    std::memcpy(&out[10], &in4->sin_port, 2);
    std::memcpy(&out[12], &in4->sin_addr, 4);
  } else if (a.addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a.addr);
    out[1] = 6;
    std::memcpy(&out[10], &in6->sin6_port, 2);
    std::memcpy(&out[12], &in6->sin6_addr, 16);
  } else {
    throw TransportError(
        fmt::format("socket: cannot encode address family {}", static_cast<int>(a.addr.ss_family)));
  }
  for (int i = 0; i < 8; ++i)
    out[2 + i] = static_cast<uint8_t>(a.deviceId >> (56 - 8 * i));
  putLe(&out[28], a.token, 8);
  return out;
}

ListenAddress decodeAddress(const std::vector<uint8_t>& bytes) {
  if (bytes.size() != kAddressBytes)
    throw TransportError(
        fmt::format("socket connect: malformed peer address ({} bytes, expected {})", bytes.size(),
                    kAddressBytes));
  if (bytes[0] != kAddressVersion)
    throw TransportError(
        fmt::format("socket connect: malformed peer address (version {}, expected {})", bytes[0],
                    kAddressVersion));
  ListenAddress a;
  uint16_t port;
  std::memcpy(&port, &bytes[10], 2);
  if (port == 0) throw TransportError("socket connect: malformed peer address (port 0)");
  if (bytes[1] == 4) {
    for (int i = 16; i < 28; ++i)
      if (bytes[i] != 0)
        throw TransportError("socket connect: malformed peer address (IPv4 with nonzero padding)");
    auto* in4 = reinterpret_cast<sockaddr_in*>(&a.addr);
    in4->sin_family = AF_INET;
    in4->sin_port = port;
    std::memcpy(&in4->sin_addr, &bytes[12], 4);
    a.addrLen = sizeof(sockaddr_in);
  } else if (bytes[1] == 6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.addr);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = port;
    std::memcpy(&in6->sin6_addr, &bytes[12], 16);
    a.addrLen = sizeof(sockaddr_in6);
  } else {
    throw TransportError(fmt::format(
        "socket connect: malformed peer address (family {}, expected 4 or 6)", bytes[1]));
  }
  for (int i = 0; i < 8; ++i)
    a.deviceId = a.deviceId << 8 | bytes[2 + i];
  a.token = getLe(&bytes[28], 8);
  return a;
}

std::array<uint8_t, kHelloBytes> encodeHello(uint64_t token) {
  std::array<uint8_t, kHelloBytes> out{};
  std::memcpy(out.data(), kHelloMagic, 4);
  putLe(out.data() + 4, kHelloVersion, 2);
  putLe(out.data() + 8, token, 8);
  return out;
}

std::optional<uint64_t> decodeHello(const uint8_t* in) {
  if (std::memcmp(in, kHelloMagic, 4) != 0) return std::nullopt;
  if (getLe(in + 4, 2) != kHelloVersion || getLe(in + 6, 2) != 0) return std::nullopt;
  return getLe(in + 8, 8);
}

std::string formatSockaddr(const sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (sa->sa_family == AF_INET) {
    const auto* in4 = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in4->sin_addr, buf, sizeof(buf));
    port = ntohs(in4->sin_port);
    return port ? fmt::format("{}:{}", buf, port) : std::string(buf);
  }
  if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof(buf));
    port = ntohs(in6->sin6_port);
    return port ? fmt::format("[{}]:{}", buf, port) : fmt::format("[{}]", buf);
  }
  return fmt::format("<family {}>", static_cast<int>(sa->sa_family));
}

}  // namespace rdmabench::transport::socket
