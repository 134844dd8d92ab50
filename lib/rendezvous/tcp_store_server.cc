// Server side of the TCP rendezvous store (store.h: TcpStoreServer; docs/rendezvous.md).

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
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/socket_util.h"
#include "rendezvous/protocol.h"
#include "rendezvous/store.h"
#include "rendezvous/store_protocol.h"

namespace rdmabench::rendezvous {

using nlohmann::json;

struct TcpStoreServer::Run {
  std::string id;
  int worldSize = 0;
  struct Member {
    std::string host;
    std::string state;  // "joined", "left", "failed", "lost"
    int fd = -1;
  };
  std::map<int, Member> members;
  std::map<std::string, std::string> data;
};

struct TcpStoreServer::Waiter {
  int fd;
  std::string key;
  int64_t deadlineNs;
};

struct TcpStoreServer::Conn {
  int fd = -1;
  std::string peer;
  std::string in, out;
  int stage = 0;  // 0 hello, 1 join, 2 joined
  Run* run = nullptr;
  int rank = -1;
  bool closing = false;  // flush `out`, then close
  std::vector<Waiter> waits;
};

namespace {

std::string numericPeer(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  return formatHostPort(numericHost(ss), portOf(ss));
}

}  // namespace

TcpStoreServer::TcpStoreServer(const std::string& bindAddress, uint16_t port, std::string runId,
                               uint32_t maxFrameBytes)
    : runId_(std::move(runId)), maxFrameBytes_(maxFrameBytes) {
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
}

void TcpStoreServer::closeInChild() {
  if (listenFd_ >= 0) ::close(listenFd_);
  if (epollFd_ >= 0) ::close(epollFd_);
  if (wakeFd_ >= 0) ::close(wakeFd_);
  listenFd_ = epollFd_ = wakeFd_ = -1;
  for (auto& [fd, c] : conns_)
    ::close(fd);
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
        if (verbose_) std::cerr << "rdmabench rendezvous: " << e.what() << "\n";
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
  bool any = false;
  for (const auto& [id, run] : runs_)
    for (const auto& [rank, m] : run->members) {
      any = true;
      if (m.state == "joined") return false;
    }
  return any;
}

size_t TcpStoreServer::joinedCount() const {
  size_t n = 0;
  for (const auto& [id, run] : runs_)
    n += run->members.size();
  return n;
}

int TcpStoreServer::nextTimeoutMs(int cap) const {
  int64_t now = nowNs();
  int64_t best = cap < 0 ? INT64_MAX : static_cast<int64_t>(cap);
  for (const auto& [fd, c] : conns_)
    for (const auto& w : c->waits) {
      int64_t ms = (w.deadlineNs - now) / 1'000'000 + 1;
      best = std::min(best, std::max<int64_t>(ms, 0));
    }
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
    if (events[i].events & EPOLLOUT) flush(c);
    if (conns_.count(fd) && (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) onReadable(c);
  }
  expireWaiters();
}

void TcpStoreServer::acceptAll() {
  for (;;) {
    int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    c->peer = numericPeer(fd);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(epollFd_, EPOLL_CTL_ADD, fd, &ev);
    conns_[fd] = std::move(c);
  }
}

void TcpStoreServer::onReadable(Conn& c) {
  const int fd = c.fd;
  char buf[65536];
  for (;;) {
    ssize_t r = ::recv(fd, buf, sizeof buf, 0);
    if (r > 0) {
      c.in.append(buf, static_cast<size_t>(r));
      if (static_cast<size_t>(r) < sizeof buf) break;
      continue;
    }
    if (r == 0) {
      closeConn(fd, "died (its rendezvous connection closed without notice)", false);
      return;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    if (errno == EINTR) continue;
    closeConn(fd, fmt::format("died (rendezvous connection: {})", std::strerror(errno)), false);
    return;
  }
  while (conns_.count(fd)) {
    if (c.in.size() < kFrameHeaderBytes) return;
    uint32_t len;
    uint16_t type;
    try {
      decodeHeader(reinterpret_cast<const uint8_t*>(c.in.data()), maxFrameBytes_, len, type);
    } catch (const std::exception& e) {
      sendFrame(c, kError, e.what());
      closeConn(fd, "broke the store protocol", false);
      return;
    }
    if (c.in.size() < kFrameHeaderBytes + len) return;
    std::string payload = c.in.substr(kFrameHeaderBytes, len);
    c.in.erase(0, kFrameHeaderBytes + len);
    try {
      handleFrame(c, type, payload);
    } catch (const std::exception& e) {
      if (!conns_.count(fd)) return;
      sendFrame(c, kError, e.what());
      if (verbose_)
        std::cerr << fmt::format("rdmabench rendezvous: refused {}: {}\n", c.peer, e.what());
      c.closing = true;
      flush(c);
      return;
    }
  }
}

void TcpStoreServer::handleFrame(Conn& c, uint16_t type, const std::string& payload) {
  if (c.closing) return;
  if (c.stage == 0) {
    if (type != kHello) throw ProtocolError("expected a hello");
    Frame f{type, std::vector<uint8_t>(payload.begin(), payload.end())};
    Hello h = decodeHello(f, c.peer);
    if (h.protocolVersion != kProtocolVersion)
      throw ProtocolError(
          fmt::format("rendezvous server speaks protocol version {} (rdmabench {}), the client {} "
                      "(rdmabench {})",
                      kProtocolVersion, RDMABENCH_VERSION, h.protocolVersion, h.toolVersion));
    sendFrame(c, kHelloAck, encodeHello({kProtocolVersion, RDMABENCH_VERSION}));
    c.stage = 1;
    return;
  }
  if (c.stage == 1) {
    if (type != kStoreJoin) throw ProtocolError("expected a join message");
    json j = json::parse(payload, nullptr, false);
    if (!j.is_object()) throw ProtocolError("malformed join message");
    std::string runId = j.value("run_id", std::string());
    int rank = j.value("rank", -1), world = j.value("world_size", 0);
    std::string host = j.value("host", std::string());
    if (!runId_.empty() && runId != runId_)
      throw ProtocolError(fmt::format(
          "rank {} from {} belongs to run '{}', this rendezvous serves run '{}' (two jobs on "
          "one port?)",
          rank, host, runId, runId_));
    if (world < 1 || rank < 0 || rank >= world)
      throw ProtocolError(fmt::format("rank {} outside world size {}", rank, world));
    auto& run = runs_[runId];
    if (!run) {
      run = std::make_unique<Run>();
      run->id = runId;
      run->worldSize = world;
    }
    if (run->worldSize != world)
      throw ProtocolError(
          fmt::format("rank {} from {} says world size {}, run '{}' has world size {}", rank, host,
                      world, runId, run->worldSize));
    auto m = run->members.find(rank);
    if (m != run->members.end())
      throw ProtocolError(fmt::format("rank {} joined twice (first from {}, now from {})", rank,
                                      m->second.host, host));
    run->members[rank] = Run::Member{host, "joined", c.fd};
    c.run = run.get();
    c.rank = rank;
    c.stage = 2;
    sendFrame(c, kStoreJoinAck, json{{"world_size", world}}.dump());
    return;
  }
  Run& run = *c.run;
  std::string key, rest;
  switch (type) {
    case kStoreSet:
      decodeKeyRecord(payload, key, rest);
      run.data[key] = std::move(rest);
      sendFrame(c, kStoreOk, "");
      wake(run, key);
      return;
    case kStoreGet: {
      if (payload.size() < 4) throw ProtocolError("truncated get");
      const uint32_t t = ByteReader(payload).u32();
      decodeKeyRecord(std::string_view(payload).substr(4), key, rest);
      auto it = run.data.find(key);
      if (it != run.data.end()) {
        sendFrame(c, kStoreValue, it->second);
        return;
      }
      int64_t dl = t == UINT32_MAX ? INT64_MAX : nowNs() + static_cast<int64_t>(t) * 1'000'000;
      c.waits.push_back(Waiter{c.fd, key, dl});
      return;
    }
    case kStoreAdd: {
      decodeKeyRecord(payload, key, rest);
      int64_t delta = static_cast<int64_t>(decodeU64(rest));
      auto it = run.data.find(key);
      int64_t v = (it == run.data.end() ? 0 : static_cast<int64_t>(decodeU64(it->second))) + delta;
      run.data[key] = encodeU64(static_cast<uint64_t>(v));
      sendFrame(c, kStoreValue, encodeU64(static_cast<uint64_t>(v)));
      wake(run, key);
      return;
    }
    case kStoreBye: {
      json j = json::parse(payload, nullptr, false);
      bool ok = j.is_object() && j.value("ok", false);
      std::string reason = j.is_object() ? j.value("reason", std::string()) : "";
      closeConn(c.fd, ok ? "" : "failed: " + reason, true);
      return;
    }
    default:
      throw ProtocolError(fmt::format("unexpected store message type {}", type));
  }
}

void TcpStoreServer::wake(Run& run, const std::string& key) {
  const std::string& value = run.data[key];
  for (auto& [rank, m] : run.members) {
    if (m.fd < 0) continue;
    auto it = conns_.find(m.fd);
    if (it == conns_.end()) continue;
    Conn& c = *it->second;
    if (c.closing) continue;
    for (size_t i = 0; i < c.waits.size();) {
      if (c.waits[i].key == key) {
        sendFrame(c, kStoreValue, value);
        c.waits.erase(c.waits.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
  }
}

void TcpStoreServer::expireWaiters() {
  int64_t now = nowNs();
  std::vector<int> due;
  for (auto& [fd, cp] : conns_)
    for (const auto& w : cp->waits)
      if (w.deadlineNs <= now && !cp->closing) {
        due.push_back(fd);
        break;
      }
  for (int fd : due) {
    auto found = conns_.find(fd);
    if (found == conns_.end()) continue;
    Conn& c = *found->second;
    for (size_t i = 0; i < c.waits.size();) {
      if (c.waits[i].deadlineNs > now) {
        ++i;
        continue;
      }
      json missing = json::array();
      int joined = 0;
      for (int r = 0; r < c.run->worldSize; ++r) {
        auto m = c.run->members.find(r);
        if (m == c.run->members.end()) {
          missing.push_back(json{{"rank", r}, {"state", "never arrived"}});
        } else if (m->second.state != "joined" && m->second.state != "left") {
          missing.push_back(
              json{{"rank", r}, {"host", m->second.host}, {"state", m->second.state}});
        } else {
          ++joined;
        }
      }
      sendFrame(c, kStoreTimeout,
                json{{"key", c.waits[i].key}, {"missing", missing}, {"joined", joined}}.dump());
      c.waits.erase(c.waits.begin() + static_cast<long>(i));
    }
  }
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
  while (!c.out.empty()) {
    ssize_t w = ::send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (w > 0) {
      c.out.erase(0, static_cast<size_t>(w));
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    c.out.clear();
    break;
  }
  epoll_event ev{};
  ev.events = EPOLLIN | (c.out.empty() ? 0u : static_cast<uint32_t>(EPOLLOUT));
  ev.data.fd = fd;
  epoll_ctl(epollFd_, EPOLL_CTL_MOD, fd, &ev);
  if (c.closing && c.out.empty()) closeConn(fd, "was refused by the rendezvous", true);
}

void TcpStoreServer::closeConn(int fd, const std::string& reason, bool clean) {
  auto it = conns_.find(fd);
  if (it == conns_.end()) return;
  std::unique_ptr<Conn> c = std::move(it->second);
  conns_.erase(it);
  epoll_ctl(epollFd_, EPOLL_CTL_DEL, fd, nullptr);
  ::close(fd);
  if (c->stage != 2 || !c->run) return;
  Run& run = *c->run;
  auto& m = run.members[c->rank];
  m.fd = -1;
  if (reason.empty()) {
    m.state = "left";
    return;
  }
  m.state = clean ? "failed" : "lost";
  if (verbose_)
    std::cerr << fmt::format("rdmabench rendezvous: rank {} on {} {}\n", c->rank, m.host, reason);
  std::string note =
      json{{"rank", c->rank}, {"host", m.host}, {"reason", reason}, {"clean", clean}}.dump();
  for (auto& [rank, other] : run.members) {
    if (other.fd < 0) continue;
    auto o = conns_.find(other.fd);
    if (o != conns_.end()) sendFrame(*o->second, kStoreRankLost, note);
  }
}

}  // namespace rdmabench::rendezvous
