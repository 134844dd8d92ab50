// libibverbs backend: RC QPs, one PD and one CQ per device, out-of-band QP attribute exchange
// through Connector::localAddress() / connect(). See docs/transport-verbs.md.

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "transport/backends.h"
#include "transport/verbs/verbs_core.h"

namespace rdmabench::transport::verbs {

namespace {

constexpr uint32_t kDefaultTxDepth = 128;
constexpr uint32_t kDefaultRxDepth = 512;
// Latency-friendly inline default (perftest's write_lat default, shared/research/perftest.md).
constexpr uint32_t kDefaultInline = 220;
constexpr int kPollBatch = 32;
constexpr uint64_t kRecvBit = 1ull << 63;

// RC retry policy: local ACK timeout 4.096 us * 2^14 = 67 ms, 6 transport retries, infinite
// RNR retries (a peer that posts its receives late is not an error), RNR NAK timer 12
// (0.64 ms). A vanished peer thus fails posts with RETRY_EXC_ERR after about 0.5 s.
// retry_cnt is 6, not the IBTA maximum 7: soft-RoCE (rdma_rxe, Linux 6.1) treats 7 as
// "retry forever", so a dead peer would hang the survivor.
constexpr uint8_t kAckTimeout = 14;
constexpr uint8_t kRetryCount = 6;
constexpr uint8_t kRnrRetry = 7;
constexpr uint8_t kMinRnrTimer = 12;

std::string errText(int err) {
  return std::strerror(err);
}

std::optional<ibv_mtu> mtuFromBytes(uint32_t bytes) {
  switch (bytes) {
    case 256:
      return IBV_MTU_256;
    case 512:
      return IBV_MTU_512;
    case 1024:
      return IBV_MTU_1024;
    case 2048:
      return IBV_MTU_2048;
    case 4096:
      return IBV_MTU_4096;
  }
  return std::nullopt;
}

// ---- Connection address (Connector::localAddress) ----------------------------------------
// Fixed little-endian layout, 36 bytes:
//   0 magic 'V', 1 version, 2 link layer, 3 path MTU (enum ibv_mtu), 4..5 LID, 6..9 QPN,
//   10..13 PSN (24 bit), 14..15 GID index, 16..31 GID, 32 max outstanding reads as initiator
//   (max_qp_init_rd_atom), 33 as responder (max_qp_rd_atom), 34..35 reserved.
constexpr uint8_t kAddrMagic = 'V';
constexpr uint8_t kAddrVersion = 1;
constexpr size_t kAddrBytes = 36;

struct QpAddress {
  uint8_t linkLayer = 0;
  uint8_t mtu = 0;
  uint16_t lid = 0;
  uint32_t qpn = 0;
  uint32_t psn = 0;
  uint16_t gidIndex = 0;
  GidBytes gid{};
  uint8_t initRdAtom = 0;
  uint8_t rdAtom = 0;

  std::vector<uint8_t> encode() const {
    std::vector<uint8_t> b(kAddrBytes, 0);
    b[0] = kAddrMagic;
    b[1] = kAddrVersion;
    b[2] = linkLayer;
    b[3] = mtu;
    for (int i = 0; i < 2; ++i)
      b[4 + i] = static_cast<uint8_t>(lid >> (8 * i));
    for (int i = 0; i < 4; ++i)
      b[6 + i] = static_cast<uint8_t>(qpn >> (8 * i));
    for (int i = 0; i < 4; ++i)
      b[10 + i] = static_cast<uint8_t>(psn >> (8 * i));
    for (int i = 0; i < 2; ++i)
      b[14 + i] = static_cast<uint8_t>(gidIndex >> (8 * i));
    std::copy(gid.begin(), gid.end(), b.begin() + 16);
    b[32] = initRdAtom;
    b[33] = rdAtom;
    return b;
  }

  static QpAddress decode(const std::vector<uint8_t>& b, const std::string& dev) {
    if (b.size() != kAddrBytes || b[0] != kAddrMagic)
      throw ProtocolError(fmt::format(
          "verbs connect on {}: peer address is not a verbs QP address ({} bytes, expected {}; "
          "is the peer using another transport?)",
          dev, b.size(), kAddrBytes));
    if (b[1] != kAddrVersion)
      throw ProtocolError(fmt::format("verbs connect on {}: peer address version {} (ours {})", dev,
                                      b[1], kAddrVersion));
    QpAddress a;
    a.linkLayer = b[2];
    a.mtu = b[3];
    for (int i = 0; i < 2; ++i)
      a.lid |= static_cast<uint16_t>(b[4 + i] << (8 * i));
    for (int i = 0; i < 4; ++i)
      a.qpn |= static_cast<uint32_t>(b[6 + i]) << (8 * i);
    for (int i = 0; i < 4; ++i)
      a.psn |= static_cast<uint32_t>(b[10 + i]) << (8 * i);
    for (int i = 0; i < 2; ++i)
      a.gidIndex |= static_cast<uint16_t>(b[14 + i] << (8 * i));
    std::copy(b.begin() + 16, b.begin() + 32, a.gid.begin());
    a.initRdAtom = b[32];
    a.rdAtom = b[33];
    if (a.mtu < IBV_MTU_256 || a.mtu > IBV_MTU_4096)
      throw ProtocolError(
          fmt::format("verbs connect on {}: peer sent invalid MTU code {}", dev, a.mtu));
    return a;
  }
};

const char* qpStateName(ibv_qp_state s) {
  switch (s) {
    case IBV_QPS_RESET:
      return "RESET";
    case IBV_QPS_INIT:
      return "INIT";
    case IBV_QPS_RTR:
      return "RTR";
    case IBV_QPS_RTS:
      return "RTS";
    case IBV_QPS_SQD:
      return "SQD";
    case IBV_QPS_SQE:
      return "SQE";
    case IBV_QPS_ERR:
      return "ERR";
    default:
      return "?";
  }
}

std::string describePeer(const QpAddress& a) {
  if (a.linkLayer == IBV_LINK_LAYER_ETHERNET)
    return fmt::format("QPN {:#x} @ {}", a.qpn, gidToString(a.gid));
  return fmt::format("QPN {:#x} @ LID {:#x}", a.qpn, a.lid);
}

// ---- Memory region ------------------------------------------------------------------------

class VerbsMemoryRegion : public MemoryRegion {
 public:
  VerbsMemoryRegion(std::shared_ptr<Core> core, void* ptr, size_t bytes)
      : core_(std::move(core)), ptr_(static_cast<uint8_t*>(ptr)), size_(bytes) {
    mr_ = ibv_reg_mr(core_->pd, ptr, bytes,
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    if (mr_ == nullptr) {
      int err = errno;
      throw TransportError(fmt::format(
          "ibv_reg_mr of {} bytes on {}: {}{}", bytes, core_->name, errText(err),
          err == ENOMEM || err == EPERM ? " (locked-memory limit? check `ulimit -l`)" : ""));
    }
  }
  ~VerbsMemoryRegion() override { ibv_dereg_mr(mr_); }

  uint8_t* data() const override { return ptr_; }
  size_t size() const override { return size_; }
  RemoteRegion exportRegion() const override {
    RemoteRegion r;
    r.addr = reinterpret_cast<uint64_t>(ptr_);
    r.length = size_;
    r.key.resize(4);
    for (int i = 0; i < 4; ++i)
      r.key[i] = static_cast<uint8_t>(mr_->rkey >> (8 * i));
    return r;
  }
  uint32_t lkey() const { return mr_->lkey; }

 private:
  std::shared_ptr<Core> core_;
  uint8_t* ptr_;
  size_t size_;
  ibv_mr* mr_ = nullptr;
};

void checkRange(const char* call, const MemoryRegion& mr, uint64_t offset, uint32_t length) {
  if (offset > mr.size() || length > mr.size() - offset)
    throw UsageError(fmt::format("{}: range [{}, +{}) outside the {}-byte region", call, offset,
                                 length, mr.size()));
}

uint32_t rkeyOf(const char* call, const RemoteRegion& remote, uint64_t remoteOffset,
                uint32_t length) {
  if (remote.key.size() != 4)
    throw UsageError(
        fmt::format("{}: remote key has {} bytes, verbs rkeys have 4", call, remote.key.size()));
  if (remoteOffset > remote.length || length > remote.length - remoteOffset)
    throw UsageError(fmt::format("{}: remote range [{}, +{}) outside the {}-byte remote region",
                                 call, remoteOffset, length, remote.length));
  uint32_t rkey = 0;
  for (int i = 0; i < 4; ++i)
    rkey |= static_cast<uint32_t>(remote.key[i]) << (8 * i);
  return rkey;
}

}  // namespace

// ---- Endpoint -----------------------------------------------------------------------------

// A connected RC QP. Send-side work requests carry wr_id = sequence number; receives have
// kRecvBit set. Completions of a queue arrive in post order, so a completion for sequence s
// retires every earlier entry (this is how unsignaled posts are accounted).
class VerbsEndpoint : public Endpoint {
 public:
  struct Slot {
    uint64_t context = 0;
    uint32_t bytes = 0;
    OpKind op = OpKind::kSend;
    bool userSignaled = true;
  };

  VerbsEndpoint(std::shared_ptr<Core> core, ibv_qp* qp, const QpAddress& local,
                const QpAddress& remote, ibv_mtu mtu, uint8_t maxRdAtomic, uint8_t maxDestRdAtomic,
                std::unique_ptr<CmResources> cm = nullptr)
      : core_(std::move(core)),
        qp_(qp),
        local_(local),
        remote_(remote),
        mtu_(mtu),
        maxRdAtomic_(maxRdAtomic),
        maxDestRdAtomic_(maxDestRdAtomic),
        sendRing_(core_->txDepth),
        recvRing_(core_->rxDepth),
        peerName_(describePeer(remote)),
        cm_(std::move(cm)) {
    core_->endpoints[qp_->qp_num] = this;
  }

  ~VerbsEndpoint() override {
    uint32_t qpn = qp_->qp_num;
    core_->endpoints.erase(qpn);
    if (cm_) {
      cm_->destroyQp();  // rdma_destroy_qp, then the cm ids with cm_
      cm_.reset();
    } else {
      ibv_destroy_qp(qp_);
    }
    --core_->liveQps;
    // Completions of this QP still queued in the shared CQ must not reach another endpoint.
    core_->drainToPending(qpn, true);
  }

  PostResult postSend(const MemoryRegion& mr, uint64_t offset, uint32_t length, uint64_t context,
                      bool signaled) override {
    checkRange("postSend", mr, offset, length);
    return postSendSide(IBV_WR_SEND, OpKind::kSend, mr, offset, length, 0, 0, context, signaled);
  }

  PostResult postWrite(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                       const RemoteRegion& remote, uint64_t remoteOffset, uint64_t context,
                       bool signaled) override {
    checkRange("postWrite", mr, offset, length);
    uint32_t rkey = rkeyOf("postWrite", remote, remoteOffset, length);
    return postSendSide(IBV_WR_RDMA_WRITE, OpKind::kWrite, mr, offset, length,
                        remote.addr + remoteOffset, rkey, context, signaled);
  }

  PostResult postRead(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                      const RemoteRegion& remote, uint64_t remoteOffset,
                      uint64_t context) override {
    checkRange("postRead", mr, offset, length);
    uint32_t rkey = rkeyOf("postRead", remote, remoteOffset, length);
    return postSendSide(IBV_WR_RDMA_READ, OpKind::kRead, mr, offset, length,
                        remote.addr + remoteOffset, rkey, context, true);
  }

  PostResult postRecv(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                      uint64_t context) override {
    checkRange("postRecv", mr, offset, length);
    if (recvNext_ - recvRetired_ >= recvRing_.size()) return PostResult::kRetry;
    const auto& vmr = static_cast<const VerbsMemoryRegion&>(mr);
    ibv_sge sge{reinterpret_cast<uint64_t>(vmr.data() + offset), length, vmr.lkey()};
    ibv_recv_wr wr{};
    wr.wr_id = recvNext_ | kRecvBit;
    wr.sg_list = &sge;
    wr.num_sge = length > 0 ? 1 : 0;
    ibv_recv_wr* bad = nullptr;
    int rc = ibv_post_recv(qp_, &wr, &bad);
    if (rc == ENOMEM) return PostResult::kRetry;
    if (rc != 0)
      throw TransportError(fmt::format("ibv_post_recv on {} QPN {:#x} (peer {}): {}", core_->name,
                                       qp_->qp_num, peerName_, errText(rc)));
    recvRing_[recvNext_ % recvRing_.size()] = Slot{context, length, OpKind::kRecv, true};
    ++recvNext_;
    return PostResult::kOk;
  }

  std::string peerName() const override { return peerName_; }

  nlohmann::json properties() const override {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    const char* state = "?";
    bool queried = ibv_query_qp(qp_, &attr,
                                IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                    IBV_QP_RNR_RETRY | IBV_QP_MIN_RNR_TIMER,
                                &init) == 0;
    if (queried) state = qpStateName(attr.qp_state);
    nlohmann::json j = {{"qpn", qp_->qp_num},
                        {"state", state},
                        {"peer_qpn", remote_.qpn},
                        {"peer", peerName_},
                        {"mtu", mtuToBytes(mtu_)},
                        {"inline", core_->inlineBytes},
                        {"local_gid", gidToString(local_.gid)},
                        {"remote_gid", gidToString(remote_.gid)},
                        {"gid_index", local_.gidIndex},
                        {"remote_gid_index", remote_.gidIndex},
                        {"local_lid", local_.lid},
                        {"remote_lid", remote_.lid},
                        {"max_rd_atomic", maxRdAtomic_},
                        {"max_dest_rd_atomic", maxDestRdAtomic_},
                        {"psn", local_.psn},
                        {"tx_depth", core_->txDepth},
                        {"rx_depth", core_->rxDepth},
                        {"connection_manager", cm_ ? "rdma_cm" : "out-of-band"}};
    if (queried) {
      j["timeout"] = attr.timeout;
      j["retry_cnt"] = attr.retry_cnt;
      j["rnr_retry"] = attr.rnr_retry;
    }
    return j;
  }

  // Translates one work completion of this QP; returns false when nothing is reported (a
  // successful completion of a post the user asked to be unsignaled).
  bool translate(const ibv_wc& wc, Completion& out) {
    bool isRecv = (wc.wr_id & kRecvBit) != 0;
    uint64_t seq = wc.wr_id & ~kRecvBit;
    const Slot* slot;
    if (isRecv) {
      slot = &recvRing_[seq % recvRing_.size()];
      recvRetired_ = seq + 1;
    } else {
      slot = &sendRing_[seq % sendRing_.size()];
      sendRetired_ = seq + 1;
      if (wc.status == IBV_WC_SUCCESS && !slot->userSignaled) return false;
    }
    out.context = slot->context;
    out.op = slot->op;
    out.status = static_cast<int>(wc.status);
    if (wc.status == IBV_WC_SUCCESS) {
      out.bytes = isRecv ? wc.byte_len : slot->bytes;
      out.error.clear();
    } else {
      out.bytes = 0;
      out.error = fmt::format(
          "{} completion on {} QPN {:#x} (peer {}): {} (status {}, vendor_err {:#x}){}",
          toString(slot->op), core_->name, wc.qp_num, peerName_, ibv_wc_status_str(wc.status),
          static_cast<int>(wc.status), wc.vendor_err,
          wc.status == IBV_WC_RETRY_EXC_ERR
              ? "; the peer did not answer: is it still running? check --gid-index / routing "
                "to the peer"
              : "");
    }
    return true;
  }

 private:
  PostResult postSendSide(ibv_wr_opcode opcode, OpKind op, const MemoryRegion& mr, uint64_t offset,
                          uint32_t length, uint64_t remoteAddr, uint32_t rkey, uint64_t context,
                          bool signaled) {
    uint64_t outstanding = sendNext_ - sendRetired_;
    if (outstanding >= sendRing_.size()) return PostResult::kRetry;
    // The post that fills the last free slot is always signaled, so a queue full of
    // unsignaled posts still retires (its completion is not reported if the user did not
    // ask for one).
    bool hwSignaled = signaled || outstanding + 1 == sendRing_.size();
    const auto& vmr = static_cast<const VerbsMemoryRegion&>(mr);
    ibv_sge sge{reinterpret_cast<uint64_t>(vmr.data() + offset), length, vmr.lkey()};
    ibv_send_wr wr{};
    wr.wr_id = sendNext_;
    wr.sg_list = &sge;
    wr.num_sge = length > 0 ? 1 : 0;
    wr.opcode = opcode;
    wr.send_flags = hwSignaled ? IBV_SEND_SIGNALED : 0;
    if (op != OpKind::kRead && length <= core_->inlineBytes) wr.send_flags |= IBV_SEND_INLINE;
    if (op != OpKind::kSend) {
      wr.wr.rdma.remote_addr = remoteAddr;
      wr.wr.rdma.rkey = rkey;
    }
    ibv_send_wr* bad = nullptr;
    int rc = ibv_post_send(qp_, &wr, &bad);
    if (rc == ENOMEM) return PostResult::kRetry;
    if (rc != 0)
      throw TransportError(fmt::format("ibv_post_send ({}) on {} QPN {:#x} (peer {}): {}",
                                       toString(op), core_->name, qp_->qp_num, peerName_,
                                       errText(rc)));
    sendRing_[sendNext_ % sendRing_.size()] = Slot{context, length, op, signaled};
    ++sendNext_;
    return PostResult::kOk;
  }

  std::shared_ptr<Core> core_;
  ibv_qp* qp_;
  QpAddress local_;
  QpAddress remote_;
  ibv_mtu mtu_;
  uint8_t maxRdAtomic_;
  uint8_t maxDestRdAtomic_;
  std::vector<Slot> sendRing_;
  std::vector<Slot> recvRing_;
  uint64_t sendNext_ = 0;
  uint64_t sendRetired_ = 0;
  uint64_t recvNext_ = 0;
  uint64_t recvRetired_ = 0;
  std::string peerName_;
  std::unique_ptr<CmResources> cm_;  // rdma_cm mode only
};

// ---- Core ---------------------------------------------------------------------------------

Core::~Core() {
  if (cq != nullptr) ibv_destroy_cq(cq);
  if (channel != nullptr) ibv_destroy_comp_channel(channel);
  if (pd != nullptr) ibv_dealloc_pd(pd);
  if (cmDevices != nullptr)
    rdma_free_devices(cmDevices);  // owns ctx
  else if (ctx != nullptr)
    ibv_close_device(ctx);
}

ibv_qp_init_attr Core::qpInitAttr(uint32_t inlineRequest) const {
  ibv_qp_init_attr attr{};
  attr.send_cq = cq;
  attr.recv_cq = cq;
  attr.qp_type = IBV_QPT_RC;
  attr.sq_sig_all = 0;
  attr.cap.max_send_wr = txDepth;
  attr.cap.max_recv_wr = rxDepth;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = inlineRequest;
  return attr;
}

ibv_qp* Core::createQp(uint32_t inlineRequest, uint32_t* reportedInline) {
  ibv_qp_init_attr attr = qpInitAttr(inlineRequest);
  ibv_qp* qp = ibv_create_qp(pd, &attr);
  if (qp != nullptr && reportedInline != nullptr) *reportedInline = attr.cap.max_inline_data;
  return qp;
}

void Core::reserveCq(int qps) {
  int64_t needed = static_cast<int64_t>(qps) * (txDepth + rxDepth);
  if (needed <= cqSize) return;
  if (needed > devAttr.max_cqe)
    throw TransportError(
        fmt::format("{}: {} QPs with tx depth {} + rx depth {} need {} CQEs, above max_cqe {}",
                    name, qps, txDepth, rxDepth, needed, devAttr.max_cqe));
  int want = static_cast<int>(std::min<int64_t>(needed * 2, devAttr.max_cqe));
  int rc = ibv_resize_cq(cq, want);
  if (rc != 0)
    throw TransportError(fmt::format("ibv_resize_cq to {} CQEs on {} (for {} QPs): {}", want, name,
                                     qps, errText(rc)));
  cqSize = cq->cqe;
}

size_t Core::pollCq(Completion* out, size_t max, uint32_t skipQpn, bool skip) {
  size_t n = 0;
  ibv_wc wc[kPollBatch];
  VerbsEndpoint* last = nullptr;
  uint32_t lastQpn = 0;
  while (n < max) {
    int want = static_cast<int>(std::min<size_t>(kPollBatch, max - n));
    int got = ibv_poll_cq(cq, want, wc);
    if (got < 0) throw TransportError(fmt::format("ibv_poll_cq on {}: failed ({})", name, got));
    for (int i = 0; i < got; ++i) {
      if (skip && wc[i].qp_num == skipQpn) continue;
      if (last == nullptr || lastQpn != wc[i].qp_num) {
        auto it = endpoints.find(wc[i].qp_num);
        if (it == endpoints.end()) continue;  // QP already destroyed
        last = it->second;
        lastQpn = wc[i].qp_num;
      }
      if (last->translate(wc[i], out[n])) ++n;
    }
    if (got < want) break;
  }
  return n;
}

void Core::drainToPending(uint32_t skipQpn, bool skip) {
  Completion buf[kPollBatch];
  for (;;) {
    size_t got = pollCq(buf, kPollBatch, skipQpn, skip);
    for (size_t i = 0; i < got; ++i)
      pending.push_back(std::move(buf[i]));
    if (got < static_cast<size_t>(kPollBatch)) break;  // pollCq stops only on an empty CQ
  }
}

int mtuToBytes(ibv_mtu mtu) {
  return 128 << static_cast<int>(mtu);
}

const char* linkLayerName(uint8_t linkLayer) {
  switch (linkLayer) {
    case IBV_LINK_LAYER_INFINIBAND:
      return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET:
      return "Ethernet";
    default:
      return "unspecified";
  }
}

namespace {

// ---- Connector ----------------------------------------------------------------------------

class VerbsConnector : public Connector {
 public:
  explicit VerbsConnector(std::shared_ptr<Core> core) : core_(std::move(core)) {
    core_->reserveCq(core_->liveQps + 1);
    qp_ = core_->createQp(core_->inlineBytes);
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
      ibv_destroy_qp(qp_);
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

    auto ep = std::make_unique<VerbsEndpoint>(core_, qp_, local_, remote, mtu, maxRdAtomic,
                                              maxDestRdAtomic);
    qp_ = nullptr;  // owned (and counted in liveQps) by the endpoint now
    return ep;
  }

 private:
  void modify(ibv_qp_attr& attr, int mask, const char* state, const std::string& peer) {
    int rc = ibv_modify_qp(qp_, &attr, mask);
    if (rc != 0)
      throw TransportError(fmt::format(
          "ibv_modify_qp to {} on {} QPN {:#x} (peer {}, gid index {}, mtu {}): {}", state,
          core_->name, qp_->qp_num, peer, core_->gidIndex, mtuToBytes(core_->mtu), errText(rc)));
  }

  std::shared_ptr<Core> core_;
  ibv_qp* qp_ = nullptr;
  QpAddress local_;
};

// ---- Device -------------------------------------------------------------------------------

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

  nlohmann::json properties() const override {
    const Core& c = *core_;
    return {{"device", c.name},
            {"port", c.port},
            {"link_layer", linkLayerName(c.portAttr.link_layer)},
            {"gid_index", c.gidIndex},
            {"gid", gidToString(c.gid.gid)},
            {"gid_type", toString(c.gid.type)},
            {"netdev", c.gid.netdev},
            {"active_mtu", mtuToBytes(c.portAttr.active_mtu)},
            {"mtu", mtuToBytes(c.mtu)},
            {"inline", c.inlineBytes},
            {"tx_depth", c.txDepth},
            {"rx_depth", c.rxDepth},
            {"max_qp_wr", c.devAttr.max_qp_wr},
            {"max_msg_sz", c.portAttr.max_msg_sz},
            {"max_qp_rd_atom", c.devAttr.max_qp_rd_atom},
            {"fw_ver", c.devAttr.fw_ver},
            {"event_mode", c.channel != nullptr},
            {"connection_manager", c.rdmaCm ? "rdma_cm" : "out-of-band"},
            {"cq_size", c.cqSize}};
  }

  std::unique_ptr<MemoryRegion> registerMemory(void* ptr, size_t bytes) override {
    return std::make_unique<VerbsMemoryRegion>(core_, ptr, bytes);
  }

  std::unique_ptr<Connector> createConnector() override {
    if (core_->rdmaCm) return makeCmConnector(core_);
    return std::make_unique<VerbsConnector>(core_);
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

// ---- openDevice ---------------------------------------------------------------------------

struct DeviceList {
  ibv_device** list = nullptr;
  int count = 0;
  DeviceList() {
    errno = 0;
    list = ibv_get_device_list(&count);
    if (list == nullptr) {
      int err = errno;
      throw TransportError(
          fmt::format("transport verbs: no RDMA devices: ibv_get_device_list: {}{}", errText(err),
                      err == ENOSYS ? " (this kernel has no RDMA support)" : ""));
    }
  }
  ~DeviceList() { ibv_free_device_list(list); }
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;
};

// True when `dev` opens and `port` is ACTIVE.
bool portActive(ibv_device* dev, int port) {
  ibv_context* ctx = ibv_open_device(dev);
  if (ctx == nullptr) return false;
  ibv_port_attr pa{};
  bool ok =
      ibv_query_port(ctx, static_cast<uint8_t>(port), &pa) == 0 && pa.state == IBV_PORT_ACTIVE;
  ibv_close_device(ctx);
  return ok;
}

std::string deviceNames(const DeviceList& dl) {
  std::string s;
  for (int i = 0; i < dl.count; ++i) {
    if (!s.empty()) s += ", ";
    s += ibv_get_device_name(dl.list[i]);
  }
  return s;
}

// Largest inline size in [0, hi] for which ibv_create_qp succeeds; -1 if none does.
int64_t probeInlineCap(Core& core, uint32_t hi) {
  int64_t lo = -1;  // largest known good
  int64_t bad = static_cast<int64_t>(hi) + 1;
  // Check 0 first: if it fails, the QP cannot be created for another reason.
  if (ibv_qp* qp = core.createQp(0)) {
    ibv_destroy_qp(qp);
    lo = 0;
  } else {
    return -1;
  }
  while (bad - lo > 1) {
    int64_t mid = lo + (bad - lo) / 2;
    if (ibv_qp* qp = core.createQp(static_cast<uint32_t>(mid))) {
      ibv_destroy_qp(qp);
      lo = mid;
    } else {
      bad = mid;
    }
  }
  return lo;
}

}  // namespace

std::unique_ptr<Device> openDevice(const DeviceOptions& options) {
  DeviceList dl;
  if (dl.count == 0)
    throw TransportError("verbs: no RDMA devices (ibv_get_device_list returned 0)");

  const int port = options.ibPort;
  ibv_device* chosen = nullptr;
  if (!options.device.empty()) {
    for (int i = 0; i < dl.count; ++i)
      if (options.device == ibv_get_device_name(dl.list[i])) chosen = dl.list[i];
    if (chosen == nullptr)
      throw UsageError(fmt::format("--device {}: no such RDMA device (devices: {})", options.device,
                                   deviceNames(dl)));
  } else {
    for (int i = 0; i < dl.count && chosen == nullptr; ++i)
      if (portActive(dl.list[i], port)) chosen = dl.list[i];
    if (chosen == nullptr)
      throw TransportError(fmt::format(
          "verbs: no RDMA device has port {} ACTIVE (devices: {}; see `rdmabench info`)", port,
          deviceNames(dl)));
  }

  auto core = std::make_shared<Core>();
  Core& c = *core;
  c.name = ibv_get_device_name(chosen);
  c.port = port;
  c.rdmaCm = options.rdmaCm;
  c.localHost = options.localHost;
  if (c.rdmaCm) {
    // rdma_cm ids resolve to librdmacm's own contexts: the PD and CQ must live on the same
    // one, so the device is opened through rdma_get_devices().
    int n = 0;
    c.cmDevices = rdma_get_devices(&n);
    if (c.cmDevices == nullptr) {
      int err = errno;
      throw TransportError(fmt::format(
          "rdma_get_devices: {} (--rdma-cm needs the rdma_ucm kernel module)", errText(err)));
    }
    for (int i = 0; i < n; ++i)
      if (c.name == ibv_get_device_name(c.cmDevices[i]->device)) c.ctx = c.cmDevices[i];
    if (c.ctx == nullptr)
      throw TransportError(
          fmt::format("--rdma-cm: librdmacm does not list device {} ({} devices)", c.name, n));
  } else {
    c.ctx = ibv_open_device(chosen);
  }
  if (c.ctx == nullptr) {
    int err = errno;
    throw TransportError(fmt::format("ibv_open_device {}: {}", c.name, errText(err)));
  }
  if (int rc = ibv_query_device(c.ctx, &c.devAttr); rc != 0)
    throw TransportError(fmt::format("ibv_query_device {}: {}", c.name, errText(rc)));
  if (port < 1 || port > c.devAttr.phys_port_cnt)
    throw UsageError(fmt::format("--ib-port {}: out of range 1..{} for {}", port,
                                 c.devAttr.phys_port_cnt, c.name));
  if (int rc = ibv_query_port(c.ctx, static_cast<uint8_t>(port), &c.portAttr); rc != 0)
    throw TransportError(fmt::format("ibv_query_port {} port {}: {}", c.name, port, errText(rc)));
  if (c.portAttr.state != IBV_PORT_ACTIVE)
    throw TransportError(fmt::format("{} port {} is {}, not ACTIVE", c.name, port,
                                     ibv_port_state_str(c.portAttr.state)));
  c.ethernet = c.portAttr.link_layer == IBV_LINK_LAYER_ETHERNET;

  // GID.
  std::vector<GidEntry> table = readGidTable(c.ctx, port, c.portAttr.gid_tbl_len);
  if (options.gidIndex >= 0) {
    if (options.gidIndex >= c.portAttr.gid_tbl_len)
      throw UsageError(fmt::format("--gid-index {}: out of range 0..{} for {} port {}",
                                   options.gidIndex, c.portAttr.gid_tbl_len - 1, c.name, port));
    auto it = std::find_if(table.begin(), table.end(),
                           [&](const GidEntry& e) { return e.index == options.gidIndex; });
    if (it == table.end()) {
      std::string populated;
      for (const auto& e : table)
        populated += (populated.empty() ? "" : ", ") + std::to_string(e.index);
      throw UsageError(fmt::format("--gid-index {}: entry is empty on {} port {} (populated: {})",
                                   options.gidIndex, c.name, port,
                                   populated.empty() ? "none" : populated));
    }
    c.gid = *it;
  } else {
    int index = c.ethernet
                    ? selectGidIndex(table, resolveRouteHint(options.peerHost, options.localHost))
                    : 0;
    auto it = std::find_if(table.begin(), table.end(),
                           [&](const GidEntry& e) { return e.index == index; });
    if (it != table.end()) {
      c.gid = *it;
    } else if (c.ethernet) {
      throw TransportError(fmt::format(
          "{} port {}: GID table has no usable entry (is an IP address configured on its "
          "netdev?)",
          c.name, port));
    } else {
      c.gid.index = 0;  // IB without a readable table: the GID is only used with a GRH
    }
  }
  c.gidIndex = c.gid.index;

  // Queue depths.
  auto depth = [&](uint32_t requested, uint32_t dflt, const char* option) -> uint32_t {
    auto max = static_cast<uint32_t>(c.devAttr.max_qp_wr);
    if (requested == 0) return std::min(dflt, max);
    if (requested > max)
      throw UsageError(
          fmt::format("{} {}: above max_qp_wr {} of {}", option, requested, max, c.name));
    return requested;
  };
  c.txDepth = depth(options.txDepth, kDefaultTxDepth, "--tx-depth");
  c.rxDepth = depth(options.rxDepth, kDefaultRxDepth, "--rx-depth");

  // Path MTU.
  c.mtu = c.portAttr.active_mtu;
  if (options.mtu != 0) {
    auto m = mtuFromBytes(options.mtu);
    if (!m)
      throw UsageError(
          fmt::format("--mtu {}: not a path MTU (256, 512, 1024, 2048 or 4096)", options.mtu));
    if (*m > c.portAttr.active_mtu)
      throw UsageError(fmt::format("--mtu {}: above the active MTU {} of {} port {}", options.mtu,
                                   mtuToBytes(c.portAttr.active_mtu), c.name, port));
    c.mtu = *m;
    if (c.rdmaCm && c.mtu != c.portAttr.active_mtu)
      throw UsageError(fmt::format(
          "--mtu {} with --rdma-cm: rdma_cm takes the path MTU from the route (active MTU {} of "
          "{} port {}); drop --mtu or --rdma-cm",
          options.mtu, mtuToBytes(c.portAttr.active_mtu), c.name, port));
  }

  // PD, completion channel, CQ.
  c.pd = ibv_alloc_pd(c.ctx);
  if (c.pd == nullptr) {
    int err = errno;
    throw TransportError(fmt::format("ibv_alloc_pd on {}: {}", c.name, errText(err)));
  }
  if (options.useEvent) {
    c.channel = ibv_create_comp_channel(c.ctx);
    if (c.channel == nullptr) {
      int err = errno;
      throw TransportError(fmt::format("ibv_create_comp_channel on {}: {}", c.name, errText(err)));
    }
    int flags = fcntl(c.channel->fd, F_GETFL);
    if (flags < 0 || fcntl(c.channel->fd, F_SETFL, flags | O_NONBLOCK) < 0)
      throw SystemError(fmt::format("fcntl O_NONBLOCK on the completion channel of {}", c.name),
                        errno);
  }
  int cqe = static_cast<int>(
      std::min<int64_t>(2 * static_cast<int64_t>(c.txDepth + c.rxDepth), c.devAttr.max_cqe));
  c.cq = ibv_create_cq(c.ctx, cqe, nullptr, c.channel, 0);
  if (c.cq == nullptr) {
    int err = errno;
    throw TransportError(fmt::format("ibv_create_cq ({} CQEs, max_cqe {}) on {}: {}", cqe,
                                     c.devAttr.max_cqe, c.name, errText(err)));
  }
  c.cqSize = c.cq->cqe;
  if (c.channel != nullptr) {
    if (int rc = ibv_req_notify_cq(c.cq, 0); rc != 0)
      throw TransportError(fmt::format("ibv_req_notify_cq on {}: {}", c.name, errText(rc)));
  }

  // Inline size: what a QP with these depths accepts (probed by creating QPs).
  if (options.inlineBytes < 0) {
    uint32_t reported = 0;
    if (ibv_qp* qp = c.createQp(kDefaultInline, &reported)) {
      ibv_destroy_qp(qp);
      c.inlineBytes = std::min(reported, kDefaultInline);
    } else {
      int err = errno;
      int64_t cap = probeInlineCap(c, kDefaultInline);
      if (cap < 0)
        throw TransportError(fmt::format("ibv_create_qp (RC, tx depth {}, rx depth {}) on {}: {}",
                                         c.txDepth, c.rxDepth, c.name, errText(err)));
      c.inlineBytes = static_cast<uint32_t>(cap);
    }
  } else {
    if (options.inlineBytes > UINT32_MAX)
      throw UsageError(fmt::format("--inline {}: too large", options.inlineBytes));
    auto want = static_cast<uint32_t>(options.inlineBytes);
    if (ibv_qp* qp = c.createQp(want)) {
      ibv_destroy_qp(qp);
      c.inlineBytes = want;
    } else {
      int err = errno;
      int64_t cap = probeInlineCap(c, want);
      if (cap < 0)
        throw TransportError(fmt::format("ibv_create_qp (RC, tx depth {}, rx depth {}) on {}: {}",
                                         c.txDepth, c.rxDepth, c.name, errText(err)));
      throw UsageError(fmt::format(
          "--inline {}: above the inline cap {} of {} (largest max_inline_data ibv_create_qp "
          "accepts with tx depth {})",
          want, cap, c.name, c.txDepth));
    }
  }
  return std::make_unique<VerbsDevice>(std::move(core));
}

// ---- rdma_cm endpoints ----------------------------------------------------------------------

std::unique_ptr<Endpoint> adoptCmQp(std::shared_ptr<Core> core, ibv_qp* qp,
                                    std::unique_ptr<CmResources> resources) {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  int mask = IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_SQ_PSN |
             IBV_QP_AV | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC;
  if (int rc = ibv_query_qp(qp, &attr, mask, &init); rc != 0) {
    resources->destroyQp();
    --core->liveQps;
    throw TransportError(fmt::format("ibv_query_qp on {} QPN {:#x} after rdma_cm connect: {}",
                                     core->name, qp->qp_num, errText(rc)));
  }
  QpAddress local;
  local.linkLayer = core->portAttr.link_layer;
  local.mtu = static_cast<uint8_t>(attr.path_mtu);
  local.lid = core->portAttr.lid;
  local.qpn = qp->qp_num;
  local.psn = attr.sq_psn;
  local.gidIndex = static_cast<uint16_t>(attr.ah_attr.grh.sgid_index);
  if (core->ethernet) {
    ibv_gid g{};
    if (ibv_query_gid(core->ctx, static_cast<uint8_t>(core->port), attr.ah_attr.grh.sgid_index,
                      &g) == 0)
      std::memcpy(local.gid.data(), g.raw, 16);
  } else {
    local.gid = core->gid.gid;
  }
  QpAddress remote;
  remote.linkLayer = local.linkLayer;
  remote.mtu = local.mtu;
  remote.lid = attr.ah_attr.dlid;
  remote.qpn = attr.dest_qp_num;
  remote.psn = attr.rq_psn;
  remote.gidIndex = 0xffff;  // not known with rdma_cm
  std::memcpy(remote.gid.data(), attr.ah_attr.grh.dgid.raw, 16);
  return std::make_unique<VerbsEndpoint>(std::move(core), qp, local, remote, attr.path_mtu,
                                         attr.max_rd_atomic, attr.max_dest_rd_atomic,
                                         std::move(resources));
}

// ---- GID table ----------------------------------------------------------------------------

namespace {

std::string readSysfs(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

namespace {

GidEntry fromGidEntry(const ibv_gid_entry& ge) {
  GidEntry e;
  e.index = static_cast<int>(ge.gid_index);
  std::memcpy(e.gid.data(), ge.gid.raw, 16);
  e.type = ge.gid_type == IBV_GID_TYPE_ROCE_V2   ? GidType::kRoceV2
           : ge.gid_type == IBV_GID_TYPE_ROCE_V1 ? GidType::kRoceV1
                                                 : GidType::kIb;
  char name[IF_NAMESIZE] = {};
  if (ge.ndev_ifindex != 0 && if_indextoname(ge.ndev_ifindex, name) != nullptr) e.netdev = name;
  return e;
}

}  // namespace

std::vector<GidEntry> readGidTable(ibv_context* ctx, int port, int tableLength) {
  std::vector<GidEntry> out;
  // One call for all valid entries of all ports (rdma-core >= 32). Querying index by index
  // costs one ioctl per entry, empty ones included: rxe has 1024 entries per port, which took
  // ~2 s per device open in the TCG VM.
  {
    ibv_device_attr da{};
    int ports = ibv_query_device(ctx, &da) == 0 ? std::max<int>(da.phys_port_cnt, 1) : 1;
    std::vector<ibv_gid_entry> all(static_cast<size_t>(tableLength) * ports);
    ssize_t n = all.empty() ? 0 : ibv_query_gid_table(ctx, all.data(), all.size(), 0);
    if (n >= 0) {
      for (ssize_t i = 0; i < n; ++i) {
        if (static_cast<int>(all[i].port_num) != port) continue;
        GidEntry e = fromGidEntry(all[i]);
        if (std::all_of(e.gid.begin(), e.gid.end(), [](uint8_t b) { return b == 0; })) continue;
        out.push_back(std::move(e));
      }
      std::sort(out.begin(), out.end(),
                [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
      return out;
    }
  }
  std::string sysPort = fmt::format("/sys/class/infiniband/{}/ports/{}/gid_attrs/",
                                    ibv_get_device_name(ctx->device), port);
  for (int i = 0; i < tableLength; ++i) {
    GidEntry e;
    e.index = i;
    ibv_gid_entry ge{};
    int rc = ibv_query_gid_ex(ctx, static_cast<uint32_t>(port), static_cast<uint32_t>(i), &ge, 0);
    if (rc == 0) {
      std::memcpy(e.gid.data(), ge.gid.raw, 16);
      e.type = ge.gid_type == IBV_GID_TYPE_ROCE_V2   ? GidType::kRoceV2
               : ge.gid_type == IBV_GID_TYPE_ROCE_V1 ? GidType::kRoceV1
                                                     : GidType::kIb;
      char name[IF_NAMESIZE] = {};
      if (ge.ndev_ifindex != 0 && if_indextoname(ge.ndev_ifindex, name) != nullptr) e.netdev = name;
    } else if (rc == EOPNOTSUPP || rc == ENOSYS) {
      ibv_gid gid{};
      if (ibv_query_gid(ctx, static_cast<uint8_t>(port), i, &gid) != 0) continue;
      std::memcpy(e.gid.data(), gid.raw, 16);
      std::string type = readSysfs(sysPort + "types/" + std::to_string(i));
      e.type = type.find("v2") != std::string::npos   ? GidType::kRoceV2
               : type.find("v1") != std::string::npos ? GidType::kRoceV1
                                                      : GidType::kIb;
      e.netdev = readSysfs(sysPort + "ndevs/" + std::to_string(i));
    } else {
      continue;  // ENODATA etc.: empty entry
    }
    if (std::all_of(e.gid.begin(), e.gid.end(), [](uint8_t b) { return b == 0; })) continue;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace rdmabench::transport::verbs
