#include "engine/pingpong.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"
#include "common/measure_clock.h"
#include "engine/pattern.h"
#include "engine/signal_rule.h"
#include "engine/timed_loop.h"

namespace rdmabench::engine {
namespace {

using transport::Completion;
using transport::PostResult;

class PingPong {
 public:
  PingPong(transport::Device& device, Link& link, Progress& progress, const PingPongParams& p)
      : ep_(*link.endpoint),
        mr_(*link.region),
        link_(link),
        progress_(progress),
        p_(p),
        len_(static_cast<uint32_t>(p.bytes)),
        now_(p.clock ? p.clock : &measureNs) {
    // Unsignaled sends hold send-queue slots until a later signaled one completes: keep at most
    // half the queue unsignaled (perftest caps cq_mod by tx_depth the same way).
    uint32_t sq = device.caps().maxSendQueue;
    signalEvery_ = std::max<uint32_t>(1, std::min<uint32_t>(p.signalEvery, std::max(1u, sq / 2)));
    spinsPerPoll_ =
        device.caps().rmaNeedsTargetProgress ? 1 : std::max<uint32_t>(1, p.spinsPerPoll);
  }

  auto handler() {
    return [this](const Completion& c) {
      switch (ctxKind(c.context)) {
        case Ctx::kRecvData:
        case Ctx::kAckRecv:
          gotRecv_ = true;
          recvBytes_ = c.bytes;
          break;
        case Ctx::kData:
        case Ctx::kAckSend:
          // Only signaled posts are counted (a backend may report unsignaled ones too).
          if (ctxSeq(c.context) == kSignaled) --outstanding_;
          break;
      }
    };
  }

  PingPongResult run() {
    PingPongResult r;
    samples_ = p_.samplesInto ? p_.samplesInto : &r.samples;
    samples_->reserve(samples_->count() + p_.iterations);
    int64_t start = now_();
    switch (p_.op) {
      case DataOp::kSend:
        p_.initiator ? sendInitiator(r) : sendResponder();
        break;
      case DataOp::kWrite:
        writeLoop(r);
        break;
      case DataOp::kRead:
        p_.initiator ? readInitiator(r) : passiveUntilFin();
        break;
    }
    // Warmup excluded, as bandwidth: from the first measured iteration on.
    if (measureStartNs_ != INT64_MIN) start = measureStartNs_;
    r.seconds = static_cast<double>(now_() - start) / 1e9;
    while (outstanding_ > 0)
      progress_.pollOnce(handler());
    return r;
  }

 private:
  void postRecv(uint64_t offset, uint32_t len, Ctx kind) {
    while (ep_.postRecv(mr_, offset, len, makeCtx(kind, 0, 0)) == PostResult::kRetry)
      progress_.pollOnce(handler());
  }
  // Signaled posts carry kSignaled in the context's sequence field.
  static constexpr uint64_t kSignaled = 1;

  // Moderated completions (ib_send_lat's cq_mod), the engines' rule (signal_rule.h): the data
  // post of iteration `i` of `total` is signaled every signalEvery_ posts and for the last one,
  // so each size ends with an empty send queue once run() has drained `outstanding_`. One post
  // is in flight at a time: no room bound.
  bool signalFor(uint64_t i, uint64_t total) const {
    return SignalRule{signalEvery_, 1}.signals(i, 1, i % signalEvery_, total - 1,
                                               SignalRule::kNoLimit);
  }
  void postSend(uint64_t offset, uint32_t len, Ctx kind, bool signaled = true) {
    const uint64_t ctx = makeCtx(kind, 0, signaled ? kSignaled : 0);
    while (ep_.postSend(mr_, offset, len, ctx, signaled) == PostResult::kRetry)
      progress_.pollOnce(handler());
    if (signaled) ++outstanding_;
  }
  void ready() {
    if (p_.ready) p_.ready();
  }
  void waitRecv() {
    while (!gotRecv_)
      progress_.pollOnce(handler());
    gotRecv_ = false;
  }

  // The measurement core's ping-pong loop (timed_loop.h); every loop of this file that times
  // iterations runs it.
  template <class Ops>
  void timedIterations(Ops& ops, bool halfRoundTrip) {
    const int64_t start =
        runIterations(IterationLoop{p_.warmup, p_.iterations, halfRoundTrip}, now_, ops);
    if (start != INT64_MIN) measureStartNs_ = start;
  }
  void measuring() { progress_.setWarmup(false); }

  void sendInitiator(PingPongResult& r) {
    const uint64_t so = link_.layout.sendOffset(), ro = link_.layout.recvOffset();
    const uint64_t total = p_.warmup + p_.iterations;
    struct Ops : IterationHooks {
      PingPong& pp;
      PingPongResult& r;
      uint64_t so, ro, total;
      uint8_t* sendArea;
      const uint8_t* recvArea;
      void prepare(uint64_t i) {
        if (pp.p_.check) stampPattern(sendArea, pp.len_, i);
      }
      void measuring(int64_t) { pp.measuring(); }
      void exchange(uint64_t i) {
        pp.postSend(so, pp.len_, Ctx::kData, pp.signalFor(i, total));
        pp.waitRecv();
      }
      void finish(uint64_t i) {
        if (i + 1 < total) pp.postRecv(ro, pp.len_, Ctx::kRecvData);
        if (pp.p_.check &&
            (pp.recvBytes_ != pp.len_ || std::memcmp(sendArea, recvArea, pp.len_) != 0))
          ++r.checkErrors;
      }
      void record(int64_t ns) { pp.samples_->add(ns); }
    } ops{{}, *this, r, so, ro, total, mr_.data() + so, mr_.data() + ro};
    postRecv(ro, len_, Ctx::kRecvData);
    ready();
    timedIterations(ops, /*halfRoundTrip=*/true);
  }

  void sendResponder() {
    const uint64_t ro = link_.layout.recvOffset();
    const uint64_t total = p_.warmup + p_.iterations;
    postRecv(ro, len_, Ctx::kRecvData);
    ready();
    for (uint64_t i = 0; i < total; ++i) {
      waitRecv();
      if (i == p_.warmup) {
        measureStartNs_ = now_();
        progress_.setWarmup(false);
      }
      if (i + 1 < total) postRecv(ro, len_, Ctx::kRecvData);
      // Echo from the receive area: the next message cannot arrive before this one is read.
      postSend(ro, recvBytes_, Ctx::kData, signalFor(i, total));
    }
  }

  // --check: each side stamps the payload of iteration i (all but the flag byte) before it
  // writes, and verifies what arrived after the flag byte flipped (the responder's check is
  // inside the initiator's round trip: check mode costs one compare of `bytes` per iteration).
  void writeLoop(PingPongResult& r) {
    ready();  // no receives: the peer writes into the zeroed receive area
    p_.initiator ? writeInitiator(r) : writeResponder(r);
  }

  void writeInitiator(PingPongResult& r) {
    const uint64_t so = link_.layout.sendOffset(), ro = link_.layout.recvOffset();
    struct Ops : IterationHooks {
      PingPong& pp;
      PingPongResult& r;
      uint64_t so, ro, total;
      volatile uint8_t* recvLast;
      uint8_t* sendLast;
      uint8_t v = 0;
      void prepare(uint64_t i) {
        if (pp.p_.check) stampPattern(pp.mr_.data() + so, pp.len_ - 1, i);
        v = static_cast<uint8_t>(i % 255 + 1);
        *sendLast = v;
      }
      void measuring(int64_t) { pp.measuring(); }
      void exchange(uint64_t i) {
        pp.postWrite(so, ro, pp.signalFor(i, total));
        pp.spinFor(recvLast, v);
      }
      void finish(uint64_t i) {
        if (pp.p_.check && !patternMatches(pp.mr_.data() + ro, pp.len_ - 1, i)) ++r.checkErrors;
      }
      void record(int64_t ns) { pp.samples_->add(ns); }
    } ops{{},
          *this,
          r,
          so,
          ro,
          p_.warmup + p_.iterations,
          mr_.data() + ro + len_ - 1,
          mr_.data() + so + len_ - 1};
    timedIterations(ops, /*halfRoundTrip=*/true);
  }

  // The responder is not timed: it answers each write once the flag byte flipped.
  void writeResponder(PingPongResult& r) {
    const uint64_t so = link_.layout.sendOffset(), ro = link_.layout.recvOffset();
    volatile uint8_t* recvLast = mr_.data() + ro + len_ - 1;
    uint8_t* sendLast = mr_.data() + so + len_ - 1;
    const uint8_t* recvArea = mr_.data() + ro;
    const uint64_t total = p_.warmup + p_.iterations;
    for (uint64_t i = 0; i < total; ++i) {
      const uint8_t v = static_cast<uint8_t>(i % 255 + 1);
      spinFor(recvLast, v);
      if (i == p_.warmup) {
        measureStartNs_ = now_();
        progress_.setWarmup(false);
      }
      if (p_.check) {
        if (!patternMatches(recvArea, len_ - 1, i)) ++r.checkErrors;
        stampPattern(mr_.data() + so, len_ - 1, i);
      }
      *sendLast = v;
      postWrite(so, ro, signalFor(i, total));
    }
  }

  void postWrite(uint64_t localOffset, uint64_t remoteOffset, bool signaled) {
    const uint64_t ctx = makeCtx(Ctx::kData, 0, signaled ? kSignaled : 0);
    while (ep_.postWrite(mr_, localOffset, len_, link_.remote, remoteOffset, ctx, signaled) ==
           PostResult::kRetry)
      progress_.pollOnce(handler());
    if (signaled) ++outstanding_;
  }

  // Spins on the flag byte; the CQ is polled every spinsPerPoll_ spins (every spin where the
  // transport needs target progress to land the write).
  void spinFor(volatile uint8_t* where, uint8_t v) {
    auto h = handler();
    if (spinsPerPoll_ == 1) {
      while (*where != v)
        progress_.pollOnce(h);
    } else {
      uint32_t left = spinsPerPoll_;  // a countdown: no divide per spin
      while (*where != v)
        if (--left == 0) {
          left = spinsPerPoll_;
          progress_.pollOnce(h);
        }
    }
    progress_.progressed();
  }

  void readInitiator(PingPongResult& r) {
    ready();
    struct Ops : IterationHooks {
      PingPong& pp;
      PingPongResult& r;
      uint64_t so, ro;
      uint8_t* recvArea;
      void measuring(int64_t) { pp.measuring(); }
      void exchange(uint64_t) {
        while (pp.ep_.postRead(pp.mr_, ro, pp.len_, pp.link_.remote, so,
                               makeCtx(Ctx::kData, 0, kSignaled)) == PostResult::kRetry)
          pp.progress_.pollOnce(pp.handler());
        ++pp.outstanding_;
        while (pp.outstanding_ > 0)
          pp.progress_.pollOnce(pp.handler());
      }
      // --check: the responder stamped readPatternTag(bytes) before the size started; clear
      // the landing area afterwards so the next read must fill it again (outside the timing).
      void finish(uint64_t) {
        if (!pp.p_.check) return;
        if (!patternMatches(recvArea, pp.len_, readPatternTag(pp.p_.bytes))) ++r.checkErrors;
        std::memset(recvArea, 0, pp.len_);
      }
      void record(int64_t ns) { pp.samples_->add(ns); }
    } ops{{},
          *this,
          r,
          link_.layout.sendOffset(),
          link_.layout.recvOffset(),
          mr_.data() + link_.layout.recvOffset()};
    timedIterations(ops, /*halfRoundTrip=*/false);  // ib_read_lat: the full round trip
    postSend(link_.layout.ctrlOffset() + kCtrlSendOffset, kCtrlMessageBytes, Ctx::kAckSend);
  }

  // The responder of one-sided reads sees no completions: it progresses its device until the
  // initiator's final control message arrives.
  void passiveUntilFin() {
    postRecv(link_.layout.ctrlOffset() + kCtrlRecvOffset, kCtrlMessageBytes, Ctx::kAckRecv);
    ready();
    progress_.setPassive(true);
    waitRecv();
    progress_.setPassive(false);
  }

  transport::Endpoint& ep_;
  transport::MemoryRegion& mr_;
  Link& link_;
  Progress& progress_;
  const PingPongParams& p_;
  uint32_t len_;
  uint32_t signalEvery_ = 1;
  uint32_t spinsPerPoll_ = 1;
  uint64_t outstanding_ = 0;
  bool gotRecv_ = false;
  uint32_t recvBytes_ = 0;
  int64_t (*now_)();
  int64_t measureStartNs_ = INT64_MIN;   // first measured iteration (INT64_MIN: none ran)
  stats::SampleSet* samples_ = nullptr;  // where run() records
};

}  // namespace

PingPongResult runPingPong(transport::Device& device, Link& link, Progress& progress,
                           const PingPongParams& params) {
  if (params.op != DataOp::kSend && params.bytes == 0)
    throw UsageError(fmt::format("--size 0: --op {} needs at least 1 byte", toString(params.op)));
  PingPong engine(device, link, progress, params);
  const DeschedProbe probe;  // outside the hot path: read before and after the size
  PingPongResult r = engine.run();
  r.desched = probe.stop();
  return r;
}

}  // namespace rdmabench::engine
