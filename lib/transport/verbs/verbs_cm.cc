// rdma_cm mode of the verbs backend (--rdma-cm): QPs are connected by librdmacm instead of by
// exchanging QP attributes. See docs/transport-verbs.md, "Connection (rdma_cm)".
//
// Each Connector owns an event channel and a listening rdma_cm id bound to the device's IP
// address (the IPv4 address of the chosen RoCE GID, else DeviceOptions::localHost) on an
// ephemeral port. localAddress() carries that IP:port, a random token and the device limits.
// In connect(), the side with the lower (IP, port) is active (resolve address, resolve route,
// rdma_connect with the token as private data); the other accepts the request carrying the
// peer's token on its listening id. Both wait for ESTABLISHED with the caller's deadline.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "transport/peer_check.h"
#include "transport/verbs/verbs_cm_address.h"
#include "transport/verbs/verbs_core.h"

namespace rdmabench::transport::verbs {
namespace {

// Retry policy, identical to the out-of-band path (verbs_connector.cc): retry_cnt 6 (rxe
// treats 7 as infinite), rnr_retry 7 (infinite: a late receive post is not an error), local
// ACK timeout 14 (67 ms).
constexpr uint8_t kRetryCount = 6;
constexpr uint8_t kRnrRetry = 7;
constexpr uint8_t kAckTimeout = 14;
constexpr int kResolveTimeoutMs = 2000;

std::string errText(int err) {
  return std::strerror(err);
}

// The address the listening id binds to: the IPv4 address in the chosen RoCE GID, else the
// control channel's local address.
CmAddress bindAddress(const Core& core) {
  CmAddress a;
  uint32_t v4 = 0;
  if (core.ethernet && isIpv4Mapped(core.gid.gid, &v4)) {
    a.family = 4;
    std::memcpy(a.ip.data(), &v4, 4);
    return a;
  }
  if (core.ethernet && core.gid.gid[0] != 0xfe) {  // global IPv6 GID = the IPv6 address
    a.family = 6;
    std::copy(core.gid.gid.begin(), core.gid.gid.end(), a.ip.begin());
    return a;
  }
  in_addr in4{};
  in6_addr in6{};
  if (inet_pton(AF_INET, core.localHost.c_str(), &in4) == 1 && core.localHost != "127.0.0.1") {
    a.family = 4;
    std::memcpy(a.ip.data(), &in4, 4);
    return a;
  }
  if (inet_pton(AF_INET6, core.localHost.c_str(), &in6) == 1) {
    a.family = 6;
    std::memcpy(a.ip.data(), &in6, 16);
    return a;
  }
  throw TransportError(fmt::format(
      "--rdma-cm on {} port {}: no IP address to bind (GID {} is not IPv4-mapped and the "
      "control connection's local address '{}' is not usable); configure IPoIB or use the "
      "out-of-band exchange (drop --rdma-cm)",
      core.name, core.port, gidToString(core.gid.gid), core.localHost));
}

// Event channel + ids of one connection. Destroyed after the QP (CmResources contract).
class CmConnection : public CmResources {
 public:
  CmConnection() {
    channel_ = rdma_create_event_channel();
    if (channel_ == nullptr) {
      int err = errno;
      throw TransportError(fmt::format(
          "rdma_create_event_channel: {} (is the rdma_ucm module loaded?)", errText(err)));
    }
    int flags = fcntl(channel_->fd, F_GETFL);
    if (flags < 0 || fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
      int err = errno;
      rdma_destroy_event_channel(channel_);
      throw SystemError("fcntl O_NONBLOCK on the rdma_cm event channel", err);
    }
  }
  ~CmConnection() override {
    destroyQp();
    if (conn_ != nullptr) rdma_destroy_id(conn_);
    if (listen_ != nullptr) rdma_destroy_id(listen_);
    rdma_destroy_event_channel(channel_);
  }
  CmConnection(const CmConnection&) = delete;
  CmConnection& operator=(const CmConnection&) = delete;

  void destroyQp() override {
    if (conn_ != nullptr && conn_->qp != nullptr) rdma_destroy_qp(conn_);
  }

  rdma_event_channel* channel_ = nullptr;
  rdma_cm_id* listen_ = nullptr;
  rdma_cm_id* conn_ = nullptr;  // the connected id (active: created; passive: from the request)
};

// One received event, acked on destruction.
struct Event {
  rdma_cm_event* ev = nullptr;
  ~Event() {
    if (ev != nullptr) rdma_ack_cm_event(ev);
  }
};

class CmConnector : public Connector {
 public:
  explicit CmConnector(std::shared_ptr<Core> core)
      : core_(std::move(core)), cm_(std::make_unique<CmConnection>()) {
    core_->reserveCq(core_->liveQps + 1);
    local_ = bindAddress(*core_);
    local_.linkLayer = core_->portAttr.link_layer;
    local_.initRdAtom = static_cast<uint8_t>(std::min(core_->devAttr.max_qp_init_rd_atom, 255));
    local_.rdAtom = static_cast<uint8_t>(std::min(core_->devAttr.max_qp_rd_atom, 255));
    std::random_device rd;
    local_.token = (static_cast<uint64_t>(rd()) << 32) | rd();

    if (rdma_create_id(cm_->channel_, &cm_->listen_, nullptr, RDMA_PS_TCP) != 0) {
      int err = errno;
      throw TransportError(fmt::format("rdma_create_id on {}: {}", core_->name, errText(err)));
    }
    sockaddr_storage ss = local_.sockaddr();
    if (rdma_bind_addr(cm_->listen_, reinterpret_cast<sockaddr*>(&ss)) != 0) {
      int err = errno;
      throw TransportError(
          fmt::format("rdma_bind_addr {} on {}: {}", local_.text(), core_->name, errText(err)));
    }
    if (cm_->listen_->verbs != nullptr && cm_->listen_->verbs != core_->ctx)
      throw TransportError(fmt::format(
          "--rdma-cm: address {} belongs to RDMA device {}, not {} (pick the device with -d or "
          "the GID with --gid-index)",
          local_.text(), ibv_get_device_name(cm_->listen_->verbs->device), core_->name));
    if (rdma_listen(cm_->listen_, 4) != 0) {
      int err = errno;
      throw TransportError(
          fmt::format("rdma_listen on {} ({}): {}", local_.text(), core_->name, errText(err)));
    }
    local_.port = ntohs(rdma_get_src_port(cm_->listen_));
  }

  std::vector<uint8_t> localAddress() const override { return local_.encode(); }

  std::unique_ptr<Endpoint> connect(const std::vector<uint8_t>& remoteAddress,
                                    const Deadline& deadline) override {
    if (!cm_)
      throw TransportError(
          fmt::format("verbs rdma_cm connect on {}: connector already used", core_->name));
    CmAddress remote = CmAddress::decode(remoteAddress, core_->name);
    peer_ = fmt::format("{} (rdma_cm)", remote.text());
    if (remote.linkLayer != local_.linkLayer)
      throw TransportError(fmt::format(
          "verbs rdma_cm connect on {} to {}: link layer mismatch (local {}, peer {})", core_->name,
          peer_, linkLayerName(local_.linkLayer), linkLayerName(remote.linkLayer)));
    if (!local_.lessThan(remote) && !remote.lessThan(local_))
      throw ProtocolError(fmt::format("verbs rdma_cm connect on {}: peer has our own address {}",
                                      core_->name, local_.text()));
    rdma_conn_param param{};
    param.initiator_depth = std::min(local_.initRdAtom, remote.rdAtom);
    param.responder_resources = std::min(local_.rdAtom, remote.initRdAtom);
    param.retry_count = kRetryCount;
    param.rnr_retry_count = kRnrRetry;
    param.private_data = &local_.token;
    param.private_data_len = sizeof local_.token;

    if (local_.lessThan(remote)) {
      // A server session connects only to the host that connected to it: a client naming a low
      // address elsewhere would make it rdma_connect() there (transport/peer_check.h).
      if (core_->acceptOnly) {
        char ip[INET6_ADDRSTRLEN] = "";  // the IP alone: CmAddress::text() is "IP:PORT"
        inet_ntop(remote.family == 4 ? AF_INET : AF_INET6, remote.ip.data(), ip, sizeof ip);
        if (std::string why = serverPeerRefusal(core_->peerHost, ip); !why.empty())
          throw TransportError(fmt::format("verbs rdma_cm connect on {}: {}", core_->name, why));
      }
      connectActive(remote, param, deadline);
    } else
      acceptPassive(remote, param, deadline);

    ibv_qp* qp = cm_->conn_->qp;
    return adoptCmQp(core_, qp, std::move(cm_));
  }

 private:
  void connectActive(const CmAddress& remote, rdma_conn_param& param, const Deadline& deadline) {
    if (rdma_create_id(cm_->channel_, &cm_->conn_, nullptr, RDMA_PS_TCP) != 0)
      fail("rdma_create_id", errno);
    sockaddr_storage src = local_.sockaddr();
    reinterpret_cast<sockaddr_in*>(&src)->sin_port = 0;  // same offset for sockaddr_in6
    sockaddr_storage dst = remote.sockaddr();
    if (rdma_resolve_addr(cm_->conn_, reinterpret_cast<sockaddr*>(&src),
                          reinterpret_cast<sockaddr*>(&dst), kResolveTimeoutMs) != 0)
      fail("rdma_resolve_addr", errno);
    expect(RDMA_CM_EVENT_ADDR_RESOLVED, deadline, "address resolution");
    if (cm_->conn_->verbs != core_->ctx)
      throw TransportError(fmt::format(
          "--rdma-cm: the route to {} leaves through RDMA device {}, not {}", peer_,
          cm_->conn_->verbs ? ibv_get_device_name(cm_->conn_->verbs->device) : "?", core_->name));
    uint8_t timeout = kAckTimeout;
    rdma_set_option(cm_->conn_, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout,
                    sizeof timeout);  // best effort: older kernels lack it
    if (rdma_resolve_route(cm_->conn_, kResolveTimeoutMs) != 0) fail("rdma_resolve_route", errno);
    expect(RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, "route resolution");
    createQp();
    if (rdma_connect(cm_->conn_, &param) != 0) fail("rdma_connect", errno);
    expect(RDMA_CM_EVENT_ESTABLISHED, deadline, "the connection to be accepted");
  }

  void acceptPassive(const CmAddress& remote, rdma_conn_param& param, const Deadline& deadline) {
    for (;;) {
      rdma_cm_id* stray = nullptr;
      {
        Event e = next(deadline, "the peer's connect request");
        if (e.ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) unexpected(*e.ev, "a connect request");
        uint64_t token = 0;
        if (e.ev->param.conn.private_data != nullptr &&
            e.ev->param.conn.private_data_len >= sizeof token)
          std::memcpy(&token, e.ev->param.conn.private_data, sizeof token);
        if (token == remote.token) {
          cm_->conn_ = e.ev->id;
        } else {  // a stray request (another client): not our peer
          rdma_reject(e.ev->id, nullptr, 0);
          stray = e.ev->id;
        }
      }  // the event is acked here; only then may its id be destroyed
      if (stray != nullptr) {
        rdma_destroy_id(stray);
        continue;
      }
      if (cm_->conn_->verbs != core_->ctx)
        throw TransportError(
            fmt::format("--rdma-cm: the request from {} arrived on RDMA device {}, not {}", peer_,
                        ibv_get_device_name(cm_->conn_->verbs->device), core_->name));
      uint8_t timeout = kAckTimeout;
      rdma_set_option(cm_->conn_, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout,
                      sizeof timeout);  // best effort, as on the active side
      createQp();
      if (rdma_accept(cm_->conn_, &param) != 0) fail("rdma_accept", errno);
      break;
    }
    expect(RDMA_CM_EVENT_ESTABLISHED, deadline, "the connection to be established");
  }

  void createQp() {
    ibv_qp_init_attr attr = core_->qpInitAttr(core_->inlineBytes);
    if (rdma_create_qp(cm_->conn_, core_->pd, &attr) != 0) {
      int err = errno;
      throw TransportError(fmt::format(
          "rdma_create_qp (RC, tx depth {}, rx depth {}, inline {}) on {} for {}: {}",
          core_->txDepth, core_->rxDepth, core_->inlineBytes, core_->name, peer_, errText(err)));
    }
    ++core_->liveQps;  // the endpoint (or ~CmConnector through destroyQp) gives it back
    qpCounted_ = true;
  }

  [[noreturn]] void fail(const char* call, int err) {
    throw TransportError(fmt::format("{} on {} to {}: {}", call, core_->name, peer_, errText(err)));
  }

  [[noreturn]] void unexpected(const rdma_cm_event& ev, const char* waitingFor) {
    std::string why =
        ev.status != 0 ? fmt::format(" (status {}: {})", ev.status,
                                     ev.status < 0 ? errText(-ev.status) : "rejected/unreachable")
                       : "";
    throw TransportError(fmt::format(
        "rdma_cm on {} waiting for {} from {}: got {}{}{}", core_->name, waitingFor, peer_,
        rdma_event_str(ev.event), why,
        ev.event == RDMA_CM_EVENT_REJECTED ? "; is the peer's rdma_cm listener still there?" : ""));
  }

  // Next event on the channel, waiting up to `deadline` (100 ms slices, Ctrl-C checked).
  Event next(const Deadline& deadline, const char* waitingFor) {
    Event e;
    for (;;) {
      if (rdma_get_cm_event(cm_->channel_, &e.ev) == 0) return e;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        throw SystemError(fmt::format("rdma_get_cm_event on {} ({})", core_->name, waitingFor),
                          errno);
      throwIfConnectAborted("rdma_cm connect");
      if (deadline.expired())
        throw TimeoutError(fmt::format("verbs rdma_cm on {}: timed out waiting for {} from {}",
                                       core_->name, waitingFor, peer_));
      int slice = deadline.remainingMs();
      if (slice < 0 || slice > 100) slice = 100;
      pollfd pfd{cm_->channel_->fd, POLLIN, 0};
      ::poll(&pfd, 1, slice);
    }
  }

  void expect(rdma_cm_event_type type, const Deadline& deadline, const char* waitingFor) {
    Event e = next(deadline, waitingFor);
    if (e.ev->event != type) unexpected(*e.ev, waitingFor);
  }

 public:
  ~CmConnector() override {
    if (cm_ && qpCounted_ && cm_->conn_ != nullptr && cm_->conn_->qp != nullptr) {
      cm_->destroyQp();
      --core_->liveQps;
    }
  }

 private:
  std::shared_ptr<Core> core_;
  std::unique_ptr<CmConnection> cm_;
  CmAddress local_;
  std::string peer_ = "?";
  bool qpCounted_ = false;
};

}  // namespace

std::unique_ptr<Connector> makeCmConnector(std::shared_ptr<Core> core) {
  return std::make_unique<CmConnector>(std::move(core));
}

}  // namespace rdmabench::transport::verbs
