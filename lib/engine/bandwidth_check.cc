// --check's untimed verification pass of a bandwidth run (bandwidth_run.h).
#include "engine/bandwidth_run.h"

#include <algorithm>
#include <string>

#include "engine/pattern.h"

namespace rdmabench::engine::bw {

using transport::PostResult;

// Untimed verification pass in one direction: `clientSends` says which side sends. Messages
// go one at a time, each with its own pattern; the target checks each and acks it.
void BandwidthRun::verifyPass(bool clientSends, BandwidthResult& r) {
  std::string phase = progress_.phase();
  progress_.setPhase(phase + (phase.empty() ? "" : ", ") + "verification pass (--check)");
  const bool iSend = clientSends == p_.sender;
  const uint64_t k = std::clamp<uint64_t>(measuredMsgs_, 1, kCheckMessages);
  for (size_t l = 0; l < links_.size(); ++l) {
    Link& link = links_[l];
    LinkState& s = state_[l];
    uint8_t* sendArea = link.region->data() + link.layout.sendOffset();
    const uint8_t* recvArea = link.region->data() + link.layout.recvOffset();
    // The target says when it is ready (its check of the timed run's last message is done,
    // so a verification write cannot overwrite it first).
    if (iSend) {
      uint64_t ready = s.got[kCheckAck];
      postCtrlRecv(l);
      while (s.got[kCheckAck] <= ready)
        poll();
    } else {
      postCtrlSend(l, kCheckAck);
    }
    for (uint64_t i = 0; i < k; ++i) {
      const uint64_t tag = (i + 1) << 8 | (p_.bytes & 0xff);
      if (iSend) {
        stampPattern(sendArea, len_, tag);
        uint64_t acks = s.got[kCheckAck];
        postCtrlRecv(l);
        while (postData(l, 1, s.posted) < 1)  // one post, signaled
          poll();
        if (!isSend_) postCtrlSend(l, kCheck);
        while (s.completed != s.posted || s.got[kCheckAck] <= acks)
          poll();
      } else {
        uint64_t before = isSend_ ? s.recvDone : s.got[kCheck];
        if (isSend_) {
          while (link.endpoint->postRecv(*link.region, link.layout.recvOffset(), len_,
                                         makeCtx(Ctx::kRecvData, static_cast<uint32_t>(l),
                                                 s.recvPosted)) == PostResult::kRetry)
            poll();
          ++s.recvPosted;
        } else {
          postCtrlRecv(l);
        }
        while ((isSend_ ? s.recvDone : s.got[kCheck]) <= before)
          poll();
        ++r.checked;
        if ((isSend_ && s.lastRecvBytes != len_) || !patternMatches(recvArea, len_, tag)) ++r.wrong;
        postCtrlSend(l, kCheckAck);
      }
    }
  }
  drainCtrlSends();
  progress_.setPhase(phase);
}

}  // namespace rdmabench::engine::bw
