#include "rendezvous/channel.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/socket_util.h"

namespace rdmabench::rendezvous {
std::string formatHostPort(const std::string& host, uint16_t port) {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

void encodeHeader(uint32_t length, uint16_t type, uint8_t out[kFrameHeaderBytes]) {
  ByteWriter(out, kFrameHeaderBytes).u32(length).u16(type).u16(0);
}

void decodeHeader(const uint8_t in[kFrameHeaderBytes], uint32_t maxFrameBytes, uint32_t& length,
                  uint16_t& type) {
  ByteReader r(in, kFrameHeaderBytes);
  length = r.u32();
  type = r.u16();
  if (in[6] != 0 || in[7] != 0)
    throw ProtocolError("malformed frame header (reserved bytes not zero): not an rdmabench peer?");
  if (length > maxFrameBytes)
    throw ProtocolError(
        fmt::format("frame of {} bytes exceeds the limit of {} bytes", length, maxFrameBytes));
}

Channel::Channel(int fd, std::string peerName, uint32_t maxFrameBytes)
    : fd_(fd), peerName_(std::move(peerName)), maxFrameBytes_(maxFrameBytes) {
  try {
    setNonBlocking(fd_, "control channel to " + peerName_);
  } catch (...) {
    close();
    throw;
  }
  setNoDelay(fd_);  // best effort: AF_UNIX sockets (tests) have no TCP_NODELAY
}

Channel::Channel(Channel&& other) noexcept
    : fd_(other.fd_), peerName_(std::move(other.peerName_)), maxFrameBytes_(other.maxFrameBytes_) {
  other.fd_ = -1;
}

Channel& Channel::operator=(Channel&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    peerName_ = std::move(other.peerName_);
    maxFrameBytes_ = other.maxFrameBytes_;
    other.fd_ = -1;
  }
  return *this;
}

Channel::~Channel() {
  close();
}

void Channel::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Channel Channel::connect(const std::string& host, uint16_t port, const Deadline& deadline,
                         bool retryRefused) {
  std::string where = formatHostPort(host, port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0)
    throw UsageError(fmt::format("cannot resolve host '{}': {}", host, gai_strerror(rc)));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(res, freeaddrinfo);
  int lastErr = ECONNREFUSED;
  for (;;) {
    for (addrinfo* ai = res; ai; ai = ai->ai_next) {
      Fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
      if (!fd) throw SystemError("socket", errno);
      setNonBlocking(fd.get(), fmt::format("connect to {}", where));
      setNoDelay(fd.get());
      int c = ::connect(fd.get(), ai->ai_addr, ai->ai_addrlen);
      if (c < 0 && errno == EINPROGRESS) {
        if (!waitFd(fd.get(), POLLOUT, deadline, "connect"))
          throw TimeoutError(fmt::format("connect to {}: timed out (no answer)", where));
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        c = err ? -1 : 0;
        errno = err;
      }
      if (c == 0) return Channel(fd.release(), where);
      lastErr = errno;
    }
    if (!(retryRefused && lastErr == ECONNREFUSED) || deadline.expired()) break;
    throwIfInterrupted("connect");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (lastErr == ECONNREFUSED)
    throw SystemError(fmt::format("connect to {} (is `rdmabench server` running there?)", where),
                      lastErr);
  throw SystemError(fmt::format("connect to {}", where), lastErr);
}

void Channel::writeAll(const uint8_t* data, size_t bytes, const Deadline& deadline) {
  while (bytes > 0) {
    ssize_t n = ::send(fd_, data, bytes, MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!waitFd(fd_, POLLOUT, deadline, "send"))
        throw TimeoutError(fmt::format("timed out sending to {}", peerName_));
      continue;
    }
    if (errno == EPIPE || errno == ECONNRESET)
      throw ProtocolError(fmt::format("peer {} closed the control connection", peerName_));
    throw SystemError(fmt::format("send to {}", peerName_), errno);
  }
}

void Channel::readAll(uint8_t* data, size_t bytes, const Deadline& deadline, std::string_view phase,
                      bool atFrameStart) {
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::recv(fd_, data + got, bytes - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
      continue;
    }
    if (n == 0 || (n < 0 && errno == ECONNRESET))
      throw ProtocolError(
          fmt::format("peer {} closed the control connection{} while waiting for {}", peerName_,
                      (atFrameStart && got == 0) ? "" : " mid-frame", phase));
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!waitFd(fd_, POLLIN, deadline, std::string(phase).c_str()))
        throw TimeoutError(fmt::format("timed out waiting for {} from peer {}", phase, peerName_));
      continue;
    }
    throw SystemError(fmt::format("recv from {}", peerName_), errno);
  }
}

void Channel::send(uint16_t type, const void* data, size_t bytes, const Deadline& deadline) {
  if (bytes > maxFrameBytes_)
    throw ProtocolError(
        fmt::format("refusing to send a {}-byte frame (limit {} bytes)", bytes, maxFrameBytes_));
  uint8_t header[kFrameHeaderBytes];
  encodeHeader(static_cast<uint32_t>(bytes), type, header);
  writeAll(header, sizeof header, deadline);
  writeAll(static_cast<const uint8_t*>(data), bytes, deadline);
}

void Channel::sendJson(uint16_t type, const nlohmann::json& value, const Deadline& deadline) {
  send(type, value.dump(), deadline);
}

Frame Channel::receive(const Deadline& deadline, std::string_view phase) {
  uint8_t header[kFrameHeaderBytes];
  readAll(header, sizeof header, deadline, phase, true);
  uint32_t length = 0;
  Frame f;
  try {
    decodeHeader(header, maxFrameBytes_, length, f.type);
  } catch (const ProtocolError& e) {
    throw ProtocolError(fmt::format("from peer {}: {}", peerName_, e.what()));
  }
  f.payload.resize(length);
  readAll(f.payload.data(), length, deadline, phase, false);
  return f;
}

bool Channel::readable() {
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

int Channel::peekType() {
  uint8_t header[kFrameHeaderBytes];
  ssize_t n = ::recv(fd_, header, sizeof header, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno == ECONNRESET))
    throw ProtocolError(fmt::format("peer {} closed the control connection", peerName_));
  if (n < static_cast<ssize_t>(sizeof header)) return -1;
  return header[4] | (header[5] << 8);
}

std::string Channel::localAddress() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "";
  return numericHost(ss);
}

std::string Channel::peerAddress() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "";
  return numericHost(ss);
}

Listener::Listener(const std::string& bindAddress, uint16_t port, int backlog) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const char* host = bindAddress.empty() ? nullptr : bindAddress.c_str();
  int rc = getaddrinfo(host, std::to_string(port).c_str(), &hints, &res);
  if (rc != 0)
    throw UsageError(fmt::format("--bind: cannot resolve '{}': {}", bindAddress, gai_strerror(rc)));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(res, freeaddrinfo);
  // Prefer IPv6 dual-stack for the wildcard address, else the first result.
  addrinfo* pick = res;
  if (!host)
    for (addrinfo* ai = res; ai; ai = ai->ai_next)
      if (ai->ai_family == AF_INET6) pick = ai;
  fd_ = ::socket(pick->ai_family, pick->ai_socktype | SOCK_CLOEXEC, pick->ai_protocol);
  if (fd_ < 0) throw SystemError("socket", errno);
  int one = 1, zero = 0;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (pick->ai_family == AF_INET6) setsockopt(fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (::bind(fd_, pick->ai_addr, pick->ai_addrlen) != 0) {
    int err = errno;
    ::close(fd_);
    throw SystemError(
        fmt::format("bind {}", formatHostPort(bindAddress.empty() ? "*" : bindAddress, port)), err);
  }
  if (::listen(fd_, backlog) != 0) {
    int err = errno;
    ::close(fd_);
    throw SystemError("listen", err);
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len);
  port_ = portOf(ss);
  try {
    setNonBlocking(fd_, "listen socket");
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

Listener::Listener(Listener&& other) noexcept : fd_(other.fd_), port_(other.port_) {
  other.fd_ = -1;
}

Listener::~Listener() {
  if (fd_ >= 0) ::close(fd_);
}

Channel Listener::accept(const Deadline& deadline, uint32_t maxFrameBytes) {
  for (;;) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    int fd = ::accept4(fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC);
    if (fd >= 0) {
      return Channel(fd, formatHostPort(numericHost(ss), portOf(ss)), maxFrameBytes);
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
      throw SystemError("accept", errno);
    if (!waitFd(fd_, POLLIN, deadline, "accept"))
      throw TimeoutError(fmt::format("timed out waiting for a client on port {}", port_));
  }
}

}  // namespace rdmabench::rendezvous
