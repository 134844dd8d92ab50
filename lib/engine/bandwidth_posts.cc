// Posts, receives, control messages and completions of a bandwidth run (bandwidth_run.h).
#include "engine/bandwidth_run.h"

#include <algorithm>
#include <cstring>

namespace rdmabench::engine::bw {

using transport::Completion;
using transport::PostResult;

// One-sided ops: tells the target that measured ops start now. Returns t0.
int64_t BandwidthRun::startClock() {
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
  return now();
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

// Posts one data message on link l; false when the queue is full (the caller polls).
bool BandwidthRun::postOne(size_t l, bool forceSignal) {
  Link& link = links_[l];
  LinkState& s = state_[l];
  const uint64_t so = link.layout.sendOffset(), ro = link.layout.recvOffset();
  bool signaled = forceSignal || s.sinceSignal + 1 >= cqMod_;
  uint64_t ctx = makeCtx(Ctx::kData, static_cast<uint32_t>(l), s.posted);
  PostResult r;
  switch (p_.op) {
    case DataOp::kSend:
      r = link.endpoint->postSend(*link.region, so, len_, ctx, signaled);
      break;
    case DataOp::kWrite:
      r = link.endpoint->postWrite(*link.region, so, len_, link.remote, ro, ctx, signaled);
      break;
    case DataOp::kRead:
    default:
      signaled = true;  // reads complete one by one (data lands locally)
      r = link.endpoint->postRead(*link.region, ro, len_, link.remote, so, ctx);
      break;
  }
  if (r != PostResult::kOk) return false;
  s.sinceSignal = signaled ? 0 : s.sinceSignal + 1;
  ++s.posted;
  return true;
}

void BandwidthRun::postWindow(size_t l) {
  for (uint32_t k = 0; k < p_.window; ++k)
    while (!postOne(l, k + 1 == p_.window))
      poll();
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
    if (link.endpoint->postRecv(*link.region, link.layout.recvOffset(), len_,
                                makeCtx(Ctx::kRecvData, static_cast<uint32_t>(l), s.recvPosted)) ==
        PostResult::kRetry)
      return;
    ++s.recvPosted;
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
