// SocketDevice, SocketMemoryRegion and the backend entry points (openDevice, probe).
#include "transport/socket/device.h"

#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <random>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/error.h"
#include "transport/backends.h"
#include "transport/socket/connector.h"
#include "transport/socket/endpoint.h"
#include "transport/socket/framing.h"

namespace rdmabench::transport::socket {
namespace {

// Regions need no registration with the kernel; the key (random base + counter) only lets the
// target check incoming writes/reads against what it registered.
class SocketMemoryRegion : public MemoryRegion {
 public:
  SocketMemoryRegion(SocketDevice& device, uint8_t* data, size_t size, uint64_t key)
      : device_(device), data_(data), size_(size), key_(key) {}
  ~SocketMemoryRegion() override { device_.dropRegion(key_); }
  uint8_t* data() const override { return data_; }
  size_t size() const override { return size_; }
  RemoteRegion exportRegion() const override {
    RemoteRegion r;
    r.addr = 0;  // offsets are relative to the region start
    r.length = size_;
    r.key.resize(8);
    putLe(r.key.data(), key_, 8);
    return r;
  }

 private:
  SocketDevice& device_;
  uint8_t* data_;
  size_t size_;
  uint64_t key_;
};

// --inline: -1 = default; above the cap is a usage error naming it.
uint32_t inlineOption(int64_t requested) {
  if (requested < 0) return kDefaultInlineBytes;
  if (requested > static_cast<int64_t>(kMaxInlineBytes))
    throw UsageError(fmt::format("--inline {}: above the socket transport's inline cap of {} bytes",
                                 requested, kMaxInlineBytes));
  return static_cast<uint32_t>(requested);
}

uint32_t depthOption(uint32_t value, uint32_t dflt, const char* option) {
  if (value == 0) return dflt;
  if (value > kMaxDepth)
    throw UsageError(fmt::format("socket: {} {} exceeds the limit {}", option, value, kMaxDepth));
  return value;
}

SockAddr loopbackLike(const SockAddr& like) {
  SockAddr a;
  if (like.ss.ss_family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.ss);
    in6->sin6_family = AF_INET6;
    in6->sin6_addr = in6addr_loopback;
    a.len = sizeof(sockaddr_in6);
  } else {
    auto* in4 = reinterpret_cast<sockaddr_in*>(&a.ss);
    in4->sin_family = AF_INET;
    in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.len = sizeof(sockaddr_in);
  }
  return a;
}

}  // namespace

// Bind address: localHost when given; else 127.0.0.1 (or ::1) when peerHost is empty or a
// loopback address; else the local address the kernel routes to peerHost from. When the bind
// address is a wildcard (localHost "0.0.0.0" / "::"), the address bytes carry the route source
// toward peerHost, or loopback without a peerHost.
SocketDevice::SocketDevice(const DeviceOptions& options)
    : localHost_(options.localHost),
      peerHost_(options.peerHost),
      txDepth_(depthOption(options.txDepth, kDefaultTxDepth, "--tx-depth")),
      rxDepth_(depthOption(options.rxDepth, kDefaultRxDepth, "--rx-depth")),
      inlineBytes_(inlineOption(options.inlineBytes)),
      useEvent_(options.useEvent()),
      yield_(options.progress == ProgressMode::kYield) {
  std::random_device rd;
  nextKey_ = ((static_cast<uint64_t>(rd()) << 32) ^ rd()) | 1;
  deviceId_ = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  // The smallest id: every peer with a random (non-zero) id connects to us (connector.h).
  acceptOnly_ = options.acceptOnly;
  if (acceptOnly_) deviceId_ = 0;
  std::optional<SockAddr> peer;
  if (!peerHost_.empty()) peer = resolveHost(peerHost_, "peer host");
  if (!localHost_.empty()) {
    bind_ = resolveHost(localHost_, "local host");
  } else if (!peer || isLoopback(*peer)) {
    bind_ = loopbackLike(peer ? *peer : SockAddr{});
  } else {
    bind_ = routeSourceFor(*peer);
  }
  advertised_ = bind_;
  if (isWildcard(bind_)) advertised_ = peer ? routeSourceFor(*peer) : loopbackLike(bind_);
  name_ = interfaceFor(advertised_);
  if (name_.empty()) name_ = formatSockaddr(advertised_.sa());
  listeners_ = std::make_shared<ListenerHub>(bind_);
  epoll_ = Fd(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_) throw SystemError("socket: epoll_create1()", errno);
  regions_.reserve(64);
  endpoints_.reserve(16);
}

SocketDevice::~SocketDevice() = default;

Caps SocketDevice::caps() const {
  Caps c;
  c.rmaWrite = true;
  c.rmaRead = true;
  c.rmaEmulated = true;
  c.rmaNeedsTargetProgress = true;
  c.maxMessageBytes = kMaxMessageBytes;
  c.maxSendQueue = txDepth_;
  c.maxRecvQueue = rxDepth_;
  c.inlineBytes = inlineBytes_;
  c.maxOutstandingReads = txDepth_;
  return c;
}

std::string SocketDevice::postListNote(OpKind op) const {
  if (op == OpKind::kRead)
    return "socket read is emulated: a batch sends its read requests in one sendmsg, the target "
           "answers each request as it polls (no batched read on the data path)";
  return fmt::format(
      "socket has no doorbell: a batch of {}s leaves in one sendmsg (posts per "
      "system call)",
      toString(op));
}

DeviceInfo SocketDevice::info() const {
  DeviceInfo i;
  i.txDepth = txDepth_;
  i.rxDepth = rxDepth_;
  i.common.inlineBytes = inlineBytes_;
  Facts& f = i.facts;
  addFact(f, "interface", interfaceFor(advertised_));
  addFact(f, "bind_address", formatSockaddr(bind_.sa()));
  addFact(f, "local_address", formatSockaddr(advertised_.sa()));
  if (!peerHost_.empty()) addFact(f, "peer_host", peerHost_);
  addFact(f, "max_message_bytes", kMaxMessageBytes);
  // The id only orders who connects (connector.h); a server session's is 0 by design, which a
  // header showing "0000000000000000" made look like a bug (newcomer finding #15).
  addFact(f, "device_id",
          acceptOnly_ ? std::string("0 (server session: accepts only)")
                      : fmt::format("{:016x}", deviceId_));
  addFact(f, "progress",
          useEvent_ ? "event (epoll)"
          : yield_  ? "yield (busy-poll, sched_yield)"
                    : "busy-poll");
  addFact(f, "rma", "emulated (needs target progress)");
  return i;
}

std::unique_ptr<MemoryRegion> SocketDevice::registerMemory(void* ptr, size_t bytes) {
  if (ptr == nullptr && bytes != 0)
    throw TransportError("socket: registerMemory of a null pointer");
  uint64_t key = nextKey_;
  nextKey_ += 2;  // stays odd, never 0
  regions_[key] = RegionSlot{static_cast<uint8_t*>(ptr), bytes};
  return std::make_unique<SocketMemoryRegion>(*this, static_cast<uint8_t*>(ptr), bytes, key);
}

void SocketDevice::dropRegion(uint64_t key) {
  auto it = regions_.find(key);
  if (it == regions_.end()) return;
  for (SocketEndpoint* ep : endpoints_)
    ep->forgetRegion(it->second.data, it->second.size);
  regions_.erase(it);
}

std::unique_ptr<Connector> SocketDevice::createConnector() {
  return std::make_unique<SocketConnector>(*this);
}

size_t SocketDevice::poll(Completion* out, size_t max) {
  if (useEvent_ && ++pollsSinceWait_ >= kQuietPolls) {
    pollsSinceWait_ = 0;
    for (SocketEndpoint* ep : endpoints_)
      ep->wakeRx();
  }
  size_t n = 0;
  for (SocketEndpoint* ep : endpoints_) {
    ep->progress();
    n += ep->harvest(out + n, max - n);
  }
  return n;
}

void SocketDevice::waitForEvent(int timeoutMs) {
  for (SocketEndpoint* ep : endpoints_)
    if (ep->hasWork()) return;
  for (SocketEndpoint* ep : endpoints_)
    ep->updateInterest();
  constexpr int kEvents = 16;
  epoll_event events[kEvents];
  // EINTR (a signal) simply returns: the caller checks interrupted().
  const int n = epoll_wait(epoll_.get(), events, kEvents, timeoutMs);
  pollsSinceWait_ = 0;
  // Level-triggered: a socket with unread bytes is always reported, so one that is not has
  // nothing to read now (bytes arriving later are reported by the next epoll_wait). A full
  // event array may have left ready sockets out: all read again then.
  if (n < 0 || n >= kEvents) {
    for (SocketEndpoint* ep : endpoints_)
      ep->wakeRx();
    return;
  }
  for (SocketEndpoint* ep : endpoints_) {
    if (!ep->rxQuiet()) continue;
    for (int i = 0; i < n; ++i)
      if (events[i].data.fd == ep->fd()) {
        ep->wakeRx();
        break;
      }
  }
}

void SocketDevice::attach(SocketEndpoint* ep) {
  endpoints_.push_back(ep);
}

void SocketDevice::detach(SocketEndpoint* ep) {
  endpoints_.erase(std::remove(endpoints_.begin(), endpoints_.end(), ep), endpoints_.end());
}

void SocketDevice::watch(int fd, uint32_t events, bool add) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_.get(), add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev) != 0)
    throw SystemError("socket: epoll_ctl()", errno);
}

void SocketDevice::unwatch(int fd) {
  (void)epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

std::unique_ptr<Device> openDevice(const DeviceOptions& options) {
  return std::make_unique<SocketDevice>(options);
}

BackendStatus probe() {
  BackendStatus s;
  s.name = "socket";
  s.built = true;
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) {
    s.reason = fmt::format("socket(AF_INET, SOCK_STREAM): {}", std::strerror(errno));
    return s;
  }
  s.usable = true;
  char host[256] = "";
  gethostname(host, sizeof(host) - 1);
  s.details["hostname"] = host;
  nlohmann::json ifs = nlohmann::json::array();
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
      if (i->ifa_addr == nullptr ||
          (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
        continue;
      ifs.push_back({{"interface", i->ifa_name}, {"address", formatSockaddr(i->ifa_addr)}});
    }
    freeifaddrs(list);
  }
  s.details["interfaces"] = ifs;
  s.reason = fmt::format("TCP sockets on {} ({} interface addresses)", host, ifs.size());
  return s;
}

}  // namespace rdmabench::transport::socket
