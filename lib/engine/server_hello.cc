// The connections the daemon holds until their whole hello has arrived (server_hello.h).
#include "engine/server_hello.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "common/log.h"
#include "engine/session.h"
#include "rendezvous/protocol.h"

namespace rdmabench::engine::detail {

namespace {

// A Hello frame's payload is at most 328 bytes (rendezvous/protocol.h); a longer first frame is
// no hello and goes to a session, which answers it with the protocol's error.
constexpr uint32_t kMaxHelloPayload = 328;

void setReceiveLowWater(int fd, int bytes) {
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes);
}

}  // namespace

HelloPool::HelloPool(size_t budget, int64_t helloTimeoutMs, bool verbose)
    : budget_(std::max<size_t>(1, budget)), helloTimeoutMs_(helloTimeoutMs), verbose_(verbose) {}

HelloPool::State HelloPool::examine(rendezvous::Channel& ch) {
  uint8_t buf[rendezvous::kFrameHeaderBytes + kMaxHelloPayload];
  const ssize_t n = ::recv(ch.fd(), buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return State::kGone;
  if (n < 0)
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? State::kWaiting
                                                                     : State::kGone;
  size_t need = rendezvous::kFrameHeaderBytes;
  if (static_cast<size_t>(n) >= rendezvous::kFrameHeaderBytes) {
    uint32_t length = 0;
    uint16_t type = 0, reserved = 0;
    std::memcpy(&length, buf, 4);  // little-endian hosts only, like the rest of the wire code
    std::memcpy(&type, buf + 4, 2);
    std::memcpy(&reserved, buf + 6, 2);
    // Not a hello: the session answers it (one Error frame) as it does today.
    if (type != rendezvous::kHello || reserved != 0 || length > kMaxHelloPayload)
      return State::kComplete;
    need += length;
  }
  if (static_cast<size_t>(n) >= need) return State::kComplete;
  // poll() reports the socket readable once `need` bytes are queued (or on a hang-up).
  setReceiveLowWater(ch.fd(), static_cast<int>(need));
  return State::kWaiting;
}

void HelloPool::add(rendezvous::Channel ch, std::vector<HelloReady>& ready) {
  const auto now = std::chrono::steady_clock::now();
  const State s = examine(ch);
  if (s == State::kGone) return;  // hung up before a hello: closed quietly
  if (s == State::kComplete) {
    setReceiveLowWater(ch.fd(), 1);
    ready.push_back(HelloReady{std::move(ch), now});
    return;
  }
  if (held_.size() >= budget_) {
    drop(held_.front(), fmt::format("{} connections are waiting for their hello (the server's "
                                    "limit); the oldest goes first",
                                    held_.size()));
    held_.pop_front();
  }
  held_.push_back(Held{std::move(ch), now});
}

void HelloPool::appendPollFds(std::vector<pollfd>& fds) const {
  for (const Held& h : held_)
    fds.push_back(pollfd{h.channel.fd(), POLLIN | POLLRDHUP, 0});
}

void HelloPool::collect(const pollfd* fds, std::vector<HelloReady>& ready) {
  std::deque<Held> still;
  for (size_t i = 0; i < held_.size(); ++i) {
    Held& h = held_[i];
    State s = fds[i].revents ? examine(h.channel) : State::kWaiting;
    // A peer that shut its side down before its hello was complete sends nothing more (and its
    // socket would stay readable: no busy loop).
    if (s == State::kWaiting && (fds[i].revents & (POLLHUP | POLLERR | POLLRDHUP)))
      s = State::kGone;
    if (s == State::kComplete) {
      setReceiveLowWater(h.channel.fd(), 1);
      ready.push_back(HelloReady{std::move(h.channel), h.acceptedAt});
    } else if (s == State::kWaiting) {
      still.push_back(std::move(h));
    }  // kGone: closed quietly when `h` goes out of scope
  }
  held_ = std::move(still);
}

void HelloPool::dropLate(SteadyTime now) {
  const auto limit = std::chrono::milliseconds(helloTimeoutMs_);
  while (!held_.empty() && now - held_.front().acceptedAt > limit) {
    drop(held_.front(), fmt::format("no complete hello within {} ms", helloTimeoutMs_));
    held_.pop_front();
  }
}

void HelloPool::closeInChild() const {
  for (const Held& h : held_)
    if (h.channel.fd() >= 0) ::close(h.channel.fd());
}

void HelloPool::drop(Held& h, const std::string& why) {
  if (verbose_)
    log::write(fmt::format("rdmabench server: dropped {} before its hello: {}\n",
                           h.channel.peerName(), why));
  tellPeer(h.channel, "server dropped this connection before its hello: " + why);
}

size_t helloPoolBudget() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return 16;
  // Enough for the largest pool and its sessions; never above the hard limit.
  const rlim_t want = std::min<rlim_t>(lim.rlim_max, 3 * 4096 + 256);
  if (lim.rlim_cur < want) {
    rlimit raised = lim;
    raised.rlim_cur = want;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
  }
  const rlim_t half = lim.rlim_cur == RLIM_INFINITY ? 4096 : lim.rlim_cur / 2;
  return static_cast<size_t>(std::clamp<rlim_t>(half, 16, 4096));
}

}  // namespace rdmabench::engine::detail
