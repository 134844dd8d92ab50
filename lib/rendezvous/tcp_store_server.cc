// Server side of the TCP rendezvous store (store.h: TcpStoreServer; docs/rendezvous.md): sockets,
// epoll, timers and accept. Per-connection I/O (reading, frames, backpressure, expiry) is in
// tcp_store_io.cc; the protocol and the runs' state are in tcp_store_session.cc.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/json_read.h"
#include "common/log.h"
#include "common/socket_util.h"
#include "rendezvous/protocol.h"
#include "rendezvous/store.h"
#include "rendezvous/store_protocol.h"
#include "rendezvous/tcp_store_server_state.h"

namespace rdmabench::rendezvous {

using nlohmann::json;

namespace {

std::string numericPeer(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  return formatHostPort(numericHost(ss), portOf(ss));
}

}  // namespace

TcpStoreServer::TcpStoreServer(const std::string& bindAddress, uint16_t port, std::string runId,
                               StoreLimits limits, std::string token)
    : runId_(std::move(runId)), limits_(limits), token_(std::move(token)) {
  // Kept in reserve: at EMFILE it is closed to accept and shed one pending connection, so the
  // listening socket does not stay readable (a 100% CPU loop) while legitimate ranks time out.
  reserveFd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  std::string portText = std::to_string(port);
  int rc = getaddrinfo(bindAddress.empty() ? nullptr : bindAddress.c_str(), portText.c_str(),
                       &hints, &res);
  if (rc != 0)
    throw UsageError(
        fmt::format("rendezvous bind address '{}': {}", bindAddress, gai_strerror(rc)));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(res, freeaddrinfo);
  // Prefer IPv4 for the wildcard (ranks connect by IPv4 addresses in practice).
  addrinfo* pick = res;
  for (addrinfo* a = res; a; a = a->ai_next)
    if (a->ai_family == AF_INET) {
      pick = a;
      break;
    }
  listenFd_ = ::socket(pick->ai_family, pick->ai_socktype | SOCK_CLOEXEC, 0);
  if (listenFd_ < 0) throw SystemError("socket (rendezvous server)", errno);
  int one = 1;
  setsockopt(listenFd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(listenFd_, pick->ai_addr, pick->ai_addrlen) != 0) {
    int e = errno;
    ::close(listenFd_);
    throw SystemError(
        fmt::format("bind rendezvous server to {}",
                    formatHostPort(bindAddress.empty() ? "0.0.0.0" : bindAddress, port)),
        e);
  }
  if (::listen(listenFd_, 4096) != 0) {
    int e = errno;
    ::close(listenFd_);
    throw SystemError("listen (rendezvous server)", e);
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  getsockname(listenFd_, reinterpret_cast<sockaddr*>(&ss), &len);
  port_ = portOf(ss);
  setNonBlocking(listenFd_, "rendezvous server listen socket");
  epollFd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epollFd_ < 0) {
    ::close(listenFd_);
    throw SystemError("epoll_create1 (rendezvous server)", errno);
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = listenFd_;
  epoll_ctl(epollFd_, EPOLL_CTL_ADD, listenFd_, &ev);
  wakeFd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wakeFd_ < 0) {
    int e = errno;
    ::close(epollFd_);
    ::close(listenFd_);
    throw SystemError("eventfd (rendezvous server)", e);
  }
  ev.data.fd = wakeFd_;
  epoll_ctl(epollFd_, EPOLL_CTL_ADD, wakeFd_, &ev);
}

TcpStoreServer::~TcpStoreServer() {
  stop();
  for (auto& [fd, c] : conns_)
    ::close(fd);
  if (epollFd_ >= 0) ::close(epollFd_);
  if (listenFd_ >= 0) ::close(listenFd_);
  if (wakeFd_ >= 0) ::close(wakeFd_);
  if (reserveFd_ >= 0) ::close(reserveFd_);
}

void TcpStoreServer::closeInChild() {
  if (listenFd_ >= 0) ::close(listenFd_);
  if (epollFd_ >= 0) ::close(epollFd_);
  if (wakeFd_ >= 0) ::close(wakeFd_);
  if (reserveFd_ >= 0) ::close(reserveFd_);
  listenFd_ = epollFd_ = wakeFd_ = reserveFd_ = -1;
  for (auto& [fd, c] : conns_)
    ::close(fd);
  // Forget the connections without freeing them now: the child of a fork() shares the
  // launcher's pages copy-on-write, and freeing ~1000 Conn objects (malloc metadata, string
  // buffers) would copy those pages in every child, O(N) page faults per rank at --np N. Moving
  // a std::map is O(1). A forked rank _exit()s and never frees them; a process that exit()s
  // frees them with this static (so LeakSanitizer sees no leak).
  static std::deque<std::map<int, std::unique_ptr<Conn>>> forgotten;
  forgotten.push_back(std::move(conns_));
  conns_.clear();
}

void TcpStoreServer::startThread() {
  stop_ = false;
  thread_ = std::make_unique<std::thread>([this] {
    pthread_setname_np(pthread_self(), kStoreThreadName);  // visible in top -H, gdb, tests
    while (!stop_) {
      try {
        serve(-1);  // until an event, a waiter's deadline or stop()
      } catch (const std::exception& e) {
        if (verbose_) log::write(std::string("rdmabench rendezvous: ") + e.what() + "\n");
      }
    }
  });
}

void TcpStoreServer::stop() {
  stop_ = true;
  if (thread_ && thread_->joinable()) {
    uint64_t one = 1;
    if (::write(wakeFd_, &one, sizeof one) < 0) {
      // EAGAIN only (counter saturated): the thread is being woken already.
    }
    thread_->join();
  }
  thread_.reset();
}

bool TcpStoreServer::allLeft() const {
  return joinedEver_ > 0 && liveRanks_ == 0;
}

size_t TcpStoreServer::joinedCount() const {
  return joinedEver_;
}

bool TcpStoreServer::runComplete() const {
  if (runId_.empty()) return allLeft();
  if (servedWorld_ == 0 || liveRanks_ != 0) return false;
  // Refused ranks count as come (noteRefusal); ranks outside the world do not.
  auto inWorld = servedJoined_.lower_bound(servedWorld_);
  return static_cast<int>(std::distance(servedJoined_.begin(), inWorld)) >= servedWorld_;
}

StoreUsage TcpStoreServer::usage() const {
  StoreUsage u;
  u.dataBytes = published_.dataBytes.load(std::memory_order_relaxed);
  u.bufferedBytes = published_.bufferedBytes.load(std::memory_order_relaxed);
  u.totalBytes = u.dataBytes + u.bufferedBytes;
  u.maxConnBufferedBytes = published_.maxConnBufferedBytes.load(std::memory_order_relaxed);
  u.peakConnBufferedBytes = published_.peakConnBufferedBytes.load(std::memory_order_relaxed);
  u.connections = published_.connections.load(std::memory_order_relaxed);
  u.runs = published_.runs.load(std::memory_order_relaxed);
  u.pendingGets = published_.pendingGets.load(std::memory_order_relaxed);
  return u;
}

void TcpStoreServer::publishUsage() {
  size_t maxConn = 0;
  for (const auto& [fd, c] : conns_)
    maxConn = std::max(maxConn, c->accounted);
  published_.dataBytes.store(dataBytes_, std::memory_order_relaxed);
  published_.bufferedBytes.store(bufferedBytes_, std::memory_order_relaxed);
  published_.maxConnBufferedBytes.store(maxConn, std::memory_order_relaxed);
  published_.connections.store(conns_.size(), std::memory_order_relaxed);
  published_.runs.store(runs_.size(), std::memory_order_relaxed);
  published_.pendingGets.store(pendingGets_, std::memory_order_relaxed);
}

int TcpStoreServer::nextTimeoutMs(int cap) const {
  int64_t now = nowNs();
  int64_t best = cap < 0 ? INT64_MAX : static_cast<int64_t>(cap);
  auto consider = [&](int64_t deadlineNs) {
    int64_t ms = (deadlineNs - now) / 1'000'000 + 1;
    best = std::min(best, std::max<int64_t>(ms, 0));
  };
  for (const auto& [fd, c] : conns_) {
    for (const auto& w : c->waits)
      consider(w.deadlineNs);
    if (c->closing)
      consider(c->closeByNs);
    else if (c->stage < 2)
      consider(c->handshakeEndNs);
    else if (limits_.idleMs > 0 && c->waits.empty())
      consider(c->lastActiveNs + limits_.idleMs * 1'000'000);
  }
  if (acceptPausedUntilNs_ != 0) consider(acceptPausedUntilNs_);
  return best == INT64_MAX ? -1 : static_cast<int>(best);
}

void TcpStoreServer::serve(int timeoutMs) {
  epoll_event events[64];
  int n = epoll_wait(epollFd_, events, 64, nextTimeoutMs(timeoutMs));
  if (n < 0 && errno != EINTR) throw SystemError("epoll_wait (rendezvous server)", errno);
  for (int i = 0; i < n; ++i) {
    int fd = events[i].data.fd;
    if (fd == listenFd_) {
      acceptAll();
      continue;
    }
    if (fd == wakeFd_) {
      uint64_t count;
      while (::read(wakeFd_, &count, sizeof count) > 0) {
      }
      continue;
    }
    auto it = conns_.find(fd);
    if (it == conns_.end()) continue;
    Conn& c = *it->second;
    const uint32_t ev = events[i].events;
    if (ev & EPOLLOUT) {
      flush(c);
      if (!conns_.count(fd)) continue;
      if (!c.paused && !c.in.empty()) processInput(c);  // requests held back by backpressure
      if (!conns_.count(fd)) continue;
    }
    if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
      if (!c.paused && !c.closing) {
        onReadable(c);
      } else if (ev & (EPOLLHUP | EPOLLERR)) {
        closeConn(fd, "died (its rendezvous connection closed without notice)", false);
      }
    }
  }
  expireWaiters();
  expireConnections();
  publishUsage();
}

void TcpStoreServer::acceptAll() {
  for (;;) {
    int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      // At EMFILE the reserve descriptor sheds one connection: then try the next one;
      // otherwise accepting is paused (the listening socket is out of epoll) for a while.
      if (onAcceptError(errno)) continue;
      return;
    }
    acceptTroubleLogged_ = false;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // A rank is silent during its benchmark; the kernel ends connections whose host vanished.
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    int idle = 60, interval = 10, count = 6;
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
    auto owned = std::make_unique<Conn>();
    Conn& c = *owned;
    c.fd = fd;
    c.serial = ++nextSerial_;
    c.peer = numericPeer(fd);
    c.lastActiveNs = nowNs();
    c.handshakeEndNs = c.lastActiveNs + limits_.handshakeMs * 1'000'000;
    c.epollEvents = EPOLLIN;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(epollFd_, EPOLL_CTL_ADD, fd, &ev);
    conns_[fd] = std::move(owned);
    account(c);
    if (dataBytes_ + bufferedBytes_ > limits_.totalQuotaBytes)
      refuse(c, fmt::format("rendezvous store full: it holds {} bytes, its total limit is {} bytes "
                            "(too many connections or keys)",
                            dataBytes_ + bufferedBytes_, limits_.totalQuotaBytes));
  }
}

bool TcpStoreServer::onAcceptError(int err) {
  const bool outOfFds = err == EMFILE || err == ENFILE;
  if (!acceptTroubleLogged_ && verbose_)
    log::write(fmt::format(
        "rdmabench rendezvous: accept: {}{} ({} connections open); {}\n", std::strerror(err),
        err == EMFILE   ? " (EMFILE)"
        : err == ENFILE ? " (ENFILE)"
                        : "",
        conns_.size(),
        outOfFds ? "new connections are refused until descriptors are free (raise ulimit -n?)"
                 : "accepting paused for 100 ms"));
  acceptTroubleLogged_ = true;
  if (outOfFds && reserveFd_ >= 0) {
    ::close(reserveFd_);
    reserveFd_ = -1;
    int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    const int acceptErr = errno;
    if (fd >= 0) {
      // The client's handshake then fails with this line instead of a bare reset.
      std::string out;
      sendBestEffort(fd, out, kError,
                     "rendezvous server out of file descriptors: connection refused");
      ::close(fd);
    }
    reserveFd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (reserveFd_ >= 0) return fd >= 0 || acceptErr == EINTR || acceptErr == ECONNABORTED;
  }
  // No reserve (ENFILE: the system is out of descriptors too) or another error (ENOBUFS,
  // ENOMEM): stop watching the listening socket for 100 ms instead of spinning on it.
  epoll_ctl(epollFd_, EPOLL_CTL_DEL, listenFd_, nullptr);
  acceptPausedUntilNs_ = nowNs() + 100'000'000;
  return false;
}

}  // namespace rdmabench::rendezvous
