// Out-of-band connection of verbs RC QPs: the QP attributes travel through
// Connector::localAddress() (verbs_address.h) and connect() walks INIT -> RTR -> RTS.

#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "transport/verbs/verbs_address.h"
#include "transport/verbs/verbs_core.h"
#include "transport/verbs/verbs_endpoint.h"

namespace rdmabench::transport::verbs {

namespace {

// RC retry policy: local ACK timeout 4.096 us * 2^14 = 67 ms, 6 transport retries, infinite
// RNR retries (a peer that posts its receives late is not an error), RNR NAK timer 12
// (0.64 ms). A vanished peer thus fails posts with RETRY_EXC_ERR after about 0.5 s.
// retry_cnt is 6, not the IBTA maximum 7: soft-RoCE (rdma_rxe, Linux 6.1) treats 7 as
// "retry forever", so a dead peer would hang the survivor.
constexpr uint8_t kAckTimeout = 14;
constexpr uint8_t kRetryCount = 6;
constexpr uint8_t kRnrRetry = 7;
constexpr uint8_t kMinRnrTimer = 12;

class VerbsConnector : public Connector {
 public:
  explicit VerbsConnector(std::shared_ptr<Core> core) : core_(std::move(core)) {
    core_->reserveCq(core_->liveQps + 1);
    qp_.reset(core_->createQp(core_->inlineBytes));
    if (qp_ == nullptr) {
      int err = errno;
      throw TransportError(fmt::format(
          "ibv_create_qp (RC, tx depth {}, rx depth {}, inline {}) on {}: {}", core_->txDepth,
          core_->rxDepth, core_->inlineBytes, core_->name, errText(err)));
    }
    ++core_->liveQps;
    std::random_device rd;
    local_.linkLayer = core_->portAttr.link_layer;
    local_.mtu = static_cast<uint8_t>(core_->mtu);
    local_.lid = core_->portAttr.lid;
    local_.qpn = qp_->qp_num;
    local_.psn = rd() & 0xffffff;
    local_.gidIndex = static_cast<uint16_t>(core_->gidIndex);
    local_.gid = core_->gid.gid;
    local_.initRdAtom = static_cast<uint8_t>(std::min(core_->devAttr.max_qp_init_rd_atom, 255));
    local_.rdAtom = static_cast<uint8_t>(std::min(core_->devAttr.max_qp_rd_atom, 255));
  }

  ~VerbsConnector() override {
    if (qp_ != nullptr) {
      qp_.reset();
      --core_->liveQps;
    }
  }

  std::vector<uint8_t> localAddress() const override { return local_.encode(); }

  std::unique_ptr<Endpoint> connect(const std::vector<uint8_t>& remoteAddress,
                                    const Deadline& deadline) override {
    if (qp_ == nullptr)
      throw TransportError(fmt::format("verbs connect on {}: connector already used", core_->name));
    QpAddress remote = QpAddress::decode(remoteAddress, core_->name);
    std::string peer = describePeer(remote);
    if (remote.linkLayer != local_.linkLayer)
      throw TransportError(fmt::format(
          "verbs connect on {} to {}: link layer mismatch (local {}, peer {})", core_->name, peer,
          linkLayerName(local_.linkLayer), linkLayerName(remote.linkLayer)));
    if (deadline.expired())
      throw TimeoutError(
          fmt::format("verbs connect on {} to {}: deadline passed", core_->name, peer));
    throwIfInterrupted("verbs connect");

    auto mtu = static_cast<ibv_mtu>(std::min(local_.mtu, remote.mtu));
    uint8_t maxRdAtomic = std::min(local_.initRdAtom, remote.rdAtom);
    uint8_t maxDestRdAtomic = std::min(local_.rdAtom, remote.initRdAtom);

    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = static_cast<uint8_t>(core_->port);
    attr.qp_access_flags =
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    modify(attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT",
           peer);

    attr = {};
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = mtu;
    attr.dest_qp_num = remote.qpn;
    attr.rq_psn = remote.psn;
    attr.max_dest_rd_atomic = maxDestRdAtomic;
    attr.min_rnr_timer = kMinRnrTimer;
    attr.ah_attr.dlid = remote.lid;
    attr.ah_attr.sl = 0;
    attr.ah_attr.src_path_bits = 0;
    attr.ah_attr.port_num = static_cast<uint8_t>(core_->port);
    if (core_->ethernet) {
      attr.ah_attr.is_global = 1;
      std::memcpy(attr.ah_attr.grh.dgid.raw, remote.gid.data(), 16);
      attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(core_->gidIndex);
      attr.ah_attr.grh.hop_limit = 64;
      attr.ah_attr.grh.traffic_class = 0;
      attr.ah_attr.grh.flow_label = 0;
    }
    modify(attr,
           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
           "RTR", peer);

    attr = {};
    attr.qp_state = IBV_QPS_RTS;
    attr.timeout = kAckTimeout;
    attr.retry_cnt = kRetryCount;
    attr.rnr_retry = kRnrRetry;
    attr.sq_psn = local_.psn;
    attr.max_rd_atomic = maxRdAtomic;
    modify(attr,
           IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
               IBV_QP_MAX_QP_RD_ATOMIC,
           "RTS", peer);

    auto ep = std::make_unique<VerbsEndpoint>(core_, qp_.get(), local_, remote, mtu, maxRdAtomic,
                                              maxDestRdAtomic);
    static_cast<void>(qp_.release());  // owned (and counted in liveQps) by the endpoint now
    return ep;
  }

 private:
  void modify(ibv_qp_attr& attr, int mask, const char* state, const std::string& peer) {
    int rc = ibv_modify_qp(qp_.get(), &attr, mask);
    if (rc != 0)
      throw TransportError(fmt::format(
          "ibv_modify_qp to {} on {} QPN {:#x} (peer {}, gid index {}, mtu {}): {}", state,
          core_->name, qp_->qp_num, peer, core_->gidIndex, mtuToBytes(core_->mtu), errText(rc)));
  }

  std::shared_ptr<Core> core_;
  QpPtr qp_;
  QpAddress local_;
};

}  // namespace

std::unique_ptr<Connector> makeOobConnector(std::shared_ptr<Core> core) {
  return std::make_unique<VerbsConnector>(std::move(core));
}

}  // namespace rdmabench::transport::verbs
