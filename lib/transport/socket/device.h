#pragma once
// The socket backend's Device: options, the table of registered regions that emulated RMA
// targets, the list of live endpoints that poll() drives, and the epoll set waitForEvent()
// sleeps on. One thread at a time (transport.h threading rule).

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "transport/error_texts.h"
#include "transport/socket/listener.h"
#include "transport/socket/net_util.h"
#include "transport/transport.h"

namespace rdmabench::transport::socket {

class SocketEndpoint;

// Defaults and limits (documented in docs/transport.md).
inline constexpr uint32_t kDefaultTxDepth = 128;
inline constexpr uint32_t kDefaultRxDepth = 512;
inline constexpr uint32_t kMaxDepth = 65536;
inline constexpr uint32_t kDefaultInlineBytes = 256;
inline constexpr uint32_t kMaxInlineBytes = 4096;
// Read requests one endpoint answers at a time; further requests wait in the stream.
inline constexpr uint32_t kResponseDepth = 64;

// A local region a peer may write into or read from (by key), bounds in bytes.
struct RegionSlot {
  uint8_t* data = nullptr;
  uint64_t size = 0;
};

class SocketDevice : public Device {
 public:
  // Resolves the bind address from options (see chooseBindAddress in device.cc); throws
  // TransportError / UsageError (depth limits).
  explicit SocketDevice(const DeviceOptions& options);
  ~SocketDevice() override;

  std::string backend() const override { return "socket"; }
  std::string name() const override { return name_; }
  Caps caps() const override;
  DeviceInfo info() const override;
  std::unique_ptr<MemoryRegion> registerMemory(void* ptr, size_t bytes) override;
  std::unique_ptr<Connector> createConnector() override;
  size_t poll(Completion* out, size_t max) override;
  std::string errorText(const Completion& c) const override { return errors_.text(c.errorId); }
  // Event mode: epoll_wait on the endpoints' sockets. An endpoint whose socket was found empty
  // is not read again (no recv() that could only return EAGAIN) until epoll_wait reports its
  // socket (SocketEndpoint::wakeRx), so a poll reads only sockets known or reported to hold
  // bytes, and a wait for a step's message costs epoll_wait plus one recv() per message
  // instead of one EAGAIN recv() per idle peer per poll. A full event array (16) wakes all.
  void waitForEvent(int timeoutMs) override;
  // No doorbell: a batch is one sendmsg(); a read batch sends its requests in one sendmsg and
  // the target answers each as it polls (emulated read).
  std::string postListNote(OpKind op) const override;
  // Event mode: polls without an epoll_wait after which every quiet endpoint reads again (a
  // caller that polls without ever waiting still sees its bytes).
  static constexpr uint32_t kQuietPolls = 64;
  // Event mode (DeviceOptions::useEvent()): endpoints skip reads of sockets known to be empty.
  bool eventMode() const { return useEvent_; }

  // --- for the backend's own classes ---
  const SockAddr& bindAddress() const { return bind_; }
  const SockAddr& advertisedAddress() const { return advertised_; }
  // Random 64-bit id carried in every connector address; orders devices for connect roles.
  uint64_t deviceId() const { return deviceId_; }
  // DeviceOptions::acceptOnly: this device's connectors only accept (its device id is 0).
  bool acceptOnly() const { return acceptOnly_; }
  // The one listening socket of this device, shared by its connectors (listener.h); they hold
  // it by shared_ptr, so a connector that outlives the device stays safe.
  const std::shared_ptr<ListenerHub>& listeners() const { return listeners_; }
  uint32_t txDepth() const { return txDepth_; }
  uint32_t rxDepth() const { return rxDepth_; }
  uint32_t inlineBytes() const { return inlineBytes_; }
  // Keeps the text of a failure for errorText(); returns its id (Completion::errorId).
  uint32_t keepError(std::string text) { return errors_.keep(std::move(text)); }
  // Region for an incoming write/read key, or nullptr when unknown.
  const RegionSlot* findRegion(uint64_t key) const {
    auto it = regions_.find(key);
    return it == regions_.end() ? nullptr : &it->second;
  }
  // Forgets a region (its MemoryRegion is being destroyed); endpoints stop writing into it.
  void dropRegion(uint64_t key);
  void attach(SocketEndpoint* ep);
  void detach(SocketEndpoint* ep);
  // Updates the epoll interest set of `fd` (EPOLLIN/EPOLLOUT bits).
  void watch(int fd, uint32_t events, bool add);
  void unwatch(int fd);

 private:
  SockAddr bind_;        // what listening and connecting sockets bind to (port 0)
  SockAddr advertised_;  // what the address bytes carry when bind_ is a wildcard
  std::string name_;
  std::string localHost_, peerHost_;
  uint32_t txDepth_, rxDepth_, inlineBytes_;
  bool useEvent_;
  bool yield_;  // ProgressMode::kYield: the caller yields its CPU after empty polls (a fact)
  uint32_t pollsSinceWait_ = 0;  // event mode: poll() calls since the last epoll_wait
  uint64_t nextKey_;
  uint64_t deviceId_;
  bool acceptOnly_ = false;
  std::unordered_map<uint64_t, RegionSlot> regions_;
  std::vector<SocketEndpoint*> endpoints_;
  Fd epoll_;
  std::shared_ptr<ListenerHub> listeners_;
  ErrorTexts errors_;  // texts of failed completions (errorText)
};

}  // namespace rdmabench::transport::socket
