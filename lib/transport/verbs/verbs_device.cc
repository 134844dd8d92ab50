// The verbs Device: capabilities, properties, memory registration, connectors, polling and
// the completion-channel wait (event mode).

#include <poll.h>

#include <cerrno>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "transport/verbs/verbs_address.h"
#include "transport/verbs/verbs_core.h"
#include "transport/verbs/verbs_mr.h"

namespace rdmabench::transport::verbs {

namespace {

class VerbsDevice : public Device {
 public:
  explicit VerbsDevice(std::shared_ptr<Core> core) : core_(std::move(core)) {}

  std::string backend() const override { return "verbs"; }
  std::string name() const override { return core_->name; }

  Caps caps() const override {
    Caps c;
    c.rmaWrite = true;
    c.rmaRead = true;
    c.maxMessageBytes = core_->portAttr.max_msg_sz;
    c.maxSendQueue = core_->txDepth;
    c.maxRecvQueue = core_->rxDepth;
    c.inlineBytes = core_->inlineBytes;
    c.maxOutstandingReads = static_cast<uint32_t>(core_->devAttr.max_qp_init_rd_atom);
    return c;
  }
  // Chained work requests in one ibv_post_send / ibv_post_recv: native for every op.
  std::string postListNote(OpKind) const override { return {}; }

  DeviceInfo info() const override {
    const Core& c = *core_;
    DeviceInfo i;
    i.txDepth = c.txDepth;
    i.rxDepth = c.rxDepth;
    i.eventMode = c.channel != nullptr;
    i.common.port = static_cast<uint32_t>(c.port);
    i.common.gidIndex = static_cast<uint32_t>(c.gidIndex);
    i.common.activeMtu = static_cast<uint32_t>(mtuToBytes(c.portAttr.active_mtu));
    i.common.mtu = static_cast<uint32_t>(mtuToBytes(c.mtu));
    i.common.inlineBytes = c.inlineBytes;
    Facts& f = i.facts;
    addFact(f, "device", c.name);
    addFact(f, "link_layer", linkLayerName(c.portAttr.link_layer));
    addFact(f, "gid", gidToString(c.gid.gid));
    addFact(f, "gid_type", toString(c.gid.type));
    addFact(f, "netdev", c.gid.netdev);
    addFact(f, "max_qp_wr", c.devAttr.max_qp_wr);
    addFact(f, "max_msg_sz", c.portAttr.max_msg_sz);
    addFact(f, "max_qp_rd_atom", c.devAttr.max_qp_rd_atom);
    addFact(f, "fw_ver", std::string(c.devAttr.fw_ver));
    addFact(f, "connection_manager", c.rdmaCm ? "rdma_cm" : "out-of-band");
    addFact(f, "cq_size", c.cqSize);
    return i;
  }

  std::unique_ptr<MemoryRegion> registerMemory(void* ptr, size_t bytes) override {
    return std::make_unique<VerbsMemoryRegion>(core_, ptr, bytes);
  }

  std::unique_ptr<Connector> createConnector() override {
    if (core_->rdmaCm) return makeCmConnector(core_);
    return makeOobConnector(core_);
  }

  size_t poll(Completion* out, size_t max) override {
    size_t n = 0;
    auto& pending = core_->pending;
    while (n < max && !pending.empty()) {
      out[n++] = std::move(pending.front());
      pending.pop_front();
    }
    if (n < max) n += core_->pollCq(out + n, max - n);
    return n;
  }

  std::string errorText(const Completion& c) const override {
    return core_->errors.text(c.errorId);
  }

  void waitForEvent(int timeoutMs) override {
    Core& c = *core_;
    if (c.channel == nullptr || !c.pending.empty()) return;
    // Completions that arrived before the CQ was (re)armed raise no event: pick them up.
    c.drainToPending(0, false);
    if (!c.pending.empty()) return;
    Deadline deadline(timeoutMs);
    for (;;) {
      int slice = deadline.remainingMs();
      if (slice < 0 || slice > 100) slice = 100;
      pollfd pfd{c.channel->fd, POLLIN, 0};
      int r = ::poll(&pfd, 1, slice);
      if (r < 0 && errno != EINTR)
        throw SystemError(fmt::format("poll on the completion channel of {}", c.name), errno);
      if (r > 0) {
        ibv_cq* evCq = nullptr;
        void* evCtx = nullptr;
        if (ibv_get_cq_event(c.channel, &evCq, &evCtx) == 0) {
          ibv_ack_cq_events(evCq, 1);
          int rc = ibv_req_notify_cq(evCq, 0);
          if (rc != 0)
            throw TransportError(fmt::format("ibv_req_notify_cq on {}: {}", c.name, errText(rc)));
          return;
        }
        if (errno != EAGAIN)
          throw SystemError(fmt::format("ibv_get_cq_event on {}", c.name), errno);
      }
      if (r < 0 || interrupted() || deadline.expired()) return;
    }
  }

 private:
  std::shared_ptr<Core> core_;
};

}  // namespace

std::unique_ptr<Device> makeVerbsDevice(std::shared_ptr<Core> core) {
  return std::make_unique<VerbsDevice>(std::move(core));
}

}  // namespace rdmabench::transport::verbs
