// Per-connection I/O of the TCP rendezvous store server (store.h: TcpStoreServer): reading and
// framing input, refusing, queued output with backpressure, accounting, and the expiry of
// connections past their deadlines. Sockets, epoll and accept are in tcp_store_server.cc.

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

// One non-blocking attempt to send what `out` holds plus a frame (the connection is closed next).
void sendBestEffort(int fd, std::string& out, uint16_t type, const std::string& text) {
  uint8_t h[kFrameHeaderBytes];
  encodeHeader(static_cast<uint32_t>(text.size()), type, h);
  out.append(reinterpret_cast<const char*>(h), kFrameHeaderBytes);
  out += text;
  if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
    // Closed either way.
  }
}

void TcpStoreServer::onReadable(Conn& c) {
  const int fd = c.fd;
  char buf[65536];
  // A few reads per event (level-triggered epoll comes back for the rest): fair to other
  // connections, and `in` never holds more than a frame and a read beyond it.
  for (int reads = 0; reads < 4; ++reads) {
    ssize_t r = ::recv(fd, buf, sizeof buf, 0);
    if (r > 0) {
      c.in.append(buf, static_cast<size_t>(r));
      c.lastActiveNs = nowNs();
      processInput(c);
      if (!conns_.count(fd) || c.paused || c.closing) return;
      if (static_cast<size_t>(r) < sizeof buf) return;
      continue;
    }
    if (r == 0) {
      closeConn(fd, "died (its rendezvous connection closed without notice)", false);
      return;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) return;
    if (errno == EINTR) continue;
    closeConn(fd, fmt::format("died (rendezvous connection: {})", std::strerror(errno)), false);
    return;
  }
}

void TcpStoreServer::processInput(Conn& c) {
  const int fd = c.fd;
  // The largest legitimate frame: a set of a maximal key and value.
  const uint64_t frameLimit = 4 + limits_.maxKeyBytes + limits_.maxValueBytes;
  while (conns_.count(fd) && !c.paused && !c.closing) {
    if (c.discard > 0) {
      size_t n = std::min<size_t>(c.discard, c.in.size());
      c.in.erase(0, n);
      c.discard -= static_cast<uint32_t>(n);
      if (c.discard > 0) break;
    }
    if (c.in.size() < kFrameHeaderBytes) break;
    uint32_t len;
    uint16_t type;
    try {
      decodeHeader(reinterpret_cast<const uint8_t*>(c.in.data()), kDefaultMaxFrameBytes, len, type);
    } catch (const std::exception& e) {
      refuse(c, e.what());
      return;
    }
    if (len > frameLimit) {
      // Answered and skipped; a joined client's connection stays usable (its set failed).
      std::string msg =
          type == kStoreSet
              ? fmt::format(
                    "set of {} bytes refused: the rendezvous store takes values of at "
                    "most {} bytes and keys of at most {} bytes",
                    len, limits_.maxValueBytes, limits_.maxKeyBytes)
              : fmt::format("store message of {} bytes (type {}) above the limit of {} bytes", len,
                            type, frameLimit);
      c.in.erase(0, kFrameHeaderBytes);
      c.discard = len;
      if (c.stage < 2) {
        refuse(c, msg);
        return;
      }
      if (verbose_ && !c.refusalLogged)  // once per connection
        log::write(fmt::format("rdmabench rendezvous: refused a message of rank {} from {}: {}\n",
                               c.rank, c.peer, msg));
      c.refusalLogged = true;
      sendFrame(c, kError, msg);
      continue;
    }
    if (c.in.size() < kFrameHeaderBytes + len) break;
    std::string payload = c.in.substr(kFrameHeaderBytes, len);
    c.in.erase(0, kFrameHeaderBytes + len);
    try {
      handleFrame(c, type, payload);
    } catch (const std::exception& e) {
      if (!conns_.count(fd)) return;
      refuse(c, e.what());
      return;
    }
  }
  if (conns_.count(fd)) account(c);
}

void TcpStoreServer::refuse(Conn& c, const std::string& message) {
  if (verbose_)
    log::write(
        fmt::format("rdmabench rendezvous: refused {}: {}\n", c.peer, escapeForLog(message)));
  sendFrame(c, kError, message);
  if (!conns_.count(c.fd) || c.closing) return;
  c.closing = true;
  c.closeReason = "was refused by the rendezvous: " + message;
  c.closeByNs = nowNs() + 2'000'000'000;  // a client that never reads the answer is cut anyway
  flush(c);
}

void TcpStoreServer::sendFrame(Conn& c, uint16_t type, const std::string& payload) {
  uint8_t h[kFrameHeaderBytes];
  encodeHeader(static_cast<uint32_t>(payload.size()), type, h);
  c.out.append(reinterpret_cast<const char*>(h), kFrameHeaderBytes);
  c.out.append(payload);
  flush(c);
}

void TcpStoreServer::flush(Conn& c) {
  const int fd = c.fd;
  size_t sent = 0;
  while (sent < c.out.size()) {
    ssize_t w = ::send(fd, c.out.data() + sent, c.out.size() - sent, MSG_NOSIGNAL);
    if (w > 0) {
      sent += static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    sent = c.out.size();  // the peer is gone: reading says so
    break;
  }
  c.out.erase(0, sent);
  // Backpressure: a client that does not read its answers is not read either.
  c.paused = c.out.size() >= limits_.outputPauseBytes;
  const uint32_t events = (c.paused || c.closing ? 0u : static_cast<uint32_t>(EPOLLIN)) |
                          (c.out.empty() ? 0u : static_cast<uint32_t>(EPOLLOUT));
  if (events != c.epollEvents) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    epoll_ctl(epollFd_, EPOLL_CTL_MOD, fd, &ev);
    c.epollEvents = events;
  }
  account(c);
  if (c.closing && c.out.empty()) closeConn(fd, c.closeReason, true);
}

void TcpStoreServer::account(Conn& c) {
  const size_t now = c.buffered();
  bufferedBytes_ = bufferedBytes_ - c.accounted + now;
  c.accounted = now;
  if (now > published_.peakConnBufferedBytes.load(std::memory_order_relaxed))  // one writer
    published_.peakConnBufferedBytes.store(now, std::memory_order_relaxed);
}

void TcpStoreServer::expireConnections() {
  const int64_t now = nowNs();
  struct Due {
    int fd;
    std::string tell, reason;
  };
  std::vector<Due> due;
  auto seconds = [](int64_t ms) { return static_cast<double>(ms) / 1000; };
  for (const auto& [fd, c] : conns_) {
    if (c->closing) {
      if (now >= c->closeByNs) due.push_back({fd, "", c->closeReason});
    } else if (c->stage < 2 && now >= c->handshakeEndNs) {
      std::string why =
          fmt::format("no hello and join within {:.1f} s", seconds(limits_.handshakeMs));
      due.push_back({fd, "rendezvous: connection closed: " + why, why});
    } else if (c->stage == 2 && limits_.idleMs > 0 && c->waits.empty() &&
               now >= c->lastActiveNs + limits_.idleMs * 1'000'000) {
      std::string why = fmt::format("no message for {:.1f} s (the rendezvous' idle limit)",
                                    seconds(limits_.idleMs));
      due.push_back(
          {fd, "rendezvous: connection closed: " + why, "was closed by the rendezvous: " + why});
    }
  }
  for (const auto& d : due) {
    auto it = conns_.find(d.fd);
    if (it == conns_.end()) continue;
    Conn& c = *it->second;
    if (verbose_)
      log::write(fmt::format("rdmabench rendezvous: closed {}: {}\n", c.peer, d.reason));
    if (!d.tell.empty()) sendBestEffort(d.fd, c.out, kError, d.tell);
    closeConn(d.fd, d.reason, false);
  }
  if (acceptPausedUntilNs_ != 0 && now >= acceptPausedUntilNs_) {
    acceptPausedUntilNs_ = 0;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = listenFd_;
    epoll_ctl(epollFd_, EPOLL_CTL_ADD, listenFd_, &ev);
  }
}

}  // namespace rdmabench::rendezvous
