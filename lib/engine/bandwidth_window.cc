// Window mode (osu_bw / osu_bibw): the timed loop of acked windows (bandwidth_run.h), run by the
// measurement core's window loop (timed_loop.h).
#include "engine/bandwidth_run.h"
#include "engine/timed_loop.h"

namespace rdmabench::engine::bw {

// Window mode data phase (osu_bw / osu_bibw). Returns t0.
int64_t BandwidthRun::dataWindow() {
  struct Ops {
    BandwidthRun& run;
    uint64_t total;
    void measuring() {
      run.progress_.setWarmup(false);
      if (run.sends_) run.startHandshake();
    }
    void post(uint64_t) {
      if (run.sends_)
        for (size_t l = 0; l < run.links_.size(); ++l)
          run.postWindow(l);
    }
    void wait(uint64_t it) {
      for (size_t l = 0; l < run.links_.size(); ++l)
        run.waitWindow(l, it, total);
      if (run.sends_ && it >= run.p_.warmup) run.gaps_.mark(run.now());  // common/stall.h
    }
  } ops{*this, p_.warmup + p_.iterations};
  return runWindows(
      WindowLoop{p_.warmup, p_.iterations}, [this] { return now(); }, ops);
}

// Waits for link l's window `it` of `total`: its sends complete, its receives in and (send, the
// sender) the target's acknowledgement; then the sender reposts the next acknowledgement's
// receive and the target acknowledges this window.
void BandwidthRun::waitWindow(size_t l, uint64_t it, uint64_t total) {
  LinkState& s = state_[l];
  const bool ackWanted = isSend_ && !p_.bidirectional && p_.sender;
  for (;;) {
    bool sendsDone = !sends_ || s.completed == s.posted;
    bool recvsDone = !(isSend_ && receives_) || s.recvDone >= (it + 1) * p_.window;
    bool ackDone = !ackWanted || s.got[kWindowAck] >= it + 1;
    if (sendsDone && recvsDone && ackDone) break;
    poll();
    if (isSend_ && receives_) replenish(l);
  }
  if (isSend_ && !p_.bidirectional) {
    if (p_.sender && it + 1 < total) postCtrlRecv(l);
    if (!p_.sender) {
      if (it + 1 == total && l + 1 == links_.size()) targetT1_ = now();
      postCtrlSend(l, kWindowAck);  // releases the sender's next window
    }
  }
}

}  // namespace rdmabench::engine::bw
