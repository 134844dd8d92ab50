#include "transport/socket/net_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"
#include "transport/socket/framing.h"

namespace rdmabench::transport::socket {

SockAddr resolveHost(const std::string& host, const char* what) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr)
    throw TransportError(fmt::format("socket: {} '{}': getaddrinfo: {}", what, host,
                                     rc == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(rc)));
  SockAddr out;
  std::memcpy(&out.ss, res->ai_addr, res->ai_addrlen);
  out.len = res->ai_addrlen;
  freeaddrinfo(res);
  return out;
}

bool isLoopback(const SockAddr& a) {
  if (a.ss.ss_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&a.ss)->sin_addr.s_addr) >> 24) == 127;
  if (a.ss.ss_family == AF_INET6)
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&a.ss)->sin6_addr);
  return false;
}

void setPort(SockAddr& a, uint16_t port) {
  if (a.ss.ss_family == AF_INET)
    reinterpret_cast<sockaddr_in*>(&a.ss)->sin_port = htons(port);
  else
    reinterpret_cast<sockaddr_in6*>(&a.ss)->sin6_port = htons(port);
}

bool isWildcard(const SockAddr& a) {
  if (a.ss.ss_family == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(&a.ss)->sin_addr.s_addr == htonl(INADDR_ANY);
  if (a.ss.ss_family == AF_INET6)
    return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(&a.ss)->sin6_addr);
  return false;
}

SockAddr routeSourceFor(const SockAddr& peer) {
  Fd fd(::socket(peer.ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) throw SystemError("socket: route lookup socket()", errno);
  SockAddr dst = peer;
  // Any nonzero port works for a UDP connect; no datagram is sent.
  if (dst.ss.ss_family == AF_INET)
    reinterpret_cast<sockaddr_in*>(&dst.ss)->sin_port = htons(9);
  else
    reinterpret_cast<sockaddr_in6*>(&dst.ss)->sin6_port = htons(9);
  if (::connect(fd.get(), dst.sa(), dst.len) != 0)
    throw SystemError(fmt::format("socket: no route to peer {}", formatSockaddr(peer.sa())), errno);
  SockAddr out;
  out.len = sizeof(out.ss);
  if (getsockname(fd.get(), out.sa(), &out.len) != 0)
    throw SystemError("socket: route lookup getsockname()", errno);
  if (out.ss.ss_family == AF_INET)
    reinterpret_cast<sockaddr_in*>(&out.ss)->sin_port = 0;
  else
    reinterpret_cast<sockaddr_in6*>(&out.ss)->sin6_port = 0;
  return out;
}

std::string interfaceFor(const SockAddr& a) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string name;
  for (ifaddrs* i = list; i != nullptr && name.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != a.ss.ss_family) continue;
    if (a.ss.ss_family == AF_INET) {
      if (reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr ==
          reinterpret_cast<const sockaddr_in*>(&a.ss)->sin_addr.s_addr)
        name = i->ifa_name;
    } else if (a.ss.ss_family == AF_INET6) {
      if (std::memcmp(&reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr,
                      &reinterpret_cast<const sockaddr_in6*>(&a.ss)->sin6_addr, 16) == 0)
        name = i->ifa_name;
    }
  }
  freeifaddrs(list);
  // 127.0.0.0/8 addresses other than 127.0.0.1 are not listed but live on lo.
  if (name.empty() && isLoopback(a)) name = "lo";
  return name;
}

void makeFastSocket(int fd, const std::string& peer) {
  setNonBlocking(fd, fmt::format("socket: peer {}", peer));
  if (!setNoDelay(fd))
    throw SystemError(fmt::format("socket: setsockopt(TCP_NODELAY) for peer {}", peer), errno);
}

}  // namespace rdmabench::transport::socket
