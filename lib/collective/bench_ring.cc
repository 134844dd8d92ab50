// `rdmabench ring`: every rank ping-pongs with its right, then its left neighbour while
// answering the other's pings; rank 0 gathers the links and flags outliers (outliers.h).
#include <algorithm>
#include <cstring>
#include <functional>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collective/bench_run.h"
#include "collective/outliers.h"
#include "collective/topology.h"
#include "common/error.h"
#include "common/measure_clock.h"
#include "engine/timed_loop.h"

namespace rdmabench::collective::detail {

using nlohmann::json;

namespace {

// Concurrent ping-pong: this rank pings `target` while answering pings from `source` (they may
// be the same rank). Every message's first byte says ping ('P') or reply ('R'). Exactly as many
// receives are posted per peer as messages will come, so nothing is left posted afterwards.
// The pings run the measurement core's ping-pong loop (engine/timed_loop.h): one-way latency =
// RTT / 2 per measured iteration; the pings of `source` are answered from the completion handler
// while this rank waits for its own replies, and after its last one until every ping is served.
class RingPhase : public engine::IterationHooks {
 public:
  RingPhase(Communicator& c, int target, int source, uint64_t bytes, uint64_t total)
      : c_(c), target_(target), bytes_(bytes), total_(total), d_(c.data()) {
    d_[0] = 'P';
    d_[bytes] = 'R';
    peers_[0] = target;
    peers_[1] = source;
    npeers_ = source != target ? 2 : 1;
    expected_[0] += total;                     // replies from target
    expected_[npeers_ == 1 ? 0 : 1] += total;  // pings from source
    for (size_t pi = 0; pi < npeers_; ++pi)
      for (uint32_t s = 0; s < 2; ++s)
        repost(pi, static_cast<uint32_t>(pi * 2 + s));
  }

  stats::Summary run(uint64_t warmup, uint64_t iters) {
    samples_.reserve(iters);
    // Wrapped once, not per poll (the handler is too large for std::function's inline storage).
    const std::function<void(int, bool, uint32_t, uint32_t)> fn =
        [this](int peer, bool isRecv, uint32_t tag, uint32_t) { onCompletion(peer, isRecv, tag); };
    fn_ = &fn;
    engine::runIterations(engine::IterationLoop{warmup, iters, /*halfRoundTrip=*/true}, measureNs,
                          *this);
    while (served_ < total_ || sendsOut_ > 0)
      c_.poll(fn);
    return samples_.summarize();
  }

  // One ping to the target, the handler serving the source until its reply is in.
  void exchange(uint64_t i) {
    c_.postSend(target_, 0, bytes_, 100);
    ++sendsOut_;
    while (gotReplies_ < i + 1)
      c_.poll(*fn_);
  }
  void record(int64_t ns) { samples_.add(ns); }

 private:
  uint64_t slotOff(uint32_t slot) const { return (2 + slot) * bytes_; }
  void repost(size_t pi, uint32_t slot) {
    if (posted_[pi] < expected_[pi]) {
      c_.postRecv(peers_[pi], slotOff(slot), bytes_, slot);
      ++posted_[pi];
    }
  }
  void onCompletion(int peer, bool isRecv, uint32_t tag) {
    if (!isRecv) {
      --sendsOut_;
      return;
    }
    const uint8_t type = d_[slotOff(tag)];
    repost(peer == peers_[0] ? 0 : 1, tag);
    if (type == 'P') {
      c_.postSend(peer, bytes_, bytes_, 101);
      ++sendsOut_;
      ++served_;
    } else {
      ++gotReplies_;
    }
  }

  Communicator& c_;
  int target_;
  uint64_t bytes_, total_;
  uint8_t* d_;
  int peers_[2] = {};
  size_t npeers_ = 1;
  uint64_t expected_[2] = {}, posted_[2] = {};
  uint64_t gotReplies_ = 0, served_ = 0, sendsOut_ = 0;
  const std::function<void(int, bool, uint32_t, uint32_t)>* fn_ = nullptr;
  stats::SampleSet samples_;
};

}  // namespace

stats::Summary ringPhase(Communicator& c, int target, int source, uint64_t bytes, uint64_t warmup,
                         uint64_t iters) {
  return RingPhase(c, target, source, bytes, warmup + iters).run(warmup, iters);
}

namespace {

constexpr const char* kDirections[] = {"right", "left"};

// Both directions on every rank; each rank publishes its link's figures under ring/DIR/RANK.
void measureLinks(BenchRun& r, uint64_t warm, uint64_t iters) {
  const int me = r.me(), n = r.n();
  for (const char* dir : kDirections) {
    bool right = std::strcmp(dir, "right") == 0;
    int target = right ? ringRight(me, n) : ringLeft(me, n);
    int source = right ? ringLeft(me, n) : ringRight(me, n);
    r.enter(fmt::format("ring ping-pong {}, to rank {}, from rank {}", dir, target, source), -1);
    const DeschedProbe probe;
    stats::Summary s = ringPhase(r.c, target, source, r.p.ringBytes, warm, iters);
    json result{
        {"dst", target}, {"median", s.median}, {"min", s.min}, {"mean", s.mean}, {"p99", s.p99}};
    // Every rank measures at once: yielding ranks are judged together (bench_run.h).
    const DeschedDelta d = probe.stop();
    const double shortfall = sharedCpuShortfallUs(r.c, d, r.p.yieldCpuShare);
    if (json lost = deschedOfRank(d, r.p.yieldCpuShare, shortfall); !lost.is_null())
      result["desched"] = std::move(lost);
    r.c.store().set(fmt::format("ring/{}/{}", dir, me), result.dump());
    r.c.barrier();
  }
}

// Rank 0: every rank's links from the store, in direction then rank order.
struct Links {
  std::vector<report::RingLinkRow> rows;
  std::vector<LinkLatency> lat;
  std::vector<json> descheds;  // per row, before sorting: null or the source rank's loss
};

Links gatherLinks(BenchRun& r) {
  Communicator& c = r.c;
  const int n = r.n();
  Links links;
  for (const char* dir : kDirections)
    for (int k = 0; k < n && n > 1; ++k) {
      json j = json::parse(c.store().get(fmt::format("ring/{}/{}", dir, k), r.p.timeoutMs), nullptr,
                           false);
      if (!j.is_object()) throw ProtocolError("malformed ring result");
      report::RingLinkRow l;
      l.srcRank = k;
      l.dstRank = j.value("dst", 0);
      l.srcHost = c.hostOf(k);
      l.dstHost = c.hostOf(l.dstRank);
      l.srcAddress = c.addressOf(k);
      l.dstAddress = c.addressOf(l.dstRank);
      l.direction = dir;
      l.medianUs = j.value("median", 0.0);
      l.minUs = j.value("min", 0.0);
      l.meanUs = j.value("mean", 0.0);
      l.p99Us = j.value("p99", 0.0);
      links.rows.push_back(l);
      links.descheds.push_back(j.contains("desched") && j["desched"].is_object() ? j["desched"]
                                                                                 : json());
      links.lat.push_back(LinkLatency{l.srcRank, l.dstRank, l.medianUs});
    }
  return links;
}

// The warning line when links are outliers: how many, the threshold, the slow ranks.
std::string outlierSummary(BenchRun& r, const OutlierReport& o, size_t flagged, size_t links) {
  std::string slow;
  for (int k : o.slowRanks)
    slow +=
        fmt::format("{}{} ({} {})", slow.empty() ? "" : ", ", k, r.c.hostOf(k), r.c.addressOf(k));
  return fmt::format(
      "ring: {} of {} links above {:.2f} us (baseline {:.2f} us + {} x max(MAD {:.2f}, "
      "link MAD {:.2f}, baseline/10)){}",
      flagged, links, o.thresholdUs, o.baselineUs, r.p.outlierK, o.madUs, o.linkMadUs,
      slow.empty() ? "" : "; slow rank(s): " + slow);
}

// Rank 0: the links by median latency, outliers flagged, one report row each.
void reportLinks(BenchRun& r, uint64_t warm, uint64_t iters) {
  Links links = gatherLinks(r);
  OutlierReport o = findOutliers(links.lat, r.n(), r.p.outlierK);
  std::vector<std::pair<report::RingLinkRow, json>> sorted;
  for (size_t i = 0; i < links.rows.size(); ++i) {
    links.rows[i].outlier = o.outlier[i];
    sorted.emplace_back(links.rows[i], links.descheds[i]);
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.first.medianUs < b.first.medianUs;
  });
  size_t flagged = 0;
  for (const auto& [l, desched] : sorted) {
    report::Row row;
    row.descheduled = desched;
    row.bytes = r.p.ringBytes;
    row.iterations = iters;
    row.warmup = warm;
    row.link = l;
    r.reporter->row(row);
    flagged += l.outlier;
  }
  if (flagged) r.out.outlierSummary = outlierSummary(r, o, flagged, links.rows.size());
}

}  // namespace

void runRing(BenchRun& r) {
  const CollectiveParams& p = r.p;
  if (p.ringBytes < 1) throw UsageError("--size 0: the ring ping-pong needs at least 1 byte");
  r.begin();
  const uint64_t iters = itersFor(p, p.ringBytes), warm = warmupFor(p, p.ringBytes);
  if (r.n() > 1) measureLinks(r, warm, iters);
  if (r.root()) reportLinks(r, warm, iters);
}

}  // namespace rdmabench::collective::detail
