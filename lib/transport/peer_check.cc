#include "transport/peer_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

namespace rdmabench::transport {

namespace {

bool isLoopback(const std::string& ip) {
  return ip.rfind("127.", 0) == 0 || ip == "::1";
}

// True when `ip` (canonical) is one of this host's addresses: bind() to it succeeds.
bool isLocalAddress(const std::string& ip) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (inet_pton(AF_INET, ip.c_str(), &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr) == 1) {
    ss.ss_family = AF_INET;
    len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, ip.c_str(), &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr) ==
             1) {
    ss.ss_family = AF_INET6;
    len = sizeof(sockaddr_in6);
  } else {
    return false;
  }
  const int fd = ::socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&ss), len) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::string canonicalIp(const std::string& host) {
  std::string h = host;
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  h = h.substr(0, h.find('%'));
  char out[INET6_ADDRSTRLEN] = "";
  in_addr a4{};
  if (inet_pton(AF_INET, h.c_str(), &a4) == 1) return inet_ntop(AF_INET, &a4, out, sizeof out);
  in6_addr a6{};
  if (inet_pton(AF_INET6, h.c_str(), &a6) != 1) return "";
  if (IN6_IS_ADDR_V4MAPPED(&a6)) {
    std::memcpy(&a4, a6.s6_addr + 12, 4);
    return inet_ntop(AF_INET, &a4, out, sizeof out);
  }
  return inet_ntop(AF_INET6, &a6, out, sizeof out);
}

std::string serverPeerRefusal(const std::string& controlPeer, const std::string& peerIp) {
  const std::string control = canonicalIp(controlPeer);
  if (control.empty()) return "";
  const std::string ip = canonicalIp(peerIp);
  if (!ip.empty() && ip == control) return "";
  if (!ip.empty() && isLoopback(control) && isLocalAddress(ip)) return "";
  return fmt::format(
      "peer address {} is not the host of the control connection ({}); a server session only "
      "sends to the host that connected (docs/wire-protocol.md): connect to the server over the "
      "network the data path uses",
      ip.empty() ? "'" + peerIp + "'" : ip, control);
}

}  // namespace rdmabench::transport
