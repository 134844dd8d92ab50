#include "transport/socket/listener.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"

namespace rdmabench::transport::socket {
namespace {

constexpr int64_t kHelloWithinNs = 10'000'000'000;  // an accepted connection's hello
constexpr int kSliceMs = 50;      // longest sleep: Ctrl-C and deadlines are noticed promptly
constexpr int kHelloSliceMs = 2;  // while a hello is still on its way

uint16_t boundPort(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  return portOf(ss);
}

}  // namespace

uint16_t ListenerHub::add(uint64_t token) {
  std::lock_guard<std::mutex> lock(mu_);
  if (tokens_.count(token)) return 0;
  if (!listen_) {
    SockAddr bind = bind_;
    setPort(bind, 0);
    const std::string where = formatSockaddr(bind.sa());
    Fd fd(::socket(bind.ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) throw SystemError(fmt::format("socket: socket() to listen on {}", where), errno);
    if (::bind(fd.get(), bind.sa(), bind.len) != 0)
      throw SystemError(fmt::format("socket: bind({})", where), errno);
    // Every peer of a rank may connect before the rank accepts: a backlog for all of them.
    if (::listen(fd.get(), SOMAXCONN) != 0)
      throw SystemError(fmt::format("socket: listen({})", where), errno);
    port_ = boundPort(fd.get());
    if (port_ == 0) throw SystemError(fmt::format("socket: getsockname({})", where), errno);
    listen_ = std::move(fd);
  }
  tokens_.insert(token);
  return port_;
}

void ListenerHub::remove(uint64_t token) {
  std::lock_guard<std::mutex> lock(mu_);
  tokens_.erase(token);
  kept_.erase(token);
  if (tokens_.empty()) {
    kept_.clear();
    pending_.clear();
    listen_.reset();
    port_ = 0;
  }
}

void ListenerHub::pump(int& rejected, std::string& lastReject) {
  for (;;) {
    Fd conn(::accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!conn) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED) break;
      throw SystemError("socket connect: accept()", errno);
    }
    Pending p;
    p.fd = std::move(conn);
    p.acceptedNs = nowNs();
    pending_.push_back(std::move(p));
  }
  const int64_t now = nowNs();
  for (size_t i = 0; i < pending_.size();) {
    Pending& p = pending_[i];
    bool drop = false;
    // Read exactly the hello; bytes after it belong to the data stream.
    while (p.got < kHelloBytes) {
      ssize_t r = ::recv(p.fd.get(), p.hello + p.got, kHelloBytes - p.got, 0);
      if (r > 0) {
        p.got += static_cast<size_t>(r);
        continue;
      }
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        if (now - p.acceptedNs > kHelloWithinNs) {
          lastReject = "no hello within 10 s";
          drop = true;
        }
      } else {
        lastReject = r == 0 ? "closed before hello" : std::strerror(errno);
        drop = true;
      }
      break;
    }
    if (!drop && p.got == kHelloBytes) {
      std::optional<uint64_t> token = decodeHello(p.hello);
      if (!token) {
        lastReject = "malformed hello";
        drop = true;
      } else if (!tokens_.count(*token) || kept_.count(*token)) {
        lastReject = "wrong token";
        drop = true;
      } else {
        kept_[*token] = std::move(p.fd);
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
    }
    if (drop) {
      ++rejected;
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    ++i;
  }
}

Fd ListenerHub::accept(uint64_t token, const Deadline& deadline, int& rejected,
                       std::string& lastReject) {
  for (;;) {
    throwIfConnectAborted("socket connect");
    int listenFd = -1;
    bool helloPending = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!tokens_.count(token) || !listen_)
        throw std::logic_error("ListenerHub::accept: token not registered");
      pump(rejected, lastReject);
      auto it = kept_.find(token);
      if (it != kept_.end()) {
        Fd fd = std::move(it->second);
        kept_.erase(it);
        return fd;
      }
      listenFd = listen_.get();
      helloPending = !pending_.empty();
    }
    if (deadline.expired()) return Fd();
    const int left = deadline.remainingMs();
    int ms = helloPending ? kHelloSliceMs : kSliceMs;
    if (left >= 0) ms = std::min(ms, std::max(left, 1));
    // Our token keeps the listener open while we sleep on it (remove() is ours to call).
    pollfd pfd{listenFd, POLLIN, 0};
    if (::poll(&pfd, 1, ms) < 0 && errno != EINTR)
      throw SystemError("poll (socket connect)", errno);
  }
}

}  // namespace rdmabench::transport::socket
