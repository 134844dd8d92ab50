#pragma once
// A connected RC QP of the verbs backend (out-of-band or rdma_cm). Internal to
// lib/transport/verbs/; Core::pollCq() hands each work completion to its endpoint's
// translate().

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "transport/transport.h"
#include "transport/verbs/verbs_address.h"
#include "transport/verbs/verbs_core.h"

namespace rdmabench::transport::verbs {

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
        sendDepth_(core_->txDepth),
        recvDepth_(core_->rxDepth),
        sendRing_(ringSize(core_->txDepth)),
        recvRing_(ringSize(core_->rxDepth)),
        peerName_(describePeer(remote)),
        cm_(std::move(cm)) {
    core_->endpoints[qp_->qp_num] = this;
  }

  ~VerbsEndpoint() override;

  PostResult postSend(const MemoryRegion& mr, uint64_t offset, uint32_t length, uint64_t context,
                      bool signaled) override;
  PostResult postWrite(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                       const RemoteRegion& remote, uint64_t remoteOffset, uint64_t context,
                       bool signaled) override;
  PostResult postRead(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                      const RemoteRegion& remote, uint64_t remoteOffset, uint64_t context) override;
  PostResult postRecv(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                      uint64_t context) override;
  // Resolves lkey, rkey and addresses once (ranges checked as the single posts do).
  PreparedOp prepare(OpKind op, const MemoryRegion& mr, uint64_t offset, uint32_t length,
                     const RemoteRegion* remote, uint64_t remoteOffset) override;
  // Up to kChain chained work requests per ibv_post_send / ibv_post_recv (perftest's -l).
  uint32_t postBatch(const PreparedOp& op, const BatchPost* posts, uint32_t count) override;
  // A run of up to kChain sends/writes from the prepared run chain: per run it patches the last
  // work request (wr_id = kRunBit | run number, the flags, the end of the list) and writes one
  // run record; nothing per post (perftest -l). Longer runs and reads: the default.
  uint32_t postRun(const PreparedOp& op, uint64_t context, uint32_t count, bool signaled) override;
  std::string peerName() const override { return peerName_; }
  ConnectionInfo info() const override;

  // Translates one work completion of this QP; returns false when nothing is reported (a
  // successful completion of a post the user asked to be unsignaled).
  bool translate(const ibv_wc& wc, Completion& out);

  // One run (postRun): the sequence number of its last post, its context, what its posts are.
  struct Run {
    uint64_t endSeq = 0;
    uint64_t context = 0;
    uint32_t bytes = 0;
    OpKind op = OpKind::kSend;
    bool userSignaled = false;
  };

 private:
  static constexpr uint32_t kChain = 32;  // work requests per ibv_post_send of a batch
  // Ring slots: the queue depth rounded up to a power of two (indices masked, not divided).
  static size_t ringSize(uint32_t depth) {
    size_t n = 1;
    while (n < depth)
      n <<= 1;
    return n;
  }
  Slot& sendSlot(uint64_t seq) { return sendSlots_[seq & sendMask_]; }
  Slot& recvSlot(uint64_t seq) { return recvRing_[seq & (recvRing_.size() - 1)]; }
  uint32_t postSendChain(const PreparedOp& op, const BatchPost* posts, uint32_t n);
  // Receives, and sends beyond one chain: kChain at a time until one is not taken whole.
  uint32_t postChains(const PreparedOp& op, const BatchPost* posts, uint32_t count);
  // A batch of one (bw without --post-list): the prepared single work request, patched.
  uint32_t postOneSend(const PreparedOp& op, const BatchPost& post);
  // postRun's other cases: the default (reads, longer runs), a chain to build, a prefix.
  [[gnu::noinline]] uint32_t postRunSlow(const PreparedOp& op, uint64_t context, uint32_t count,
                                         bool signaled);
  // A run the provider refused (all or from `bad` on): undoes the counts, throws unless the
  // queue was full; returns how many it took.
  uint32_t runRefused(OpKind op, uint32_t count, int rc, const ibv_send_wr* bad);
  // buildSendChain(op), then postOneSend (out of line: the rare path of postOneSend).
  [[gnu::noinline]] uint32_t rebuildAndPostOne(const PreparedOp& op, const BatchPost& post);
  // Throws the TransportError of a failed ibv_post_send of a batch of n (out of the hot path).
  [[noreturn]] void throwPostSendError(OpKind op, uint32_t n, int rc) const;
  // Builds chainWr_/chainSge_ for `op` (all kChain entries linked, flags without SIGNALED).
  void buildSendChain(const PreparedOp& op);
  // One compare for an op this backend prepared (its token); the fields for one made by hand.
  bool chainMatches(const PreparedOp& op) const {
    return op.token == chainToken_ &&
           (op.token != 0 ||
            (chainValid_ && op.op == chainOp_ && op.localAddr == chainLocalAddr_ &&
             op.length == chainLength_ && op.localKey == chainLocalKey_ &&
             op.remoteAddr == chainRemoteAddr_ && op.remoteKey == chainRemoteKey_));
  }
  // The run a completion of a post inside a run (wr_id kRunBit | kRunInnerBit, a failure)
  // belongs to as far as the endpoint can tell: the oldest run not known complete.
  const Run& oldestRun();
  void fill(const ibv_wc& wc, Completion& out, uint64_t context, uint32_t bytes, OpKind op,
            bool isRecv);
  uint32_t postRecvChain(const PreparedOp& op, const BatchPost* posts, uint32_t n);
  PostResult postSendSide(ibv_wr_opcode opcode, OpKind op, const MemoryRegion& mr, uint64_t offset,
                          uint32_t length, uint64_t remoteAddr, uint32_t rkey, uint64_t context,
                          bool signaled);

  std::shared_ptr<Core> core_;
  ibv_qp* qp_;
  QpAddress local_;
  QpAddress remote_;
  ibv_mtu mtu_;
  uint8_t maxRdAtomic_;
  uint8_t maxDestRdAtomic_;
  uint64_t sendDepth_, recvDepth_;  // queue depths (tx/rx depth)
  std::vector<Slot> sendRing_;
  std::vector<Slot> recvRing_;
  Slot* sendSlots_ = sendRing_.data();  // sendRing_, indexed by seq & sendMask_
  uint64_t sendMask_ = sendRing_.size() - 1;
  uint64_t sendNext_ = 0;
  uint64_t sendRetired_ = 0;
  uint64_t recvNext_ = 0;
  uint64_t recvRetired_ = 0;
  std::string peerName_;
  std::unique_ptr<CmResources> cm_;  // rdma_cm mode only
  // The send chain of the last prepared op posted, built once per op (perftest's prepared
  // work requests): a post patches only wr_id and send_flags, and cuts the list at its end.
  // The entries point into each other, so the endpoint is never copied or moved.
  ibv_send_wr chainWr_[kChain];
  ibv_sge chainSge_[kChain];
  ibv_send_wr oneWr_{};  // chainWr_[0] alone (next = nullptr), for batches of one
  // The run chain (postRun): as chainWr_, but every entry is unsignaled with wr_id
  // kRunBit | kRunInnerBit; a run patches only its last entry and restores it after the post.
  ibv_send_wr runWr_[kChain];
  ibv_sge runSge_[kChain];
  std::vector<Run> runRing_ = std::vector<Run>(sendRing_.size());  // run number & runMask_
  uint64_t runMask_ = sendRing_.size() - 1;
  uint64_t runNext_ = 0, runRetired_ = 0;
  bool chainValid_ = false;
  uint64_t chainToken_ = 0;  // the token of the op the chains were built for (0: none / by hand)
  // postRun's one-compare check: chainToken_ when the chains hold a send/write with a token,
  // else a value no token has.
  static constexpr uint64_t kNoRunToken = ~0ull;
  uint64_t runToken_ = kNoRunToken;
  OpKind chainOp_ = OpKind::kSend;
  uint32_t chainLength_ = 0;
  unsigned chainFlags_ = 0;  // IBV_SEND_INLINE or 0
  uint64_t chainLocalAddr_ = 0, chainLocalKey_ = 0, chainRemoteAddr_ = 0, chainRemoteKey_ = 0;
};

}  // namespace rdmabench::transport::verbs
