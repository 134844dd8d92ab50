#include "transport/socket/connector.h"

#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "transport/socket/device.h"
#include "transport/socket/endpoint.h"

namespace rdmabench::transport::socket {
namespace {

// Longest single sleep inside a wait, so Ctrl-C and deadlines are noticed promptly.
constexpr int kSliceMs = 50;

int sliceMs(const Deadline& deadline) {
  int left = deadline.remainingMs();
  return left < 0 ? kSliceMs : std::min(left, kSliceMs);
}

uint64_t randomToken() {
  std::random_device rd;
  uint64_t t = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return t != 0 ? t : 1;
}

}  // namespace

SocketConnector::SocketConnector(SocketDevice& device) : device_(device), hub_(device.listeners()) {
  // The device's one listener (listener.h); our token tells our connections from the others'.
  uint16_t port = 0;
  do {
    local_.token = randomToken();
    port = hub_->add(local_.token);
  } while (port == 0);
  registered_ = true;
  // A wildcard bind advertises the device's routable address with the bound port.
  SockAddr adv = device.advertisedAddress();
  setPort(adv, port);
  std::memcpy(&local_.addr, &adv.ss, sizeof(adv.ss));
  local_.addrLen = adv.len;
  local_.deviceId = device.deviceId();
  localBytes_ = encodeAddress(local_);
  localName_ = formatSockaddr(adv.sa());
}

SocketConnector::~SocketConnector() {
  unregister();
}

void SocketConnector::unregister() {
  if (registered_) hub_->remove(local_.token);
  registered_ = false;
}

std::unique_ptr<Endpoint> SocketConnector::connect(const std::vector<uint8_t>& remoteAddress,
                                                   const Deadline& deadline) {
  if (used_) throw TransportError("socket connect: Connector::connect() called twice");
  used_ = true;
  ListenAddress remote = decodeAddress(remoteAddress);
  std::string peer = formatSockaddr(reinterpret_cast<const sockaddr*>(&remote.addr));
  if (remoteAddress == localBytes_)
    throw TransportError(
        fmt::format("socket connect: peer address {} is this connector's own address", peer));
  bool accepting = std::lexicographical_compare(localBytes_.begin(), localBytes_.end(),
                                                remoteAddress.begin(), remoteAddress.end());
  // A server session never connects to an address its client names (it could name any host
  // and port): only a peer that advertises device id 0 itself gets here.
  if (!accepting && device_.acceptOnly())
    throw TransportError(fmt::format(
        "socket connect: peer address {} (device id {:016x}) would make this side connect to it; "
        "this server only accepts data-path connections (the client connects)",
        peer, remote.deviceId));
  Fd fd = accepting ? acceptPeer(peer, deadline) : connectPeer(remote, peer, deadline);
  unregister();
  return std::make_unique<SocketEndpoint>(device_, std::move(fd), peer,
                                          accepting ? "accept" : "connect");
}

Fd SocketConnector::acceptPeer(const std::string& peer, const Deadline& deadline) {
  int rejected = 0;
  std::string lastReject;
  Fd conn = hub_->accept(local_.token, deadline, rejected, lastReject);
  if (conn) return conn;
  throw TimeoutError(fmt::format(
      "socket connect: timed out waiting for peer {} to connect to {}{}", peer, localName_,
      rejected ? fmt::format(" ({} connection(s) rejected, last: {})", rejected, lastReject)
               : std::string()));
}

Fd SocketConnector::connectPeer(const ListenAddress& remote, const std::string& peer,
                                const Deadline& deadline) {
  std::string lastError = "no attempt";
  for (;;) {
    throwIfConnectAborted("socket connect");
    if (deadline.expired())
      throw TimeoutError(
          fmt::format("socket connect: timed out connecting to peer {} ({})", peer, lastError));
    SockAddr bind = device_.bindAddress();
    setPort(bind, 0);
    Fd fd(::socket(remote.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) throw SystemError(fmt::format("socket connect: socket() for peer {}", peer), errno);
    // Bind the source address only; the port is chosen by connect() (IP_BIND_ADDRESS_NO_PORT,
    // Linux 4.2), which may reuse a local port toward different peers. bind(port 0) would search
    // the whole bind table for a port no socket holds: at 1024 local ranks (~30,000 sockets on
    // loopback) that search was most of the wire-up's CPU and ran out of ephemeral ports.
    if (bind.ss.ss_family == remote.addr.ss_family && !isWildcard(bind)) {
      const int one = 1;
      (void)setsockopt(fd.get(), IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
      if (::bind(fd.get(), bind.sa(), bind.len) != 0)
        throw SystemError(
            fmt::format("socket connect: bind({}) for peer {}", formatSockaddr(bind.sa()), peer),
            errno);
    }
    int rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&remote.addr), remote.addrLen);
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS || err == EINTR) {
      if (!waitFd(fd.get(), POLLOUT, deadline, "socket connect"))
        throw TimeoutError(
            fmt::format("socket connect: timed out connecting to peer {} (no answer)", peer));
      socklen_t len = sizeof(err);
      if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    }
    if (err == 0) {
      auto hello = encodeHello(remote.token);
      size_t sent = 0;
      while (sent < hello.size()) {
        ssize_t r = ::send(fd.get(), hello.data() + sent, hello.size() - sent, MSG_NOSIGNAL);
        if (r > 0) {
          sent += static_cast<size_t>(r);
        } else if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
          if (!waitFd(fd.get(), POLLOUT, deadline, "socket connect"))
            throw TimeoutError(
                fmt::format("socket connect: timed out sending hello to peer {}", peer));
        } else {
          throw SystemError(fmt::format("socket connect: send(hello) to peer {}", peer), errno);
        }
      }
      return fd;
    }
    if (err != ECONNREFUSED && err != ETIMEDOUT && err != EHOSTUNREACH && err != ENETUNREACH)
      throw SystemError(fmt::format("socket connect: connect() to peer {}", peer), err);
    lastError = fmt::format("last attempt: {}", std::strerror(err));
    fd.reset();
    ::poll(nullptr, 0, std::min(20, sliceMs(deadline)));  // back off before retrying
  }
}

}  // namespace rdmabench::transport::socket
