// Connected RC QPs of the verbs backend (verbs_endpoint.h) and the adoption of QPs that
// librdmacm connected.

#include "transport/verbs/verbs_endpoint.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"
#include "transport/verbs/verbs_mr.h"

namespace rdmabench::transport::verbs {

namespace {

constexpr uint64_t kRecvBit = 1ull << 63;
// Sends of a run (postRun): the last carries kRunBit | its run number, the others also
// kRunInnerBit (their completions are failures only: they never ask for one).
constexpr uint64_t kRunBit = 1ull << 62;
constexpr uint64_t kRunInnerBit = 1ull << 61;
constexpr uint64_t kRunNumberMask = kRunInnerBit - 1;

}  // namespace

VerbsEndpoint::~VerbsEndpoint() {
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
  try {
    core_->drainToPending(qpn, true);
  } catch (const std::exception&) {
    // ibv_poll_cq failed: the CQ is broken and the next poll() reports it; never throw here.
  }
}

PostResult VerbsEndpoint::postSend(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                                   uint64_t context, bool signaled) {
  checkRange("postSend", mr, offset, length);
  return postSendSide(IBV_WR_SEND, OpKind::kSend, mr, offset, length, 0, 0, context, signaled);
}

PostResult VerbsEndpoint::postWrite(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                                    const RemoteRegion& remote, uint64_t remoteOffset,
                                    uint64_t context, bool signaled) {
  checkRange("postWrite", mr, offset, length);
  uint32_t rkey = rkeyOf("postWrite", remote, remoteOffset, length);
  return postSendSide(IBV_WR_RDMA_WRITE, OpKind::kWrite, mr, offset, length,
                      remote.addr + remoteOffset, rkey, context, signaled);
}

PostResult VerbsEndpoint::postRead(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                                   const RemoteRegion& remote, uint64_t remoteOffset,
                                   uint64_t context) {
  checkRange("postRead", mr, offset, length);
  uint32_t rkey = rkeyOf("postRead", remote, remoteOffset, length);
  return postSendSide(IBV_WR_RDMA_READ, OpKind::kRead, mr, offset, length,
                      remote.addr + remoteOffset, rkey, context, true);
}

PostResult VerbsEndpoint::postRecv(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                                   uint64_t context) {
  checkRange("postRecv", mr, offset, length);
  if (recvNext_ - recvRetired_ >= recvDepth_) return PostResult::kRetry;
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
  recvSlot(recvNext_) = Slot{context, length, OpKind::kRecv, true};
  ++recvNext_;
  return PostResult::kOk;
}

ConnectionInfo VerbsEndpoint::info() const {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  const char* state = "?";
  bool queried = ibv_query_qp(qp_, &attr,
                              IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                  IBV_QP_MIN_RNR_TIMER,
                              &init) == 0;
  if (queried) state = qpStateName(attr.qp_state);
  ConnectionInfo i;
  i.peer = peerName_;
  i.common.mtu = static_cast<uint32_t>(mtuToBytes(mtu_));
  i.common.inlineBytes = core_->inlineBytes;
  i.common.gidIndex = static_cast<uint32_t>(local_.gidIndex);
  Facts& f = i.facts;
  addFact(f, "qpn", qp_->qp_num);
  addFact(f, "state", state);
  addFact(f, "peer_qpn", remote_.qpn);
  addFact(f, "local_gid", gidToString(local_.gid));
  addFact(f, "remote_gid", gidToString(remote_.gid));
  addFact(f, "remote_gid_index", remote_.gidIndex);
  addFact(f, "local_lid", local_.lid);
  addFact(f, "remote_lid", remote_.lid);
  addFact(f, "max_rd_atomic", maxRdAtomic_);
  addFact(f, "max_dest_rd_atomic", maxDestRdAtomic_);
  addFact(f, "psn", local_.psn);
  addFact(f, "tx_depth", core_->txDepth);
  addFact(f, "rx_depth", core_->rxDepth);
  addFact(f, "connection_manager", cm_ ? "rdma_cm" : "out-of-band");
  if (queried) {
    addFact(f, "timeout", attr.timeout);
    addFact(f, "retry_cnt", attr.retry_cnt);
    addFact(f, "rnr_retry", attr.rnr_retry);
  }
  return i;
}

bool VerbsEndpoint::translate(const ibv_wc& wc, Completion& out) {
  if ((wc.wr_id & kRecvBit) != 0) {
    const uint64_t seq = wc.wr_id & ~kRecvBit;
    const Slot& slot = recvSlot(seq);
    recvRetired_ = seq + 1;
    fill(wc, out, slot.context, slot.bytes, slot.op, true);
    return true;
  }
  if ((wc.wr_id & kRunBit) != 0) {
    if ((wc.wr_id & kRunInnerBit) != 0) {  // never signaled: a failure (flushed or not)
      if (wc.status == IBV_WC_SUCCESS) return false;
      const Run& run = oldestRun();
      fill(wc, out, run.context, run.bytes, run.op, false);
      return true;
    }
    const uint64_t r = wc.wr_id & kRunNumberMask;
    const Run& run = runRing_[r & runMask_];
    sendRetired_ = run.endSeq + 1;
    runRetired_ = r + 1;
    if (wc.status == IBV_WC_SUCCESS && !run.userSignaled) return false;
    fill(wc, out, run.context, run.bytes, run.op, false);
    return true;
  }
  const uint64_t seq = wc.wr_id;
  const Slot& slot = sendSlot(seq);
  sendRetired_ = seq + 1;
  if (wc.status == IBV_WC_SUCCESS && !slot.userSignaled) return false;
  fill(wc, out, slot.context, slot.bytes, slot.op, false);
  return true;
}

const VerbsEndpoint::Run& VerbsEndpoint::oldestRun() {
  // Runs retired by a later completion (a single post's, or a later run's) are skipped.
  while (runRetired_ + 1 < runNext_ && runRing_[runRetired_ & runMask_].endSeq < sendRetired_)
    ++runRetired_;
  return runRing_[runRetired_ & runMask_];
}

void VerbsEndpoint::fill(const ibv_wc& wc, Completion& out, uint64_t context, uint32_t bytes,
                         OpKind op, bool isRecv) {
  out.context = context;
  out.op = op;
  if (wc.status == IBV_WC_SUCCESS) {
    out.bytes = isRecv ? wc.byte_len : bytes;
    out.status = CompletionStatus::kSuccess;
    out.code = 0;
    out.errorId = 0;
    return;
  }
  out.bytes = 0;
  out.status = wc.status == IBV_WC_LOC_LEN_ERR    ? CompletionStatus::kTruncated
               : wc.status == IBV_WC_WR_FLUSH_ERR ? CompletionStatus::kFlushed
                                                  : CompletionStatus::kError;
  out.code = static_cast<int32_t>(wc.status);
  out.errorId = core_->errors.keep(fmt::format(
      "{} completion on {} QPN {:#x} (peer {}): {} (status {}, vendor_err {:#x}){}", toString(op),
      core_->name, wc.qp_num, peerName_, ibv_wc_status_str(wc.status), static_cast<int>(wc.status),
      wc.vendor_err,
      wc.status == IBV_WC_RETRY_EXC_ERR
          ? "; the peer did not answer: is it still running? check --gid-index / routing "
            "to the peer"
          : ""));
}

PostResult VerbsEndpoint::postSendSide(ibv_wr_opcode opcode, OpKind op, const MemoryRegion& mr,
                                       uint64_t offset, uint32_t length, uint64_t remoteAddr,
                                       uint32_t rkey, uint64_t context, bool signaled) {
  uint64_t outstanding = sendNext_ - sendRetired_;
  if (outstanding >= sendDepth_) return PostResult::kRetry;
  // The post that fills the last free slot is always signaled, so a queue full of
  // unsignaled posts still retires (its completion is not reported if the user did not
  // ask for one).
  bool hwSignaled = signaled || outstanding + 1 == sendDepth_;
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
  sendSlot(sendNext_) = Slot{context, length, op, signaled};
  ++sendNext_;
  return PostResult::kOk;
}

// ---- batches (transport.h: prepare / postBatch) ----------------------------------------------

PreparedOp VerbsEndpoint::prepare(OpKind op, const MemoryRegion& mr, uint64_t offset,
                                  uint32_t length, const RemoteRegion* remote,
                                  uint64_t remoteOffset) {
  PreparedOp p = Endpoint::prepare(op, mr, offset, length, remote, remoteOffset);
  p.localKey = static_cast<const VerbsMemoryRegion&>(mr).lkey();
  if (op == OpKind::kWrite || op == OpKind::kRead)
    p.remoteKey = rkeyOf("prepare", *remote, remoteOffset, length);
  static std::atomic<uint64_t> tokens{0};  // unique over all endpoints of the process
  p.token = ++tokens;
  return p;
}

// A pure dispatcher (no loop state), so that the common batches reach their poster by a jump.
uint32_t VerbsEndpoint::postBatch(const PreparedOp& op, const BatchPost* posts, uint32_t count) {
  if (op.op == OpKind::kRecv) return postChains(op, posts, count);
  if (count == 1) return postOneSend(op, *posts);
  if (count <= kChain) return postSendChain(op, posts, count);
  return postChains(op, posts, count);
}

uint32_t VerbsEndpoint::postChains(const PreparedOp& op, const BatchPost* posts, uint32_t count) {
  uint32_t done = 0;
  while (done < count) {
    const uint32_t n = std::min(count - done, kChain);
    const uint32_t accepted = op.op == OpKind::kRecv ? postRecvChain(op, posts + done, n)
                                                     : postSendChain(op, posts + done, n);
    done += accepted;
    if (accepted < n) break;  // queue full
  }
  return done;
}

void VerbsEndpoint::buildSendChain(const PreparedOp& op) {
  const ibv_wr_opcode opcode = op.op == OpKind::kSend    ? IBV_WR_SEND
                               : op.op == OpKind::kWrite ? IBV_WR_RDMA_WRITE
                                                         : IBV_WR_RDMA_READ;
  const bool inl = op.op != OpKind::kRead && op.length <= core_->inlineBytes;
  chainFlags_ = inl ? IBV_SEND_INLINE : 0;
  for (uint32_t i = 0; i < kChain; ++i) {
    chainSge_[i] = ibv_sge{op.localAddr, op.length, static_cast<uint32_t>(op.localKey)};
    chainWr_[i] = ibv_send_wr{};
    chainWr_[i].next = i + 1 < kChain ? &chainWr_[i + 1] : nullptr;
    chainWr_[i].sg_list = &chainSge_[i];
    chainWr_[i].num_sge = op.length > 0 ? 1 : 0;
    chainWr_[i].opcode = opcode;
    chainWr_[i].send_flags = chainFlags_;
    chainWr_[i].wr.rdma.remote_addr = op.remoteAddr;
    chainWr_[i].wr.rdma.rkey = static_cast<uint32_t>(op.remoteKey);
  }
  for (uint32_t i = 0; i < kChain; ++i) {
    runSge_[i] = chainSge_[i];
    runWr_[i] = chainWr_[i];
    runWr_[i].wr_id = kRunBit | kRunInnerBit;
    runWr_[i].next = i + 1 < kChain ? &runWr_[i + 1] : nullptr;
    runWr_[i].sg_list = &runSge_[i];
  }
  chainToken_ = op.token;
  runToken_ = op.token != 0 && op.op != OpKind::kRead ? op.token : kNoRunToken;
  chainOp_ = op.op;
  chainLength_ = op.length;
  chainLocalAddr_ = op.localAddr;
  chainLocalKey_ = op.localKey;
  chainRemoteAddr_ = op.remoteAddr;
  chainRemoteKey_ = op.remoteKey;
  chainValid_ = true;
  oneWr_ = chainWr_[0];
  oneWr_.next = nullptr;
}

void VerbsEndpoint::throwPostSendError(OpKind op, uint32_t n, int rc) const {
  throw TransportError(fmt::format("ibv_post_send ({}, batch of {}) on {} QPN {:#x} (peer {}): {}",
                                   toString(op), n, core_->name, qp_->qp_num, peerName_,
                                   errText(rc)));
}

uint32_t VerbsEndpoint::rebuildAndPostOne(const PreparedOp& op, const BatchPost& post) {
  buildSendChain(op);
  return postOneSend(op, post);
}

uint32_t VerbsEndpoint::postOneSend(const PreparedOp& op, const BatchPost& post) {
  const uint64_t outstanding = sendNext_ - sendRetired_;
  if (outstanding >= sendDepth_) return 0;
  // Rebuilding is a call out of line, so that the path of a prepared chain keeps nothing in
  // registers across a call but `this` (six register saves fewer per post).
  if (!chainMatches(op)) return rebuildAndPostOne(op, post);
  const bool user = post.signaled || op.op == OpKind::kRead;
  // As postSendSide: the post that fills the last free slot is signaled.
  oneWr_.wr_id = sendNext_;
  oneWr_.send_flags =
      chainFlags_ | (user || outstanding + 1 == sendDepth_ ? unsigned{IBV_SEND_SIGNALED} : 0u);
  sendSlot(sendNext_) = Slot{post.context, op.length, op.op, user};
  ibv_send_wr* bad = nullptr;
  const int rc = ibv_post_send(qp_, &oneWr_, &bad);
  if (rc == 0) {
    ++sendNext_;
    return 1;
  }
  if (rc == ENOMEM) return 0;
  throwPostSendError(op.op, 1, rc);
}

// One ibv_post_send of up to kChain chained work requests from the prepared chain (rebuilt
// only when `op` differs from the last one). Returns how many were accepted.
uint32_t VerbsEndpoint::postSendChain(const PreparedOp& op, const BatchPost* posts, uint32_t n) {
  const uint64_t outstanding = sendNext_ - sendRetired_;
  if (outstanding >= sendDepth_ || n == 0) return 0;
  n = static_cast<uint32_t>(std::min<uint64_t>(n, sendDepth_ - outstanding));
  if (!chainMatches(op)) buildSendChain(op);
  const bool read = op.op == OpKind::kRead;
  // As postSendSide: the post that fills the last free slot is signaled.
  const uint64_t lastFree = sendDepth_ - outstanding - 1;  // index i of that post, if < n
  for (uint32_t i = 0; i < n; ++i) {
    const bool user = posts[i].signaled || read;
    chainWr_[i].wr_id = sendNext_ + i;
    chainWr_[i].send_flags =
        chainFlags_ | (user || i == lastFree ? unsigned{IBV_SEND_SIGNALED} : 0u);
    sendSlot(sendNext_ + i) = Slot{posts[i].context, op.length, op.op, user};
  }
  ibv_send_wr* const tail = &chainWr_[n - 1];
  tail->next = nullptr;  // the list ends at the n-th entry; relinked below
  ibv_send_wr* bad = nullptr;
  const int rc = ibv_post_send(qp_, chainWr_, &bad);
  tail->next = n < kChain ? tail + 1 : nullptr;
  const uint32_t accepted = rc == 0 ? n : static_cast<uint32_t>(bad ? bad - chainWr_ : 0);
  sendNext_ += accepted;
  if (rc != 0 && rc != ENOMEM) throwPostSendError(op.op, n, rc);
  return accepted;
}

// The common run (a whole run that fits, of the op the run chain was built for) in a path that
// keeps little across the provider's call; everything else goes to postRunSlow.
uint32_t VerbsEndpoint::postRun(const PreparedOp& op, uint64_t context, uint32_t count,
                                bool signaled) {
  const uint64_t outstanding = sendNext_ - sendRetired_;
  if (op.token != runToken_ || count - 1 >= kChain || outstanding + count > sendDepth_)
    return postRunSlow(op, context, count, signaled);
  ibv_send_wr* const tail = &runWr_[count - 1];
  const uint64_t r = runNext_;
  tail->wr_id = kRunBit | (r & kRunNumberMask);
  // As postSendSide: the post that fills the last free slot is signaled.
  tail->send_flags =
      chainFlags_ |
      (signaled || outstanding + count == sendDepth_ ? unsigned{IBV_SEND_SIGNALED} : 0u);
  tail->next = nullptr;
  runRing_[r & runMask_] = Run{sendNext_ + count - 1, context, op.length, op.op, signaled};
  sendNext_ += count;  // undone by runRefused if the provider does not take the run
  runNext_ = r + 1;
  ibv_send_wr* bad = nullptr;
  const int rc = ibv_post_send(qp_, runWr_, &bad);
  if (count < kChain) {  // entry kChain - 1 is only ever a tail: left patched
    tail->wr_id = kRunBit | kRunInnerBit;
    tail->send_flags = chainFlags_;
    tail->next = tail + 1;
  }
  if (rc != 0) return runRefused(op.op, count, rc, bad);
  return count;
}

uint32_t VerbsEndpoint::runRefused(OpKind op, uint32_t count, int rc, const ibv_send_wr* bad) {
  // A prefix taken by the provider (its queue full): unsignaled posts, retired by a later
  // completion; their failures are reported with the oldest run's context.
  sendNext_ -= count;
  --runNext_;
  const uint32_t accepted = bad ? static_cast<uint32_t>(bad - runWr_) : 0;
  sendNext_ += accepted;
  if (rc != ENOMEM) throwPostSendError(op, count, rc);
  return accepted;
}

uint32_t VerbsEndpoint::postRunSlow(const PreparedOp& op, uint64_t context, uint32_t count,
                                    bool signaled) {
  if (count > kChain || count == 0 || op.op == OpKind::kRead || op.op == OpKind::kRecv)
    return Endpoint::postRun(op, context, count, signaled);
  const uint64_t outstanding = sendNext_ - sendRetired_;
  if (outstanding >= sendDepth_) return 0;
  if (!chainMatches(op)) buildSendChain(op);
  const uint64_t room = sendDepth_ - outstanding;
  // A run that fits, or a prefix that fills the queue, none of it asking for a completion but
  // its last post, which is signaled underneath (the queue must drain).
  const auto n = static_cast<uint32_t>(std::min<uint64_t>(count, room));
  const bool user = signaled && n == count;
  ibv_send_wr* const tail = &runWr_[n - 1];
  const uint64_t r = runNext_;
  tail->wr_id = kRunBit | (r & kRunNumberMask);
  tail->send_flags = chainFlags_ | (user || n == room ? unsigned{IBV_SEND_SIGNALED} : 0u);
  tail->next = nullptr;
  runRing_[r & runMask_] = Run{sendNext_ + n - 1, context, op.length, op.op, user};
  sendNext_ += n;
  runNext_ = r + 1;
  ibv_send_wr* bad = nullptr;
  const int rc = ibv_post_send(qp_, runWr_, &bad);
  if (n < kChain) {
    tail->wr_id = kRunBit | kRunInnerBit;
    tail->send_flags = chainFlags_;
    tail->next = tail + 1;
  }
  if (rc != 0) return runRefused(op.op, n, rc, bad);
  return n;
}

// One ibv_post_recv of up to kChain chained receives. Returns how many were accepted.
uint32_t VerbsEndpoint::postRecvChain(const PreparedOp& op, const BatchPost* posts, uint32_t n) {
  const uint64_t outstanding = recvNext_ - recvRetired_;
  if (outstanding >= recvDepth_) return 0;
  n = static_cast<uint32_t>(std::min<uint64_t>(n, recvDepth_ - outstanding));
  ibv_sge sge[kChain];
  ibv_recv_wr wr[kChain];
  for (uint32_t i = 0; i < n; ++i) {
    sge[i] = ibv_sge{op.localAddr, op.length, static_cast<uint32_t>(op.localKey)};
    wr[i] = ibv_recv_wr{};
    wr[i].wr_id = (recvNext_ + i) | kRecvBit;
    wr[i].next = i + 1 < n ? &wr[i + 1] : nullptr;
    wr[i].sg_list = &sge[i];
    wr[i].num_sge = op.length > 0 ? 1 : 0;
  }
  ibv_recv_wr* bad = nullptr;
  const int rc = ibv_post_recv(qp_, wr, &bad);
  const uint32_t accepted = rc == 0 ? n : static_cast<uint32_t>(bad ? bad - wr : 0);
  for (uint32_t i = 0; i < accepted; ++i)
    recvSlot(recvNext_ + i) = Slot{posts[i].context, op.length, OpKind::kRecv, true};
  recvNext_ += accepted;
  if (rc != 0 && rc != ENOMEM)
    throw TransportError(fmt::format("ibv_post_recv (batch of {}) on {} QPN {:#x} (peer {}): {}", n,
                                     core_->name, qp_->qp_num, peerName_, errText(rc)));
  return accepted;
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

}  // namespace rdmabench::transport::verbs
