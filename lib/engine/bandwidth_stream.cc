// Stream mode (perftest): the timed loop that keeps the --tx-depth posts in flight.
#include <algorithm>

#include "engine/bandwidth_run.h"

namespace rdmabench::engine::bw {

// Stream mode data phase (perftest): `depth_` posts in flight per link. Returns t0.
int64_t BandwidthRun::dataStream() {
  int64_t t0 = now();
  if (sends_) {
    streamUntil(warmupMsgs_);  // warmup, drained
    progress_.setWarmup(false);
    t0 = startClock();
    nextMark_ = warmupMsgs_ + depth_;  // common/stall.h: a mark per depth_ completions
    streamUntil(totalMsgs_);
    nextMark_ = UINT64_MAX;
  }
  if (isSend_ && receives_) {
    if (warmSync_ && !sends_) {
      waitAll([&](LinkState& s) { return s.recvDone >= warmupMsgs_; });
      for (size_t l = 0; l < links_.size(); ++l)
        postCtrlSend(l, kWindowAck);
      progress_.setWarmup(false);
    }
    waitAll([&](LinkState& s) { return s.recvDone >= totalMsgs_; });
  }
  return t0;
}

// Posts until every link posted `upTo` messages and all of them completed.
void BandwidthRun::streamUntil(uint64_t upTo) {
  for (;;) {
    bool all = true;
    for (size_t l = 0; l < links_.size(); ++l) {
      LinkState& s = state_[l];
      if (postList_ == 1) streamSingles(l, s, upTo);
      if (runs_) streamRuns(l, s, upTo);
      // A batch of --post-list posts once that many slots are free (perftest -l).
      while (postList_ > 1 && !runs_ && s.posted < upTo) {
        const uint64_t want = std::min<uint64_t>(s.batchCap, upTo - s.posted);
        if (depth_ - (s.posted - s.completed) < want) break;
        const uint32_t got = postDataBatch(l, s, static_cast<uint32_t>(want), upTo - 1);
        if (got < want) {
          if (got > 0) s.batchCap = static_cast<uint32_t>(want) - got;  // the rest goes next
          break;
        }
        s.batchCap = postList_;
      }
      if (isSend_ && receives_) replenish(l);
      all = all && s.completed == upTo;
    }
    if (all) return;
    poll();
    if (state_[0].completed >= nextMark_) {  // untaken during warmup (nextMark_ = max)
      gaps_.mark(now());
      nextMark_ = state_[0].completed + depth_;
    }
  }
}

void BandwidthRun::streamSingles(size_t l, LinkState& s, uint64_t upTo) {
  transport::Endpoint& ep = *links_[l].endpoint;
  const transport::PreparedOp& op = dataOps_[l];
  const SignalRule rule = signal_;
  const uint64_t ctx = s.dataCtx, limit = s.completed + depth_, runLast = upTo - 1;
  const uint64_t end = std::min(limit, upTo);
  uint64_t since = s.sinceSignal, seq = s.posted;
  for (; seq < end; ++seq) {
    // Signaled: the run's last post, the --cq-mod-th, or the one that fills the depth.
    const bool signaled = rule.signals(seq, 1, since, runLast, limit);
    const transport::BatchPost b{ctx | (seq & kCtxSeqMask), signaled};
    if (ep.postBatch(op, &b, 1) == 0) break;
    since = signaled ? 0 : since + 1;
  }
  s.sinceSignal = since;
  s.posted = seq;
}

void BandwidthRun::streamRuns(size_t l, LinkState& s, uint64_t upTo) {
  transport::Endpoint& ep = *links_[l].endpoint;
  const transport::PreparedOp& op = dataOps_[l];
  const SignalRule rule = signal_;
  const uint64_t ctx = s.dataCtx, list = postList_, runLast = upTo - 1;
  const uint64_t limit = s.completed + depth_;  // posts may go up to (not including) this seq
  uint64_t posted = s.posted, since = s.sinceSignal, cap = s.batchCap;
  for (;;) {
    const uint64_t want = std::min(cap, upTo - posted);
    if (want == 0 || limit - posted < want) break;
    const uint64_t last = posted + want - 1;
    // The run's last post, --cq-mod reached, or less than a batch left (signal_rule.h).
    const bool signaled = rule.signals(last, want, since, runLast, limit);
    const uint32_t got =
        ep.postRun(op, ctx | (last & kCtxSeqMask), static_cast<uint32_t>(want), signaled);
    if (got < want) {  // cut by the transport's own queue: the rest goes next
      since += got;
      posted += got;
      if (got > 0) cap = want - got;
      break;
    }
    since = signaled ? 0 : since + want;
    posted += want;
    cap = list;
  }
  s.posted = posted;
  s.sinceSignal = since;
  s.batchCap = static_cast<uint32_t>(cap);
}

}  // namespace rdmabench::engine::bw
