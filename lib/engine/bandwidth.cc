#include "engine/bandwidth.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/units.h"
#include "engine/pattern.h"

namespace rdmabench::engine {
namespace {

using transport::Completion;
using transport::PostResult;

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
constexpr uint64_t kCtrlRecvBase = 64;

struct LinkState {
  uint64_t posted = 0;     // data posts (64-bit; contexts carry the low 40 bits)
  uint64_t completed = 0;  // data posts known complete
  uint64_t sinceSignal = 0;
  uint64_t recvPosted = 0;  // data receives posted
  uint64_t recvDone = 0;    // data receives completed
  uint32_t lastRecvBytes = 0;
  uint64_t ctrlPosted = 0, ctrlDone = 0;
  uint64_t ctrlSendsOut = 0;
  bool doneRecvPosted = false;   // bidirectional send: the kDone receive follows the data ones
  bool startRecvPosted = false;  // bidirectional send: the kStart receive follows the warmup ones
  uint64_t got[kCodes] = {};
};

class Bandwidth {
 public:
  Bandwidth(transport::Device& device, std::vector<Link>& links, Progress& progress,
            const BandwidthParams& p)
      : links_(links),
        progress_(progress),
        p_(p),
        len_(static_cast<uint32_t>(p.bytes)),
        state_(links.size()),
        isSend_(p.op == BwOp::kSend),
        sends_(p.bidirectional || p.sender),
        receives_(p.bidirectional || !p.sender) {
    transport::Caps caps = device.caps();
    uint32_t sq = caps.maxSendQueue ? caps.maxSendQueue : 128;
    uint32_t rq = caps.maxRecvQueue ? caps.maxRecvQueue : 512;
    depth_ = std::max<uint32_t>(1, p.window);
    cqMod_ = std::max<uint32_t>(1, std::min({p.cqModeration, std::max(1u, sq / 2), depth_}));
    if (isSend_ && receives_ && p.mode == BwMode::kWindow && p.window + 1 > rq)
      throw UsageError(
          fmt::format("--window {}: exceeds the receive queue depth {} of {} "
                      "(raise --rx-depth or lower --window)",
                      p.window, rq, device.name()));
    prepost_ = p.mode == BwMode::kWindow ? std::min<uint64_t>(2ull * p.window, rq - 2) : rq - 2;
    prepost_ = std::max<uint64_t>(prepost_, 1);
    perMsgs_ = p.mode == BwMode::kWindow ? p.window : 1;
    warmupMsgs_ = p.warmup * perMsgs_;
    totalMsgs_ = (p.warmup + p.iterations) * perMsgs_;
    measuredMsgs_ = p.iterations * perMsgs_;
    recvMark_ = warmupMsgs_ > 0 ? warmupMsgs_ : 1;
    // With warmup, the clock starts only once the warmup data was delivered (a completion may
    // precede delivery): one-sided ops ask the target (kWarm -> kWindowAck); stream-mode send
    // has the receiver ack its last warmup message. Window-mode send acks every window anyway.
    warmSync_ = warmupMsgs_ > 0 && (p.op == BwOp::kWrite ||
                                    (isSend_ && !p.bidirectional && p.mode == BwMode::kStream));
    pendingWarm_.assign(links.size(), 0);
    for (auto& link : links_)
      for (uint64_t c = 1; c < kCodes; ++c)
        std::memcpy(link.region->data() + link.layout.ctrlOffset() + 8 * c, &c, sizeof c);
  }

  BandwidthResult run() {
    const uint64_t runTag = ~p_.bytes;  // the pattern every timed message carries (--check)
    if (p_.check && sends_)
      for (auto& link : links_)
        stampPattern(link.region->data() + link.layout.sendOffset(), len_, runTag);
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
        if (sends_ && p_.op == BwOp::kWrite) postCtrlRecv(l);  // kDone
        if (sends_ && warmSync_) postCtrlRecv(l);
      }
    }
    if (p_.ready) p_.ready();

    int64_t t0 = 0, t1 = 0;
    if (sends_ || isSend_) t0 = p_.mode == BwMode::kWindow ? dataWindow() : dataStream();
    // Delivery: the closing handshake is inside the timed interval.
    if (isSend_) {
      if (p_.bidirectional || (p_.mode == BwMode::kStream && !p_.sender)) {
        if (!p_.bidirectional) targetT1_ = now();
        for (size_t l = 0; l < links_.size(); ++l)
          postCtrlSend(l, kDone);
      }  // (uni window mode: the receiver's last window ack went out in the loop)
      if (sends_)
        waitAll([&](LinkState& s) {
          return s.got[kDone] >= 1 || (!p_.bidirectional && p_.mode == BwMode::kWindow);
        });
      t1 = now();
    } else {
      if (sends_ && p_.op == BwOp::kRead) t1 = now();
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
        if (receives_ && finAll && !doneSent && p_.op == BwOp::kWrite) {
          for (size_t l = 0; l < links_.size(); ++l)
            postCtrlSend(l, kDone);
          doneSent = true;
        }
        bool senderDone = !sends_ || p_.op == BwOp::kRead || doneAll;
        if (sends_ && p_.op == BwOp::kWrite && senderDone && !t1Set) {
          t1 = now();
          t1Set = true;
        }
        if ((!receives_ || finAll) && senderDone) break;
        poll();
      }
      progress_.setPassive(false);
      if (p_.bidirectional && p_.op == BwOp::kWrite) t1 = now();
    }
    drainCtrlSends();

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
    return r;
  }

 private:
  int64_t now() const { return p_.clock ? p_.clock() : nowNs(); }

  // Window mode data phase (osu_bw / osu_bibw). Returns t0.
  int64_t dataWindow() {
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

  // Stream mode data phase (perftest): `depth_` posts in flight per link. Returns t0.
  int64_t dataStream() {
    int64_t t0 = now();
    if (sends_) {
      streamUntil(warmupMsgs_);  // warmup, drained
      progress_.setWarmup(false);
      t0 = startClock();
      streamUntil(totalMsgs_);
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
  void streamUntil(uint64_t upTo) {
    for (;;) {
      bool all = true;
      for (size_t l = 0; l < links_.size(); ++l) {
        LinkState& s = state_[l];
        while (s.posted < upTo && s.posted - s.completed < depth_) {
          if (!postOne(l, s.posted + 1 == upTo)) break;
        }
        if (isSend_ && receives_) replenish(l);
        all = all && s.completed == upTo;
      }
      if (all) return;
      poll();
    }
  }

  // One-sided ops: tells the target that measured ops start now. Returns t0.
  int64_t startClock() {
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

  template <typename Pred>
  void waitAll(Pred pred) {
    for (size_t l = 0; l < links_.size(); ++l)
      while (!pred(state_[l])) {
        poll();
        if (isSend_ && receives_) replenish(l);
      }
  }

  void onCompletion(const Completion& c) {
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

  void poll() {
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
  bool postOne(size_t l, bool forceSignal) {
    Link& link = links_[l];
    LinkState& s = state_[l];
    const uint64_t so = link.layout.sendOffset(), ro = link.layout.recvOffset();
    bool signaled = forceSignal || s.sinceSignal + 1 >= cqMod_;
    uint64_t ctx = makeCtx(Ctx::kData, static_cast<uint32_t>(l), s.posted);
    PostResult r;
    switch (p_.op) {
      case BwOp::kSend:
        r = link.endpoint->postSend(*link.region, so, len_, ctx, signaled);
        break;
      case BwOp::kWrite:
        r = link.endpoint->postWrite(*link.region, so, len_, link.remote, ro, ctx, signaled);
        break;
      case BwOp::kRead:
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

  void postWindow(size_t l) {
    for (uint32_t k = 0; k < p_.window; ++k)
      while (!postOne(l, k + 1 == p_.window))
        poll();
  }

  void replenish(size_t l) {
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
                                  makeCtx(Ctx::kRecvData, static_cast<uint32_t>(l),
                                          s.recvPosted)) == PostResult::kRetry)
        return;
      ++s.recvPosted;
    }
    // Bidirectional send: the peer's kDone follows all its data, so its receive follows ours.
    if (p_.bidirectional && s.recvPosted == totalMsgs_ && !s.doneRecvPosted) {
      s.doneRecvPosted = true;
      postCtrlRecv(l);
    }
  }

  void postCtrlRecv(size_t l) {
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

  void postCtrlSend(size_t l, Code code) {
    Link& link = links_[l];
    uint64_t off = link.layout.ctrlOffset() + 8 * static_cast<uint64_t>(code);
    while (link.endpoint->postSend(*link.region, off, kCtrlMessageBytes,
                                   makeCtx(Ctx::kAckSend, static_cast<uint32_t>(l), 0)) ==
           PostResult::kRetry)
      poll();
    ++state_[l].ctrlSendsOut;
  }

  void drainCtrlSends() {
    for (size_t l = 0; l < links_.size(); ++l)
      while (state_[l].ctrlSendsOut > 0)
        poll();
  }

  // Untimed verification pass in one direction: `clientSends` says which side sends. Messages
  // go one at a time, each with its own pattern; the target checks each and acks it.
  void verifyPass(bool clientSends, BandwidthResult& r) {
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
          while (!postOne(l, true))
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
          if ((isSend_ && s.lastRecvBytes != len_) || !patternMatches(recvArea, len_, tag))
            ++r.wrong;
          postCtrlSend(l, kCheckAck);
        }
      }
    }
    drainCtrlSends();
    progress_.setPhase(phase);
  }

  std::vector<Link>& links_;
  Progress& progress_;
  const BandwidthParams& p_;
  uint32_t len_;
  std::vector<LinkState> state_;
  const bool isSend_, sends_, receives_;
  uint32_t depth_ = 1;
  uint32_t cqMod_ = 1;
  uint64_t prepost_ = 0;
  uint64_t perMsgs_ = 1, warmupMsgs_ = 0, totalMsgs_ = 0, measuredMsgs_ = 0;
  bool warmSync_ = false, replying_ = false;
  std::vector<uint64_t> pendingWarm_;
  // Target-side clock marks.
  uint64_t recvMark_ = 0;
  bool marked_ = false, started_ = false;
  int64_t markNs_ = 0, startNs_ = 0, finNs_ = 0, targetT1_ = 0;
};

}  // namespace

BwOp parseBwOp(std::string_view op) {
  if (op == "send" || op == "tagged") return BwOp::kSend;
  if (op == "write") return BwOp::kWrite;
  if (op == "read") return BwOp::kRead;
  throw UsageError(fmt::format("--op {}: the bandwidth engine supports send, write and read", op));
}

BwMode parseBwMode(std::string_view mode) {
  if (mode == "window") return BwMode::kWindow;
  if (mode == "stream") return BwMode::kStream;
  throw UsageError(fmt::format("--mode {}: unknown (valid: window, stream)", mode));
}

const char* toString(BwMode mode) {
  return mode == BwMode::kStream ? "stream" : "window";
}

uint64_t bandwidthPosts(const BandwidthParams& p) {
  return (p.warmup + p.iterations) * (p.mode == BwMode::kWindow ? p.window : 1);
}

BandwidthResult runBandwidth(transport::Device& device, std::vector<Link>& links,
                             Progress& progress, const BandwidthParams& params) {
  if (params.bytes == 0) throw UsageError("--size 0: bandwidth needs at least 1 byte");
  if (params.iterations == 0) throw UsageError("--iters 0: bandwidth needs at least 1 iteration");
  if (params.check && params.op == BwOp::kRead)
    throw UsageError("--check: not available for `bw --op read` (use `lat --op read --check`)");
  Bandwidth engine(device, links, progress, params);
  const DeschedProbe probe;  // outside the hot path: read before and after the size
  BandwidthResult r = engine.run();
  r.desched = probe.stop();
  return r;
}

}  // namespace rdmabench::engine
