#include "engine/bandwidth.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/units.h"
#include "engine/bandwidth_run.h"
#include "engine/pattern.h"

namespace rdmabench::engine {
namespace bw {

BandwidthRun::BandwidthRun(transport::Device& device, std::vector<Link>& links, Progress& progress,
                           const BandwidthParams& p)
    : links_(links),
      progress_(progress),
      p_(p),
      len_(static_cast<uint32_t>(p.bytes)),
      state_(links.size()),
      isSend_(p.op == DataOp::kSend),
      sends_(p.bidirectional || p.sender),
      receives_(p.bidirectional || !p.sender) {
  transport::Caps caps = device.caps();
  uint32_t sq = caps.maxSendQueue ? caps.maxSendQueue : 128;
  uint32_t rq = caps.maxRecvQueue ? caps.maxRecvQueue : 512;
  depth_ = std::max<uint32_t>(1, p.window);
  cqMod_ = std::max<uint32_t>(1, std::min({p.cqModeration, sq, depth_}));
  if (p.op == DataOp::kRead) cqMod_ = 1;  // reads complete one by one (data lands locally)
  postList_ = std::max<uint32_t>(1, std::min(p.postList, depth_));
  signal_ = SignalRule{cqMod_, postList_};
  runs_ = postList_ > 1 && postList_ <= transport::kMaxRunPosts && cqMod_ >= postList_ &&
          p.op != DataOp::kRead;
  if (isSend_ && receives_ && p.mode == BwMode::kWindow && p.window + 1 > rq)
    throw UsageError(
        fmt::format("--window {}: needs {} posted receives (the window and a control "
                    "message), above the receive queue depth {} of {} (raise --rx-depth or "
                    "lower --window to {})",
                    p.window, p.window + 1, rq, device.name(), rq - 1));
  prepost_ = p.mode == BwMode::kWindow ? std::min<uint64_t>(2ull * p.window, rq - 2) : rq - 2;
  if (p.mode == BwMode::kStream) prepost_ = std::min(prepost_, fairShare(caps, links.size()));
  prepost_ = std::max<uint64_t>(prepost_, 1);
  perMsgs_ = p.mode == BwMode::kWindow ? p.window : 1;
  warmupMsgs_ = p.warmup * perMsgs_;
  totalMsgs_ = (p.warmup + p.iterations) * perMsgs_;
  measuredMsgs_ = p.iterations * perMsgs_;
  recvMark_ = warmupMsgs_ > 0 ? warmupMsgs_ : 1;
  // With warmup, the clock starts only once the warmup data was delivered (a completion may
  // precede delivery): one-sided ops ask the target (kWarm -> kWindowAck); stream-mode send
  // has the receiver ack its last warmup message. Window-mode send acks every window anyway.
  warmSync_ = warmupMsgs_ > 0 && (p.op == DataOp::kWrite ||
                                  (isSend_ && !p.bidirectional && p.mode == BwMode::kStream));
  pendingWarm_.assign(links.size(), 0);
  for (size_t l = 0; l < state_.size(); ++l) {
    state_[l].dataCtx = makeCtx(Ctx::kData, static_cast<uint32_t>(l), 0);
    state_[l].batchCap = postList_;
  }
  prepareOps();
  for (auto& link : links_)
    for (uint64_t c = 1; c < kCodes; ++c)
      std::memcpy(link.region->data() + link.layout.ctrlOffset() + 8 * c, &c, sizeof c);
}

// Stream mode on a device whose operation slots all its connections share (ofi's op-context
// pool, Caps::sharedOpSlots): the data receives one link keeps posted, its equal share of the
// slots less what the link needs besides (its control receives, its data sends in flight, a few
// control sends), so the first links cannot take every slot and leave a later one's receives
// unposted (its sender's messages then wait as unexpected ones). No limit without shared slots.
uint64_t BandwidthRun::fairShare(const transport::Caps& caps, size_t links) const {
  if (caps.sharedOpSlots == 0 || links == 0) return UINT64_MAX;
  const uint64_t perLink = caps.sharedOpSlots / links;
  const uint64_t besides = kCtrlSlots + (sends_ ? depth_ : 0) + 4;
  return perLink > besides ? perLink - besides : 1;
}

// Validates and resolves each link's data op and data receive once, outside the timed loop.
void BandwidthRun::prepareOps() {
  using transport::OpKind;
  const OpKind op = opKind(p_.op);
  for (auto& link : links_) {
    const uint64_t so = link.layout.sendOffset(), ro = link.layout.recvOffset();
    // A read lands in the local receive area from the peer's send area.
    dataOps_.push_back(op == OpKind::kRead
                           ? link.endpoint->prepare(op, *link.region, ro, len_, &link.remote, so)
                           : link.endpoint->prepare(op, *link.region, so, len_, &link.remote, ro));
    recvOps_.push_back(isSend_ && receives_
                           ? link.endpoint->prepare(OpKind::kRecv, *link.region, ro, len_)
                           : transport::PreparedOp{});
  }
  batch_.resize(postList_);
  recvBatch_.resize(kRecvBatch);
}

// The phases of one run, in order: control receives, ready, the timed data phase of the mode,
// the closing handshake of the op, then the untimed check and the figures.
BandwidthResult BandwidthRun::run() {
  const uint64_t runTag = ~p_.bytes;  // the pattern every timed message carries (--check)
  if (p_.check && sends_)
    for (auto& link : links_)
      stampPattern(link.region->data() + link.layout.sendOffset(), len_, runTag);
  prepostControl();
  if (p_.ready) p_.ready();
  int64_t t0 = 0;
  if (sends_ || isSend_) t0 = p_.mode == BwMode::kWindow ? dataWindow() : dataStream();
  // Delivery: the closing handshake is inside the timed interval.
  const int64_t t1 = isSend_ ? closeSend() : closeOneSided();
  drainCtrlSends();
  return result(t0, t1, runTag);
}

void BandwidthRun::prepostControl() {
  for (size_t l = 0; l < links_.size(); ++l) {
    if (isSend_) {
      if (receives_) replenish(l);
      if (!p_.bidirectional && p_.sender) postCtrlRecv(l);  // window ack / kDone
      if (!p_.bidirectional && p_.sender && warmSync_) postCtrlRecv(l);
    } else {
      if (receives_) {  // target: start and fin markers
        postCtrlRecv(l);
        postCtrlRecv(l);
        if (warmSync_) postCtrlRecv(l);
      }
      if (sends_ && p_.op == DataOp::kWrite) postCtrlRecv(l);  // kDone
      if (sends_ && warmSync_) postCtrlRecv(l);
    }
  }
}

// --check's findings and this side's figures: the initiator's interval t0..t1, or the
// target's own marks.
BandwidthResult BandwidthRun::result(int64_t t0, int64_t t1, uint64_t runTag) {
  BandwidthResult r;
  if (p_.check) {
    if (receives_)
      for (auto& link : links_) {
        ++r.checked;
        const uint8_t* area = link.region->data() + link.layout.recvOffset();
        if (!patternMatches(area, len_, runTag)) ++r.wrong;
      }
    verifyPass(/*clientSends=*/true, r);
    if (p_.bidirectional) verifyPass(/*clientSends=*/false, r);
  }
  if (sends_) {
    r.seconds = static_cast<double>(t1 - t0) / 1e9;
    r.messages = measuredMsgs_ * links_.size();
    r.messagesBothWays = p_.bidirectional ? 2 * r.messages : r.messages;
    r.stall = gaps_.finish(t0, t1);
  } else {
    r.target = true;
    int64_t a = isSend_ ? markNs_ : startNs_;
    int64_t b = isSend_ ? targetT1_ : finNs_;
    if (isSend_ && p_.mode == BwMode::kWindow) b = targetT1_;
    r.seconds = static_cast<double>(b - a) / 1e9;
    uint64_t n = measuredMsgs_ * links_.size();
    if (isSend_ && warmupMsgs_ == 0) n -= std::min<uint64_t>(n, links_.size());
    r.messages = r.messagesBothWays = n;
  }
  double bytes = static_cast<double>(r.messagesBothWays) * static_cast<double>(p_.bytes);
  r.megabytesPerSec = megabytesPerSecond(bytes, r.seconds);
  r.messagesPerSec = r.seconds > 0 ? static_cast<double>(r.messagesBothWays) / r.seconds : 0;
  r.recvStarved = recvStarved_;
  return r;
}

}  // namespace bw

uint64_t bandwidthPosts(const BandwidthParams& p) {
  return (p.warmup + p.iterations) * (p.mode == BwMode::kWindow ? p.window : 1);
}

BandwidthResult runBandwidth(transport::Device& device, std::vector<Link>& links,
                             Progress& progress, const BandwidthParams& params) {
  if (params.bytes == 0) throw UsageError("--size 0: bandwidth needs at least 1 byte");
  if (params.iterations == 0) throw UsageError("--iters 0: bandwidth needs at least 1 iteration");
  if (params.postList < 1 || params.postList > std::max<uint32_t>(1, params.window))
    throw UsageError(fmt::format("--post-list {}: out of range 1..{} ({})", params.postList,
                                 std::max<uint32_t>(1, params.window),
                                 params.mode == BwMode::kStream ? "the --tx-depth" : "the window"));
  if (params.clock == nullptr) throw Error("runBandwidth: BandwidthParams::clock is null");
  if (params.check && params.op == DataOp::kRead)
    throw UsageError("--check: not available for `bw --op read` (use `lat --op read --check`)");
  bw::BandwidthRun engine(device, links, progress, params);
  const DeschedProbe probe;  // outside the hot path: read before and after the size
  BandwidthResult r = engine.run();
  r.desched = probe.stop();
  return r;
}

}  // namespace rdmabench::engine
