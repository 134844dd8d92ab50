// Window mode (osu_bw / osu_bibw): the timed loop of acked windows (bandwidth_run.h).
#include "engine/bandwidth_run.h"

namespace rdmabench::engine::bw {

// Window mode data phase (osu_bw / osu_bibw). Returns t0.
int64_t BandwidthRun::dataWindow() {
  int64_t t0 = now();
  const uint64_t total = p_.warmup + p_.iterations;
  for (uint64_t it = 0; it < total; ++it) {
    if (it == p_.warmup) {
      progress_.setWarmup(false);
      if (sends_) t0 = startClock();
    }
    if (sends_)
      for (size_t l = 0; l < links_.size(); ++l)
        postWindow(l);
    for (size_t l = 0; l < links_.size(); ++l) {
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
  }
  return t0;
}

}  // namespace rdmabench::engine::bw
