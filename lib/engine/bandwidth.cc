#include "engine/bandwidth.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/units.h"

namespace rdmabench::engine {
namespace {

using transport::Completion;
using transport::PostResult;

struct LinkState {
  uint64_t posted = 0;     // data posts
  uint64_t completed = 0;  // data posts known complete
  uint64_t sinceSignal = 0;
  uint64_t recvPosted = 0;    // data receives posted
  uint64_t recvDone = 0;      // data receives completed
  uint64_t ctrlRecvs = 0;     // acks / fins received
  uint64_t ctrlSendsOut = 0;  // acks / fins in flight
};

class Bandwidth {
 public:
  Bandwidth(transport::Device& device, std::vector<Link>& links, Progress& progress,
            const BandwidthParams& p)
      : links_(links),
        progress_(progress),
        p_(p),
        len_(static_cast<uint32_t>(p.bytes)),
        state_(links.size()) {
    transport::Caps caps = device.caps();
    uint32_t sq = caps.maxSendQueue ? caps.maxSendQueue : 128;
    cqMod_ = std::max<uint32_t>(1, std::min<uint32_t>(p.cqModeration, std::max(1u, sq / 2)));
    uint32_t rq = caps.maxRecvQueue ? caps.maxRecvQueue : 512;
    if (p.op == "send" && (p.bidirectional || !p.sender) && p.window + 1 > rq)
      throw UsageError(
          fmt::format("--window {}: exceeds the receive queue depth {} of {} "
                      "(raise --rx-depth or lower --window)",
                      p.window, rq, device.name()));
    prepost_ = std::min<uint64_t>(2ull * p.window, rq - 1);
    total_ = p.warmup + p.iterations;
  }

  BandwidthResult run() {
    const bool sends = p_.bidirectional || p_.sender;
    const bool receives = p_.bidirectional || !p_.sender;
    const bool isSend = p_.op == "send";
    const uint64_t expectedRecvs = total_ * p_.window;

    // Control receives: acks (uni send, sender side) or fins (write, receiving side).
    for (size_t l = 0; l < links_.size(); ++l) {
      if (isSend && p_.sender && !p_.bidirectional) postCtrlRecv(l);
      if (!isSend && receives) postCtrlRecv(l);
      if (isSend && receives) replenish(l, expectedRecvs);
    }

    int64_t t0 = nowNs(), t1 = t0;
    if (isSend || sends) {
      for (uint64_t it = 0; it < total_; ++it) {
        if (it == p_.warmup) t0 = nowNs();
        if (sends)
          for (size_t l = 0; l < links_.size(); ++l)
            postWindow(l);
        for (size_t l = 0; l < links_.size(); ++l) {
          LinkState& s = state_[l];
          for (;;) {
            bool sendsDone = !sends || s.completed == s.posted;
            bool recvsDone = !(isSend && receives) || s.recvDone >= (it + 1) * p_.window;
            bool ackDone = !(isSend && !p_.bidirectional && p_.sender) || s.ctrlRecvs >= it + 1;
            if (sendsDone && recvsDone && ackDone) break;
            poll();
            if (isSend && receives) replenish(l, expectedRecvs);
          }
          if (isSend && !p_.bidirectional) {
            if (p_.sender && it + 1 < total_) postCtrlRecv(l);
            if (!p_.sender) postCtrlSend(l);  // the ack that releases the sender's next window
          }
        }
      }
      t1 = nowNs();
    }
    if (!isSend) {
      // Fins: the writer tells the target it is done; the target progresses until then.
      if (sends)
        for (size_t l = 0; l < links_.size(); ++l)
          postCtrlSend(l);
      if (receives) {
        progress_.setPassive(!sends);
        for (size_t l = 0; l < links_.size(); ++l)
          while (state_[l].ctrlRecvs < 1)
            poll();
        progress_.setPassive(false);
      }
    }
    for (size_t l = 0; l < links_.size(); ++l)
      while (state_[l].ctrlSendsOut > 0)
        poll();

    BandwidthResult r;
    r.seconds = static_cast<double>(t1 - t0) / 1e9;
    uint64_t perDirection = p_.iterations * p_.window * links_.size();
    r.messages = sends ? perDirection : 0;
    r.messagesBothWays = p_.bidirectional ? 2 * perDirection : perDirection;
    double bytes = static_cast<double>(r.messagesBothWays) * static_cast<double>(p_.bytes);
    r.megabytesPerSec = megabytesPerSecond(bytes, r.seconds);
    r.messagesPerSec = r.seconds > 0 ? static_cast<double>(r.messagesBothWays) / r.seconds : 0;
    return r;
  }

 private:
  void onCompletion(const Completion& c) {
    LinkState& s = state_[ctxLink(c.context)];
    switch (ctxKind(c.context)) {
      case Ctx::kData:
        s.completed = std::max(s.completed, ctxSeq(c.context) + 1);
        break;
      case Ctx::kRecvData:
        ++s.recvDone;
        break;
      case Ctx::kAckRecv:
        ++s.ctrlRecvs;
        break;
      case Ctx::kAckSend:
        --s.ctrlSendsOut;
        break;
    }
  }

  void poll() {
    progress_.pollOnce([this](const Completion& c) { onCompletion(c); });
  }

  void postWindow(size_t l) {
    Link& link = links_[l];
    LinkState& s = state_[l];
    const uint64_t so = link.layout.sendOffset(), ro = link.layout.recvOffset();
    for (uint32_t k = 0; k < p_.window; ++k) {
      bool signaled = ++s.sinceSignal >= cqMod_ || k + 1 == p_.window;
      uint64_t ctx = makeCtx(Ctx::kData, static_cast<uint32_t>(l), s.posted);
      for (;;) {
        PostResult r =
            p_.op == "send"
                ? link.endpoint->postSend(*link.region, so, len_, ctx, signaled)
                : link.endpoint->postWrite(*link.region, so, len_, link.remote, ro, ctx, signaled);
        if (r == PostResult::kOk) break;
        poll();
      }
      if (signaled) s.sinceSignal = 0;
      ++s.posted;
    }
  }

  void replenish(size_t l, uint64_t expected) {
    Link& link = links_[l];
    LinkState& s = state_[l];
    while (s.recvPosted < expected && s.recvPosted - s.recvDone < prepost_) {
      if (link.endpoint->postRecv(*link.region, link.layout.recvOffset(), len_,
                                  makeCtx(Ctx::kRecvData, static_cast<uint32_t>(l),
                                          s.recvPosted)) == PostResult::kRetry)
        return;
      ++s.recvPosted;
    }
  }

  void postCtrlRecv(size_t l) {
    Link& link = links_[l];
    uint64_t off = link.layout.ctrlOffset() + kCtrlRecvOffset;
    while (link.endpoint->postRecv(*link.region, off, kCtrlMessageBytes,
                                   makeCtx(Ctx::kAckRecv, static_cast<uint32_t>(l), 0)) ==
           PostResult::kRetry)
      poll();
  }

  void postCtrlSend(size_t l) {
    Link& link = links_[l];
    uint64_t off = link.layout.ctrlOffset() + kCtrlSendOffset;
    while (link.endpoint->postSend(*link.region, off, kCtrlMessageBytes,
                                   makeCtx(Ctx::kAckSend, static_cast<uint32_t>(l), 0)) ==
           PostResult::kRetry)
      poll();
    ++state_[l].ctrlSendsOut;
  }

  std::vector<Link>& links_;
  Progress& progress_;
  const BandwidthParams& p_;
  uint32_t len_;
  std::vector<LinkState> state_;
  uint32_t cqMod_ = 1;
  uint64_t prepost_ = 0;
  uint64_t total_ = 0;
};

}  // namespace

BandwidthResult runBandwidth(transport::Device& device, std::vector<Link>& links,
                             Progress& progress, const BandwidthParams& params) {
  if (params.bytes == 0) throw UsageError("--size 0: bandwidth needs at least 1 byte");
  if (params.op != "send" && params.op != "write")
    throw UsageError(
        fmt::format("--op {}: the bandwidth engine supports send and write", params.op));
  Bandwidth engine(device, links, progress, params);
  return engine.run();
}

}  // namespace rdmabench::engine
