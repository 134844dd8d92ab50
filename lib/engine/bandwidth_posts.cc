// Posts, receives, control messages and completions of a bandwidth run (bandwidth_run.h).
#include "engine/bandwidth_run.h"

#include <algorithm>
#include <cstring>

namespace rdmabench::engine::bw {

using transport::Completion;
using transport::PostResult;

int64_t BandwidthRun::startClock() {
  startHandshake();
  return now();
}

// One-sided ops: tells the target that measured ops start now.
void BandwidthRun::startHandshake() {
  if (warmSync_) {
    if (!isSend_)
      for (size_t l = 0; l < links_.size(); ++l)
        postCtrlSend(l, kWarm);
    waitAll([](LinkState& s) { return s.got[kWindowAck] >= 1; });
  }
  if (!isSend_ || p_.bidirectional)
    for (size_t l = 0; l < links_.size(); ++l)
      postCtrlSend(l, kStart);
  // Bidirectional: a start barrier, so both clocks start within one control message of each
  // other. Without it one side may time only the tail of the peer's stream and still count
  // all of its bytes (up to 2x the real sum; osu_bibw bounds this by its per-window waitall).
  if (p_.bidirectional) waitAll([](LinkState& s) { return s.got[kStart] >= 1; });
}

void BandwidthRun::onCompletion(const Completion& c) {
  LinkState& s = state_[ctxLink(c.context)];
  switch (ctxKind(c.context)) {
    case Ctx::kData:
      s.completed = std::max(s.completed, unwrapSeq(s.completed, ctxSeq(c.context)) + 1);
      break;
    case Ctx::kRecvData:
      s.lastRecvBytes = c.bytes;
      if (++s.recvDone == recvMark_ && !marked_) {
        marked_ = true;
        markNs_ = now();
      }
      if (s.recvDone == s.recvPosted && s.recvPosted < totalMsgs_) ++recvStarved_;
      break;
    case Ctx::kAckRecv: {
      const Link& link = links_[ctxLink(c.context)];
      uint64_t code = 0;
      std::memcpy(&code,
                  link.region->data() + link.layout.ctrlOffset() + kCtrlRecvBase +
                      8 * (ctxSeq(c.context) % kCtrlSlots),
                  sizeof code);
      ++s.ctrlDone;
      if (code > 0 && code < kCodes) ++s.got[code];
      if (code == kStart && !started_) {
        started_ = true;
        startNs_ = now();
      }
      if (code == kFin) finNs_ = now();
      if (code == kWarm) ++pendingWarm_[ctxLink(c.context)];
      break;
    }
    case Ctx::kAckSend:
      --s.ctrlSendsOut;
      break;
  }
}

void BandwidthRun::poll() {
  progress_.pollOnce([this](const Completion& c) { onCompletion(c); });
  if (!replying_)
    for (size_t l = 0; l < links_.size(); ++l)
      while (pendingWarm_[l] > 0) {  // the target answers kWarm: warmup data arrived
        replying_ = true;
        --pendingWarm_[l];
        postCtrlSend(l, kWindowAck);
        replying_ = false;
      }
}

// Posts up to `n` data messages on link l in one batch (--post-list), each signaled or not by
// the rule (signal_rule.h) as a post of its own; the room bound applies to the batch's last
// post only (the room is checked per batch). Returns how many the transport accepted (fewer:
// its queue is full, the caller polls).
uint32_t BandwidthRun::postData(size_t l, uint32_t n, uint64_t lastSeq) {
  LinkState& s = state_[l];
  transport::BatchPost* b = batch_.data();
  const uint64_t ctx0 = makeCtx(Ctx::kData, static_cast<uint32_t>(l), 0);
  const uint64_t seq0 = s.posted;
  const uint64_t limit = s.completed + depth_;
  uint64_t since = s.sinceSignal;
  for (uint32_t k = 0; k < n; ++k) {
    const uint64_t seq = seq0 + k;
    const bool signaled =
        signal_.signals(seq, 1, since, lastSeq, k + 1 == n ? limit : SignalRule::kNoLimit);
    b[k].context = ctx0 | (seq & kCtxSeqMask);
    b[k].signaled = signaled;
    since = signaled ? 0 : since + 1;
  }
  const uint32_t got = links_[l].endpoint->postBatch(dataOps_[l], b, n);
  if (got == n) {
    s.sinceSignal = since;
  } else {
    for (uint32_t k = 0; k < got; ++k)
      s.sinceSignal = b[k].signaled ? 0 : s.sinceSignal + 1;
  }
  s.posted += got;
  return got;
}

void BandwidthRun::postWindow(size_t l) {
  const uint64_t last = state_[l].posted + p_.window - 1;
  for (uint32_t k = 0; k < p_.window;) {
    const uint32_t want = std::min(postList_, p_.window - k);
    const uint32_t got = postDataBatch(l, state_[l], want, last);
    k += got;
    if (got < want) poll();  // the queue is full
  }
}

void BandwidthRun::replenish(size_t l) {
  Link& link = links_[l];
  LinkState& s = state_[l];
  while (s.recvPosted < totalMsgs_ && s.recvPosted - s.recvDone < prepost_) {
    // Bidirectional send: the peer's kStart comes after its warmup data, before its measured
    // data, so its receive sits at exactly that place in the queue (receives match in order).
    if (p_.bidirectional && s.recvPosted == warmupMsgs_ && !s.startRecvPosted) {
      s.startRecvPosted = true;
      postCtrlRecv(l);
    }
    uint64_t n = std::min<uint64_t>(
        {prepost_ - (s.recvPosted - s.recvDone), totalMsgs_ - s.recvPosted, kRecvBatch});
    if (p_.bidirectional && !s.startRecvPosted) n = std::min(n, warmupMsgs_ - s.recvPosted);
    for (uint64_t k = 0; k < n; ++k)
      recvBatch_[k].context = makeCtx(Ctx::kRecvData, static_cast<uint32_t>(l), s.recvPosted + k);
    const uint32_t got =
        link.endpoint->postBatch(recvOps_[l], recvBatch_.data(), static_cast<uint32_t>(n));
    s.recvPosted += got;
    if (got < n) return;
  }
  // Bidirectional send: the peer's kDone follows all its data, so its receive follows ours.
  if (p_.bidirectional && s.recvPosted == totalMsgs_ && !s.doneRecvPosted) {
    s.doneRecvPosted = true;
    postCtrlRecv(l);
  }
}

void BandwidthRun::postCtrlRecv(size_t l) {
  Link& link = links_[l];
  LinkState& s = state_[l];
  while (s.ctrlPosted - s.ctrlDone >= kCtrlSlots)
    poll();
  uint64_t slot = s.ctrlPosted % kCtrlSlots;
  uint64_t off = link.layout.ctrlOffset() + kCtrlRecvBase + 8 * slot;
  while (link.endpoint->postRecv(*link.region, off, kCtrlMessageBytes,
                                 makeCtx(Ctx::kAckRecv, static_cast<uint32_t>(l), slot)) ==
         PostResult::kRetry)
    poll();
  ++s.ctrlPosted;
}

void BandwidthRun::postCtrlSend(size_t l, Code code) {
  Link& link = links_[l];
  uint64_t off = link.layout.ctrlOffset() + 8 * static_cast<uint64_t>(code);
  while (link.endpoint->postSend(*link.region, off, kCtrlMessageBytes,
                                 makeCtx(Ctx::kAckSend, static_cast<uint32_t>(l), 0)) ==
         PostResult::kRetry)
    poll();
  ++state_[l].ctrlSendsOut;
}

void BandwidthRun::drainCtrlSends() {
  for (size_t l = 0; l < links_.size(); ++l)
    while (state_[l].ctrlSendsOut > 0)
      poll();
}

}  // namespace rdmabench::engine::bw
