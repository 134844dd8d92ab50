#pragma once
// Small POSIX socket helpers for the socket backend: an owning file descriptor, name
// resolution, route lookup and interface names. Thread-safe (no shared state).

#include <sys/socket.h>

#include <string>
#include <utility>

#include "common/socket_util.h"

namespace rdmabench::transport::socket {

using rdmabench::Fd;  // common/socket_util.h

// A socket address with its length.
struct SockAddr {
  sockaddr_storage ss{};
  socklen_t len = 0;
  const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&ss); }
  sockaddr* sa() { return reinterpret_cast<sockaddr*>(&ss); }
};

// Resolves a numeric address or host name (first result, port 0). Throws TransportError naming
// `what` (the option) and gai_strerror's text.
SockAddr resolveHost(const std::string& host, const char* what);
// True for 127.0.0.0/8 and ::1.
bool isLoopback(const SockAddr& a);
// True for 0.0.0.0 and ::.
bool isWildcard(const SockAddr& a);
// Sets the port of an AF_INET / AF_INET6 address (`port` in host byte order).
void setPort(SockAddr& a, uint16_t port);
// The local address the kernel routes to `peer` from (UDP connect + getsockname; nothing is
// sent). Throws SystemError when there is no route.
SockAddr routeSourceFor(const SockAddr& peer);
// Name of the interface holding `a` ("lo", "eth0"), or "" when none (wildcard, unknown).
std::string interfaceFor(const SockAddr& a);
// Sets O_NONBLOCK and TCP_NODELAY on a connected TCP socket; throws SystemError.
void makeFastSocket(int fd, const std::string& peer);

}  // namespace rdmabench::transport::socket
