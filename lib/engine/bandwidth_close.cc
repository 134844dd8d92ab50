// The closing handshakes of a bandwidth run, inside the timed interval (bandwidth_run.h).
#include "engine/bandwidth_run.h"

namespace rdmabench::engine::bw {

// Delivery, two-sided (send): the closing kDone handshake is inside the timed interval.
// Returns t1.
int64_t BandwidthRun::closeSend() {
  if (p_.bidirectional || (p_.mode == BwMode::kStream && !p_.sender)) {
    if (!p_.bidirectional) targetT1_ = now();
    for (size_t l = 0; l < links_.size(); ++l)
      postCtrlSend(l, kDone);
  }  // (uni window mode: the receiver's last window ack went out in the loop)
  if (sends_)
    waitAll([&](LinkState& s) {
      return s.got[kDone] >= 1 || (!p_.bidirectional && p_.mode == BwMode::kWindow);
    });
  return now();
}

// One-sided (RMA write / read): the initiator sends kFin after its last op; a write target
// answers kDone once every fin arrived (ordered after the writes), which ends the writer's
// interval; a reader's interval ends at its last read completion. The target (no data
// completions at all) waits passively. Returns t1 (0 on a pure target: it times start..fin).
int64_t BandwidthRun::closeOneSided() {
  int64_t t1 = 0;
  if (sends_ && p_.op == DataOp::kRead) t1 = now();
  if (sends_)
    for (size_t l = 0; l < links_.size(); ++l)
      postCtrlSend(l, kFin);
  progress_.setPassive(!sends_);
  bool doneSent = false, t1Set = false;
  for (;;) {
    bool finAll = true, doneAll = true;
    for (auto& s : state_) {
      finAll = finAll && s.got[kFin] >= 1;
      doneAll = doneAll && s.got[kDone] >= 1;
    }
    if (receives_ && finAll && !doneSent && p_.op == DataOp::kWrite) {
      for (size_t l = 0; l < links_.size(); ++l)
        postCtrlSend(l, kDone);
      doneSent = true;
    }
    bool senderDone = !sends_ || p_.op == DataOp::kRead || doneAll;
    if (sends_ && p_.op == DataOp::kWrite && senderDone && !t1Set) {
      t1 = now();
      t1Set = true;
    }
    if ((!receives_ || finAll) && senderDone) break;
    poll();
  }
  progress_.setPassive(false);
  if (p_.bidirectional && p_.op == DataOp::kWrite) t1 = now();
  return t1;
}

}  // namespace rdmabench::engine::bw
