#include "collective/congestion_traffic.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/measure_clock.h"
#include "engine/timed_loop.h"

namespace rdmabench::collective::detail {

std::vector<double> ringExchange(Communicator& c, RingNeighbours nb, uint64_t bytes,
                                 uint64_t window, uint64_t warm, uint64_t iters) {
  // One iteration of the measurement core's loop (engine/timed_loop.h) is one exchange: the
  // next iteration's receives, this one's sends, then every completion of this iteration.
  struct Ops : engine::IterationHooks {
    Communicator& c;
    RingNeighbours nb;
    uint64_t bytes, window, per, total;
    uint64_t recv = 0, sent = 0;
    std::vector<double> samples;
    void postRecvs() {
      for (uint64_t w = 0; w < window; ++w) {
        c.postRecv(nb.left, 0, bytes);
        c.postRecv(nb.right, 0, bytes);
      }
    }
    void measuring(int64_t) { c.setWarmup(false); }
    void exchange(uint64_t i) {
      if (i + 1 < total) postRecvs();
      for (uint64_t w = 0; w < window; ++w) {
        c.postSend(nb.right, 0, bytes);
        c.postSend(nb.left, 0, bytes);
      }
      while (recv < (i + 1) * per || sent < (i + 1) * per)
        c.poll([this](int, bool isRecv, uint32_t, uint32_t) { ++(isRecv ? recv : sent); });
    }
    void record(int64_t ns) { samples.push_back(static_cast<double>(ns) / 1e3); }
  } ops{{}, c, nb, bytes, window, 2 * window * c.chunksOf(bytes), warm + iters, 0, 0, {}};
  ops.samples.reserve(iters);
  c.setWarmup(warm > 0);
  ops.postRecvs();
  engine::runIterations(engine::IterationLoop{warm, iters, /*halfRoundTrip=*/false}, measureNs,
                        ops);
  return std::move(ops.samples);
}

namespace {

// The state machine of one aggressor (aggress): its windows out, its sources' windows in, the
// acknowledgements and the stop.
class Aggressor {
 public:
  Aggressor(Communicator& c, rendezvous::Store& store, const Layout& L, const AggressorPlan& plan)
      : c_(c),
        store_(store),
        L_(L),
        plan_(plan),
        k_(c.chunksOf(plan.bytes)),
        in_(static_cast<size_t>(c.size())),
        open_(static_cast<size_t>(c.size()), 0),
        acked_(static_cast<size_t>(c.size()), 0) {}

  AggOutcome run() {
    const uint64_t one = 1, zero = 0;
    std::memcpy(c_.data() + L_.more(), &one, 8);
    std::memcpy(c_.data() + L_.last(), &zero, 8);
    std::memcpy(c_.data() + L_.zero(), &zero, 8);
    c_.postRecv(plan_.leader, L_.sink(), 8, kTagStop);
    for (int q : plan_.sources)
      postInbound(q);
    // The measurement core (engine/timed_loop.h) times the stream from the first window to the
    // stop message on the measurement clock; its deadline and store checks read nowNs() every
    // kCheckEvery polls. Then the windows in flight finish, the checks still on.
    nextCheckNs_ = nowNs() + kStoreCheckNs;
    struct Ops {
      Aggressor& a;
      void start() {
        for (int p : a.plan_.targets)
          a.sendWindow(p);
      }
      bool stopped() const { return a.stopping_; }
      void poll() { a.pollOnce(); }
      void check() { a.checks(); }
    } ops{*this};
    const int64_t ns = engine::runUntilStopped(measureNs, ops, kCheckEvery);
    engine::pollUntil([this] { return finished(); }, [this] { pollOnce(); }, kCheckEvery,
                      [this] { checks(); });
    AggOutcome o;
    o.bytes = dataBytes_;
    o.seconds = static_cast<double>(std::max<int64_t>(ns, 1)) / 1e9;
    return o;
  }

 private:
  static constexpr uint32_t kCheckEvery = 16;            // polls between two clock reads
  static constexpr int64_t kStoreCheckNs = 100'000'000;  // store liveness check cadence

  void pollOnce() {
    c_.poll(
        [this](int peer, bool isRecv, uint32_t tag, uint32_t) { onCompletion(peer, isRecv, tag); });
    if (!announced_ && firstAcks_ == plan_.targets.size()) {
      store_.set(fmt::format("cong/started/{}", c_.rank()), "1");
      announced_ = true;
    }
  }

  // Completions keep flowing here, so the no-progress watchdog never runs: ask the store about
  // dead ranks every 100 ms instead (non-blocking; throws naming the rank); and the deadline.
  void checks() {
    const int64_t now = nowNs();
    if (now > nextCheckNs_) {
      store_.checkPeers();
      nextCheckNs_ = nowNs() + kStoreCheckNs;
    }
    if (!stopping_ && now > plan_.deadlineNs)
      c_.rethrowWithCause(TimeoutError(fmt::format(
          "aggressor rank {}: no stop message from victim rank {} (the ring's leader) within "
          "--phase-time {} s",
          c_.rank(), plan_.leader, plan_.limitSec)));
  }

  struct In {
    uint64_t chunks = 0;
    bool flag = false, done = false;
  };

  void postInbound(int q) {
    for (uint64_t w = 0; w < plan_.window; ++w)
      c_.postRecv(q, 0, plan_.bytes, kTagData);
    c_.postRecv(q, L_.slot(q), 8, kTagFlag);
  }

  void sendWindow(int p) {
    if (!stopping_) c_.postRecv(p, L_.sink(), 4, kTagAck);
    for (uint64_t w = 0; w < plan_.window; ++w)
      c_.postSend(p, 0, plan_.bytes, kTagData);
    c_.postSend(p, stopping_ ? L_.last() : L_.more(), 8, kTagFlag);
    sendsPosted_ += plan_.window * k_ + 1;
    dataBytes_ += plan_.window * plan_.bytes;
    open_[static_cast<size_t>(p)] = !stopping_;
  }

  // A source's window is complete (all its chunks and its flag): "more" reposts and
  // acknowledges, "last" ends that source.
  void checkIn(int q) {
    In& s = in_[static_cast<size_t>(q)];
    if (!s.flag || s.chunks < plan_.window * k_) return;
    uint64_t f = 0;
    std::memcpy(&f, c_.data() + L_.slot(q), 8);
    s.chunks = 0;
    s.flag = false;
    if (f == 1) {
      postInbound(q);
      c_.postSend(q, L_.zero(), 4, kTagAck);
      ++sendsPosted_;
    } else {
      s.done = true;
    }
  }

  bool finished() {
    if (!stopping_ || sendsDone_ < sendsPosted_) return false;
    for (int p : plan_.targets)
      if (open_[static_cast<size_t>(p)]) return false;
    for (int q : plan_.sources)
      if (!in_[static_cast<size_t>(q)].done) return false;
    return true;
  }

  void onCompletion(int peer, bool isRecv, uint32_t tag) {
    if (!isRecv) {
      ++sendsDone_;
      return;
    }
    if (tag == kTagStop) {
      stopping_ = true;
    } else if (tag == kTagAck) {
      if (!acked_[static_cast<size_t>(peer)]) {
        acked_[static_cast<size_t>(peer)] = 1;
        ++firstAcks_;
      }
      sendWindow(peer);
    } else if (tag == kTagData) {
      ++in_[static_cast<size_t>(peer)].chunks;
      checkIn(peer);
    } else if (tag == kTagFlag) {
      in_[static_cast<size_t>(peer)].flag = true;
      checkIn(peer);
    }
  }

  Communicator& c_;
  rendezvous::Store& store_;
  const Layout& L_;
  const AggressorPlan& plan_;
  const uint64_t k_;  // chunks per message
  // By rank (no map lookup per completion): inbound windows, open targets, first acks seen.
  std::vector<In> in_;
  std::vector<char> open_, acked_;
  bool stopping_ = false, announced_ = false;
  size_t firstAcks_ = 0;
  uint64_t sendsPosted_ = 0, sendsDone_ = 0, dataBytes_ = 0;
  int64_t nextCheckNs_ = 0;
};

}  // namespace

AggOutcome aggress(Communicator& c, rendezvous::Store& store, const Layout& L,
                   const AggressorPlan& plan) {
  return Aggressor(c, store, L, plan).run();
}

}  // namespace rdmabench::collective::detail
