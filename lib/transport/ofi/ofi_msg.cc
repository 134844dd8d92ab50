// Connection management of the ofi backend: FI_EP_MSG connectors (EQ + passive endpoint),
// the accept/connect handshake with tokens, and closing a connection (both endpoint types).

#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/error.h"
#include "common/interrupt.h"
#include "transport/ofi/ofi_device_impl.h"

namespace rdmabench::transport::ofi {

void OfiDevice::openMsgConnector(ConnState& c) {
  c.token = rng_();
  fi_eq_attr eqAttr{};
  eqAttr.size = 16;
  eqAttr.wait_obj = FI_WAIT_UNSPEC;  // fi_eq_sread sleeps instead of spinning
  fid_eq* eq = nullptr;
  check("fi_eq_open", fi_eq_open(fabric_.get(), &eqAttr, &eq, nullptr));
  c.eq.reset(eq);
  fid_pep* pep = nullptr;
  check("fi_passive_ep", fi_passive_ep(fabric_.get(), sel_.info.get(), &pep, nullptr));
  c.pep.reset(pep);
  check("fi_pep_bind(eq)", fi_pep_bind(c.pep.get(), &c.eq->fid, 0));
  check("fi_listen", fi_listen(c.pep.get()));
  c.listenName.resize(kMaxAddressBytes - kMsgAddressHeader);
  size_t len = c.listenName.size();
  const int rc = fi_getname(&c.pep->fid, c.listenName.data(), &len);
  if (rc == -FI_ETOOSMALL)
    throw TransportError(fmt::format(
        "fi_getname(passive endpoint) on {}: name of {} B exceeds the {} B that fit in a {} B "
        "transport address",
        label_, len, c.listenName.size(), kMaxAddressBytes));
  check("fi_getname(passive endpoint)", rc);
  c.listenName.resize(len);
}

FidPtr<fid_ep> OfiDevice::openMsgEndpoint(ConnState& c, fi_info* info) {
  fid_ep* raw = nullptr;
  check("fi_endpoint(FI_EP_MSG)", fi_endpoint(domain_.get(), info, &raw, nullptr));
  FidPtr<fid_ep> ep(raw);
  check("fi_ep_bind(eq)", fi_ep_bind(ep.get(), &c.eq->fid, 0));
  check("fi_ep_bind(cq, FI_TRANSMIT|FI_RECV)",
        fi_ep_bind(ep.get(), &cq_->fid, FI_TRANSMIT | FI_RECV));
  check("fi_enable(FI_EP_MSG)", fi_enable(ep.get()));
  return ep;
}

// Waits on the connector's EQ for event `want` from `from`; other events of that EQ are errors
// (it serves this one connection only). Returns the event; `data` receives the CM payload.
uint32_t OfiDevice::waitCmEvent(ConnState& c, fid_t from, uint32_t want, fi_eq_cm_entry* entry,
                                uint8_t* data, size_t* dataLen, const Deadline& deadline) {
  const char* wantName = want == FI_CONNREQ ? "FI_CONNREQ" : "FI_CONNECTED";
  alignas(fi_eq_cm_entry) uint8_t buf[sizeof(fi_eq_cm_entry) + 256];
  for (;;) {
    throwIfConnectAborted("ofi connect (FI_EP_MSG)");
    const int slice = deadline.remainingMs() < 0 ? kEqWaitSliceMs
                                                 : std::min(kEqWaitSliceMs, deadline.remainingMs());
    uint32_t event = 0;
    const ssize_t rc = fi_eq_sread(c.eq.get(), &event, buf, sizeof(buf), slice, 0);
    if (rc == -FI_EAVAIL) {
      fi_eq_err_entry err{};
      const ssize_t erc = fi_eq_readerr(c.eq.get(), &err, 0);
      if (erc < 0) fail("fi_eq_readerr", erc);
      char text[256] = "";
      const char* prov =
          fi_eq_strerror(c.eq.get(), err.prov_errno, err.err_data, text, sizeof(text));
      throw TransportError(fmt::format(
          "ofi connect (FI_EP_MSG, {}) to peer {} on {} waiting for {}: {} (provider: {}, "
          "prov_errno {})",
          c.role, c.peerName, label_, wantName, fi_strerror(err.err), prov ? prov : "?",
          err.prov_errno));
    }
    if (rc == -FI_EAGAIN || rc == -FI_ETIMEDOUT || rc == -FI_EINTR) {
      if (deadline.expired())
        throw TimeoutError(
            fmt::format("ofi connect (FI_EP_MSG, {}) on {}: no {} from peer {} before the deadline",
                        c.role, label_, wantName, c.peerName));
      continue;
    }
    if (rc < 0) fail("fi_eq_sread", rc);
    std::memcpy(entry, buf, sizeof(fi_eq_cm_entry));
    if (event == FI_SHUTDOWN)
      throw TransportError(fmt::format(
          "ofi connect (FI_EP_MSG, {}) to peer {} on {}: FI_SHUTDOWN while waiting for {}", c.role,
          c.peerName, label_, wantName));
    if (event != want || (from && entry->fid != from)) {
      if (event == FI_CONNREQ) fi_freeinfo(entry->info);
      throw TransportError(fmt::format(
          "ofi connect (FI_EP_MSG, {}) to peer {} on {}: unexpected EQ event {} while waiting "
          "for {}",
          c.role, c.peerName, label_, event, wantName));
    }
    const size_t got = static_cast<size_t>(rc) > sizeof(fi_eq_cm_entry)
                           ? static_cast<size_t>(rc) - sizeof(fi_eq_cm_entry)
                           : 0;
    *dataLen = std::min(got, *dataLen);
    std::memcpy(data, buf + sizeof(fi_eq_cm_entry), *dataLen);
    return event;
  }
}

void OfiDevice::connectMsg(uint32_t conn, const std::vector<uint8_t>& remote,
                           const Deadline& deadline) {
  // The name is zero-padded (ofi_wire.h): the provider reads as much as its format takes.
  const PeerAddress peer = decodePeerAddress(remote, true, label_);
  const uint32_t format = peer.addrFormat;
  if (format != sel_.info->addr_format)
    throw TransportError(fmt::format(
        "ofi connect (FI_EP_MSG) on {}: peer address format {} differs from ours ({}); both "
        "sides must use the same provider",
        label_, format, sel_.info->addr_format));
  ConnState& c = *conns_[conn];
  const uint64_t peerId = peer.id;
  const uint64_t peerToken = peer.token;
  const uint8_t* name = peer.name.data();
  c.peerName = addressString(name);
  // Deterministic roles (as the socket backend): the smaller (device id, token) accepts, the
  // larger connects, so two sides never both wait for a request.
  const bool accepting = deviceId_ != peerId ? deviceId_ < peerId : c.token < peerToken;
  if (!accepting && acceptOnly_)
    throw TransportError(fmt::format(
        "ofi connect (FI_EP_MSG) on {}: peer {} (device id {}) would make this side connect to "
        "it; this server only accepts data-path connections (the client connects)",
        label_, c.peerName, peerId));
  c.role = accepting ? "accept" : "connect";
  fi_eq_cm_entry entry{};
  uint8_t data[kCmDataBytes];
  uint8_t mine[kCmDataBytes];
  putLe(mine, c.token, 8);
  if (accepting) {
    for (;;) {
      size_t len = sizeof(data);
      waitCmEvent(c, &c.pep->fid, FI_CONNREQ, &entry, data, &len, deadline);
      InfoPtr info(entry.info);
      if (len == kCmDataBytes && getLe(data, 8) == peerToken) {
        c.msgEp = openMsgEndpoint(c, info.get());
        check("fi_accept", fi_accept(c.msgEp.get(), mine, sizeof(mine)));
        break;
      }
      // A request from someone else (stale client, port scanner): refuse it, keep waiting.
      fi_reject(c.pep.get(), info->handle, nullptr, 0);
    }
  } else {
    // verbs resolves the route when the endpoint is created: give it the peer as dest_addr.
    InfoPtr info(fi_dupinfo(sel_.info.get()));
    if (!info) throw TransportError("fi_dupinfo: out of memory");
    // The zero-padded copy: the provider may read a whole sockaddr from a shorter name.
    free(info->dest_addr);
    info->dest_addr = malloc(peer.name.size());
    if (!info->dest_addr) throw TransportError("malloc of dest_addr: out of memory");
    std::memcpy(info->dest_addr, name, peer.name.size());
    info->dest_addrlen = peer.nameBytes;
    c.msgEp = openMsgEndpoint(c, info.get());
    const int rc = fi_connect(c.msgEp.get(), name, mine, sizeof(mine));
    if (rc != 0)
      throw TransportError(
          fmt::format("fi_connect to peer {} on {}: {}", c.peerName, label_, fiError(rc)));
  }
  size_t len = sizeof(data);
  waitCmEvent(c, &c.msgEp->fid, FI_CONNECTED, &entry, data, &len, deadline);
  if (!accepting && len == kCmDataBytes && getLe(data, 8) != peerToken)
    throw ProtocolError(fmt::format(
        "ofi connect (FI_EP_MSG) on {}: peer {} accepted with token {:#x}, expected {:#x}", label_,
        c.peerName, getLe(data, 8), peerToken));
  c.pep.reset();
  c.ep = c.msgEp.get();
  c.connected = true;
}

void OfiDevice::closeConnection(uint32_t conn) {
  ConnState& c = *conns_[conn];
  c.connected = false;
  if (sel_.msg) {
    // Own endpoint: cancel its receives, let the CQ deliver the sends/writes/reads in flight,
    // close it, then drain again: verbs flushes the receives it still holds into the shared
    // CQ when the QP is destroyed, and such a late completion must not hit a reused slot.
    // Completions are dropped in poll() as the connection is closed; slots that never
    // complete (tcp drops them silently) are freed at the end.
    if (!c.msgEp) return;
    for (auto& o : pool_.slots())
      if (o.state == SlotState::kPosted && o.conn == conn && o.op == OpKind::kRecv)
        fi_cancel(&c.msgEp->fid, &o);
    auto drain = [&](bool withRecvs) {
      const Deadline hard(kDrainMaxMs);
      auto pending = [&] {
        for (const auto& o : pool_.slots())
          if (o.state == SlotState::kPosted && o.conn == conn &&
              (withRecvs || o.op != OpKind::kRecv))
            return true;
        return false;
      };
      try {
        while (pending() && !hard.expired())
          progress();
      } catch (const Error&) {
        // Closing anyway; errors of a dying connection are not reported.
      }
    };
    drain(false);
    fi_shutdown(c.msgEp.get(), 0);
    c.msgEp.reset();
    c.eq.reset();
    c.ep = nullptr;
    drain(true);
    for (uint32_t i = 0; i < pool_.size(); ++i)
      if ((pool_[i].state == SlotState::kPosted || pool_[i].state == SlotState::kDone) &&
          pool_[i].conn == conn)
        pool_.release(i);
    c.queues.txCount = 0;
    c.queues.recvCount = 0;
    return;
  }
  // Receives still posted would stay matchable forever on the shared endpoint: cancel them
  // (their FI_ECANCELED completions are dropped in finish()/poll()).
  for (auto& o : pool_.slots())
    if (o.state == SlotState::kPosted && o.op == OpKind::kRecv && o.conn == conn)
      fi_cancel(&ep_->fid, &o);
}

}  // namespace rdmabench::transport::ofi
