#pragma once
// Internal to lib/engine: the state of one bandwidth run (bandwidth.h) and its parts, one file
// per method so each timed loop is one short function found by name:
//   bandwidth.cc          setup, run() (the order of the phases), the result
//   bandwidth_window.cc   BandwidthRun::dataWindow: osu_bw / osu_bibw windows
//   bandwidth_stream.cc   BandwidthRun::dataStream: perftest's stream of posts in flight
//   bandwidth_close.cc    the closing handshakes inside the timed interval: closeSend (two-sided
//                         delivery acks), closeOneSided (RMA: the initiator's fin and the target)
//   bandwidth_posts.cc    posts, receives, control messages, completions, startClock
//   bandwidth_check.cc    --check's untimed verification pass
// Not a public API. Thread-safety: one run per thread.

#include <cstdint>
#include <vector>

#include "transport/transport.h"

#include "common/clock.h"
#include "common/stall.h"
#include "engine/bandwidth.h"
#include "engine/signal_rule.h"

namespace rdmabench::engine::bw {

// Control messages (kCtrlMessageBytes each) carry one code. Send slots: control area + 8 * code
// (constant content); receive slots: a ring of kCtrlSlots at control area + kCtrlRecvBase.
enum Code : uint64_t {
  kWindowAck = 1,  // receiver -> sender: a window arrived (window mode, send)
  kStart = 2,      // initiator -> target: the next one-sided op is the first measured one
  kFin = 3,        // initiator -> target: all one-sided ops are posted / complete
  kDone = 4,       // target -> initiator: everything up to here arrived (delivery)
  kCheck = 5,      // writer -> target: verification write k is complete
  kCheckAck = 6,   // target -> sender: verification message k checked
  kWarm = 7,       // writer -> target: warmup writes are posted (target answers kWindowAck)
  kCodes = 8
};
constexpr uint32_t kCtrlSlots = 16;
constexpr uint32_t kRecvBatch = 32;  // data receives reposted per call, at most
constexpr uint64_t kCtrlRecvBase = 64;
constexpr uint64_t kCtxSeqMask = (1ull << 40) - 1;  // the sequence bits of a context (link.h)

struct LinkState {
  uint64_t dataCtx = 0;    // makeCtx(Ctx::kData, link, 0): a data post's context | its sequence
  uint64_t posted = 0;     // data posts (64-bit; contexts carry the low 40 bits)
  uint64_t completed = 0;  // data posts known complete
  uint64_t sinceSignal = 0;
  // Stream mode: the size of the next batch, --post-list, or what is left of a batch the
  // transport took only in part (its own queue was fuller than the engine's count, e.g. a
  // control send in it). The rest goes next as a batch of its own whose last post is signaled
  // by the room rule, so a cut batch cannot leave only unsignaled posts in flight (a stream
  // that would wait forever for a completion). Set by the constructor.
  uint32_t batchCap = 1;
  uint64_t recvPosted = 0;  // data receives posted
  uint64_t recvDone = 0;    // data receives completed
  uint32_t lastRecvBytes = 0;
  uint64_t ctrlPosted = 0, ctrlDone = 0;
  uint64_t ctrlSendsOut = 0;
  bool doneRecvPosted = false;   // bidirectional send: the kDone receive follows the data ones
  bool startRecvPosted = false;  // bidirectional send: the kStart receive follows the warmup ones
  uint64_t got[kCodes] = {};
};

// One run of runBandwidth: the parameters, every link's counters and the clock marks.
class BandwidthRun {
 public:
  BandwidthRun(transport::Device& device, std::vector<Link>& links, Progress& progress,
               const BandwidthParams& p);
  BandwidthResult run();

 private:
  int64_t now() const { return p_.clock(); }  // runBandwidth refused a null clock

  // Setup and result (bandwidth.cc).
  void prepareOps();      // dataOps_ / recvOps_ (bandwidth.cc)
  void prepostControl();  // control receives each role needs before the data phase
  // Stream mode: a link's share of the device's shared operation slots for its data receives.
  uint64_t fairShare(const transport::Caps& caps, size_t links) const;
  BandwidthResult result(int64_t t0, int64_t t1, uint64_t runTag);
  // Timed data phases; each returns t0, the start of the measured interval.
  int64_t dataWindow();  // bandwidth_window.cc
  void waitWindow(size_t l, uint64_t it, uint64_t total);
  int64_t dataStream();  // bandwidth_stream.cc
  void streamUntil(uint64_t upTo);
  // Stream mode, --post-list 1: the posts that fit below the depth and `upTo`, one each, in a
  // loop that keeps its counters in registers (the signaling rule of signal_rule.h, as
  // postOneData). Stops at the first refused post.
  void streamSingles(size_t l, LinkState& s, uint64_t upTo);
  // Stream mode with runs_: the batches that fit, as runs (postRunData's rules), in one loop
  // with its counters in registers. Stops at the first batch that does not fit or is cut.
  void streamRuns(size_t l, LinkState& s, uint64_t upTo);
  // Closing handshakes (bandwidth_close.cc); each returns t1, the end of the interval.
  int64_t closeSend();
  int64_t closeOneSided();
  // Posts and control messages (bandwidth_posts.cc).
  void startHandshake();  // one-sided / bidirectional: the start marker before t0
  int64_t startClock();   // startHandshake(), then t0
  // Polls until pred holds for every link. Every link's receives are replenished meanwhile, not
  // only those of the link waited for: links that share one connection underneath (ofi rxm: one
  // socket per peer) stall all of them once one link's receives run dry while another is waited
  // for (bw -t ofi -q 2 --mode stream stalled until --timeout).
  template <typename Pred>
  void waitAll(Pred pred) {
    for (size_t l = 0; l < links_.size(); ++l)
      while (!pred(state_[l])) {
        poll();
        if (isSend_ && receives_)
          for (size_t k = 0; k < links_.size(); ++k)
            replenish(k);
      }
  }
  void onCompletion(const transport::Completion& c);
  void poll();
  uint32_t postData(size_t l, uint32_t n, uint64_t lastSeq);
  // postData for a batch of one (--post-list 1, the default), inline in the stream loop: the
  // same signaling rule (signal_rule.h) without the batch array, the loop and the partial-count
  // bookkeeping.
  uint32_t postOneData(size_t l, LinkState& s, uint64_t lastSeq) {
    const uint64_t seq = s.posted;
    const bool signaled = signal_.signals(seq, 1, s.sinceSignal, lastSeq, s.completed + depth_);
    const transport::BatchPost b{s.dataCtx | (seq & kCtxSeqMask), signaled};
    if (links_[l].endpoint->postBatch(dataOps_[l], &b, 1) == 0) return 0;
    s.sinceSignal = signaled ? 0 : s.sinceSignal + 1;
    s.posted = seq + 1;
    return 1;
  }
  // A batch of n > 1 as a run (transport.h: Endpoint::postRun, perftest -l): one context, the
  // sequence number of the run's last post (whose completion retires the whole batch), and at
  // most one signaled post, the last: the engine pays per batch, not per message. Signaled by
  // the rule (signal_rule.h) for a batch of n: it holds `lastSeq`, reaches --cq-mod (so a
  // completion may come up to n - 1 posts after the cq-mod-th, at the end of its batch), or
  // leaves less than a batch of room.
  uint32_t postRunData(size_t l, LinkState& s, uint32_t n, uint64_t lastSeq) {
    const uint64_t last = s.posted + n - 1;
    const bool signaled = signal_.signals(last, n, s.sinceSignal, lastSeq, s.completed + depth_);
    const uint32_t got =
        links_[l].endpoint->postRun(dataOps_[l], s.dataCtx | (last & kCtxSeqMask), n, signaled);
    s.sinceSignal = got == n && signaled ? 0 : s.sinceSignal + got;
    s.posted += got;
    return got;
  }
  // The post of a batch of n: postOneData, postRunData (runs_) or postData.
  uint32_t postDataBatch(size_t l, LinkState& s, uint32_t n, uint64_t lastSeq) {
    if (n == 1) return postOneData(l, s, lastSeq);
    return runs_ ? postRunData(l, s, n, lastSeq) : postData(l, n, lastSeq);
  }
  void postWindow(size_t l);
  void replenish(size_t l);
  void postCtrlRecv(size_t l);
  void postCtrlSend(size_t l, Code code);
  void drainCtrlSends();
  // --check (bandwidth_check.cc).
  void verifyPass(bool clientSends, BandwidthResult& r);

  std::vector<Link>& links_;
  Progress& progress_;
  const BandwidthParams& p_;
  uint32_t len_;
  std::vector<LinkState> state_;
  // Prepared once per size (transport.h): each link's data op and data receive.
  std::vector<transport::PreparedOp> dataOps_, recvOps_;
  std::vector<transport::BatchPost> batch_, recvBatch_;  // the next batch's contexts
  const bool isSend_, sends_, receives_;
  uint32_t depth_ = 1;
  uint32_t cqMod_ = 1;
  uint32_t postList_ = 1;
  SignalRule signal_;  // {cqMod_, postList_}: which post asks for a completion
  // Batches go as runs (postRunData): --post-list 2..kMaxRunPosts, at most one --cq-mod signal
  // per batch (cq-mod >= post list), not reads (each read completes).
  bool runs_ = false;
  uint64_t prepost_ = 0;
  uint64_t perMsgs_ = 1, warmupMsgs_ = 0, totalMsgs_ = 0, measuredMsgs_ = 0;
  bool warmSync_ = false, replying_ = false;
  std::vector<uint64_t> pendingWarm_;
  // Target-side clock marks.
  uint64_t recvMark_ = 0;
  bool marked_ = false, started_ = false;
  int64_t markNs_ = 0, startNs_ = 0, finNs_ = 0, targetT1_ = 0;
  // Stalls (common/stall.h): the sender's marks inside the timed interval; stream mode marks
  // when the first connection's completions reach nextMark_ (then nextMark_ += depth_).
  GapWatch gaps_;
  uint64_t nextMark_ = UINT64_MAX;
  uint64_t recvStarved_ = 0;  // BandwidthResult::recvStarved
};

}  // namespace rdmabench::engine::bw
