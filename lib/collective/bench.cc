#include "collective/bench.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <iterator>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collective/allreduce.h"
#include "collective/comm.h"
#include "collective/model.h"
#include "collective/outliers.h"
#include "collective/rank_placement.h"
#include "collective/run_info.h"
#include "collective/sharp/sharp.h"
#include "collective/topology.h"
#include "common/clock.h"
#include "common/desched.h"
#include "common/error.h"
#include "common/json_read.h"
#include "stats/summary.h"

namespace rdmabench::collective {

using nlohmann::json;

namespace {

constexpr uint64_t kLargeMessage = 8192;  // OSU's LARGE_MESSAGE_SIZE

constexpr uint64_t kMaxIterations = 100'000'000;  // as the point-to-point engines
// Per-rank sample vectors are max-reduced across ranks in chunks of this many int64 values.
constexpr uint64_t kSlowestChunk = 8192;
// Iteration times a rank buffers before reducing them (SlowestPerIteration): 128 KiB.
constexpr uint64_t kSlowestBuffer = 2 * kSlowestChunk;

uint64_t itersFor(const CollectiveParams& p, uint64_t bytes) {
  if (p.iterations) return p.iterations;
  return bytes > kLargeMessage ? 100 : 1000;
}

uint64_t warmupFor(const CollectiveParams& p, uint64_t bytes) {
  if (p.warmup >= 0) return static_cast<uint64_t>(p.warmup);
  return bytes > kLargeMessage ? 10 : 100;
}

std::vector<int> peersNeeded(const CollectiveParams& p, int rank, int n) {
  std::set<int> s;
  auto add = [&](const std::string& a) {
    for (int x : peersFor(a, rank, n))
      s.insert(x);
  };
  add("barrier");
  add("tree");  // agreeing on iteration counts and the slowest rank per iteration
  if (p.test == "ring") add("ringpingpong");
  if (p.algo == "sharp") add("tree");  // SHARP's out-of-band collectives (sharp/oob.h)
  if (p.test == "allreduce" && p.algo != "sharp") {
    if (p.algo == "auto") {
      for (const auto& a : allreduceAlgorithms())
        add(a);
      if (n > 1 && rank <= 1) s.insert(1 - rank);  // the model's ping-pong pair
    } else {
      add(p.algo);
    }
  }
  s.erase(rank);
  return std::vector<int>(s.begin(), s.end());
}

// Mean one-way latency (RTT/2, us) of `iters` ping-pongs of `bytes` between ranks 0 and 1.
double pingPong01(Communicator& c, uint64_t bytes, uint64_t warmup, uint64_t iters) {
  const int me = c.rank(), peer = 1 - me;
  int64_t sum = 0;
  for (uint64_t i = 0; i < warmup + iters; ++i) {
    int64_t t0 = nowNs();
    if (me == 0) {
      c.postRecv(peer, bytes, bytes);
      c.postSend(peer, 0, bytes);
      c.waitAll("model ping-pong with rank 1");
    } else {
      c.postRecv(peer, bytes, bytes);
      c.waitAll("model ping-pong with rank 0");
      c.postSend(peer, 0, bytes);
      c.waitAll("model ping-pong with rank 0");
    }
    if (i >= warmup) sum += nowNs() - t0;
  }
  return static_cast<double>(sum) / static_cast<double>(iters) / 2 / 1000;
}

CostModel fitModel(Communicator& c, const CollectiveParams& p) {
  CostModel m;
  if (c.size() > 1 && c.rank() <= 1) {
    double t8 = pingPong01(c, 8, 20, 200);
    double t64 = pingPong01(c, 65536, 5, 30);
    m.alphaUs = t8;
    m.betaUsPerByte = std::max(0.0, (t64 - t8) / (65536 - 8));
  }
  if (c.rank() == 0) {
    // gamma: time of a local reduction of 1 MiB in the chosen type and operator.
    const uint64_t bytes = 1 << 20;
    const uint64_t count = bytes / elementSize(p.dtype);
    std::vector<uint8_t> a(bytes), b(bytes);
    fillInput(a.data(), count, p.dtype, 0);
    fillInput(b.data(), count, p.dtype, 1);
    reduceInto(a.data(), b.data(), count, p.dtype, p.op);  // warm the pages
    int64_t t0 = nowNs();
    for (int i = 0; i < 4; ++i)
      reduceInto(a.data(), b.data(), count, p.dtype, p.op);
    m.gammaUsPerByte = static_cast<double>(nowNs() - t0) / 4 / 1000 / static_cast<double>(bytes);
    c.store().set("model", json{{"alpha_us", m.alphaUs},
                                {"beta_us_per_byte", m.betaUsPerByte},
                                {"gamma_us_per_byte", m.gammaUsPerByte}}
                               .dump());
  }
  // Every rank takes rank 0's numbers so all choose the same algorithm per size.
  json j = json::parse(c.store().get("model", p.timeoutMs), nullptr, false);
  if (!j.is_object()) throw ProtocolError("malformed cost model in the store");
  m.alphaUs = j.value("alpha_us", 0.0);
  m.betaUsPerByte = j.value("beta_us_per_byte", 0.0);
  m.gammaUsPerByte = j.value("gamma_us_per_byte", 0.0);
  return m;
}

// Max over all ranks of `v` (every rank gets it): an untimed tree allreduce of one int64 in the
// data area (clobbers its first 16 bytes).
int64_t agreeMax(Communicator& c, int64_t v) {
  std::memcpy(c.data(), &v, sizeof v);
  allreduce(c, "tree", 1, DType::kInt64, ReduceOp::kMax);
  int64_t out = 0;
  std::memcpy(&out, c.data() + sizeof v, sizeof out);
  return out;
}

// Iterations of one size: the fixed count, or (with -D / --max-time) what fits the time budget
// given `perIterNs`, the slowest rank's mean warmup iteration (agreed, so every rank runs the
// same count). IMB's -time: large sizes run fewer repetitions instead of minutes.
uint64_t budgetedIterations(const CollectiveParams& p, uint64_t fixed, int64_t perIterNs) {
  if (perIterNs <= 0) return fixed;
  const double per = static_cast<double>(perIterNs) / 1e9;
  if (p.durationSec > 0)
    return static_cast<uint64_t>(
        std::clamp(p.durationSec / per, 1.0, static_cast<double>(kMaxIterations)));
  if (p.iterations == 0 && p.maxTimeSec > 0)
    return std::min(fixed, static_cast<uint64_t>(std::max(1.0, p.maxTimeSec / per)));
  return fixed;
}

// Warmup iterations: with -D at least 10, so the calibration has something to time.
uint64_t warmupWithBudget(const CollectiveParams& p, uint64_t warm) {
  return p.durationSec > 0 ? std::max<uint64_t>(warm, 10) : warm;
}

}  // namespace

// docs: bench.h
AcrossRanks reduceAcrossRanks(Communicator& c, const RankResult& r) {
  auto reduce = [&c](std::initializer_list<double> in, ReduceOp op, double* out) {
    const size_t k = in.size();
    std::memcpy(c.data(), std::data(in), k * sizeof(double));
    allreduce(c, "tree", k, DType::kFloat64, op);
    std::memcpy(out, c.data() + k * sizeof(double), k * sizeof(double));
  };
  AcrossRanks a;
  reduce({r.meanUs}, ReduceOp::kMin, &a.minUs);
  reduce({r.meanUs}, ReduceOp::kMax, &a.maxUs);
  double sums[2];
  reduce({r.meanUs, static_cast<double>(r.wrong)}, ReduceOp::kSum, sums);
  a.sumUs = sums[0];
  a.wrong = static_cast<uint64_t>(sums[1]);
  return a;
}

namespace {

// Distribution over iterations of the slowest rank's time, in memory bounded by the run's
// length: each rank buffers at most kSlowestBuffer iteration times (ns); a full buffer is
// max-reduced across ranks through the data plane in chunks of kSlowestChunk (untimed, between
// two iterations, at the same iteration on every rank: the count is agreed), and rank 0 folds the
// maxima into a stats::SampleSet, exact up to its 1,000,000 samples and a bounded histogram
// beyond (as lat). A run of at most kSlowestBuffer iterations reduces once, after its loop, as
// before. Only rank 0's summary is meaningful. Uses (clobbers) the data area.
class SlowestPerIteration {
 public:
  SlowestPerIteration(Communicator& c, uint64_t iterations) : c_(c) {
    buffer_.reserve(static_cast<size_t>(std::min(iterations, kSlowestBuffer)));
    if (c_.rank() == 0) set_.reserve(static_cast<size_t>(iterations));
  }
  // Records one iteration's time (ns). True when the buffer was reduced just now: the data area
  // was used, so an input kept there must be written again.
  bool add(int64_t ns) {
    buffer_.push_back(ns);
    if (buffer_.size() < kSlowestBuffer) return false;
    reduce();
    return true;
  }
  // Reduces what is left; the summary of every iteration's maximum over the ranks (rank 0).
  stats::Summary finish() {
    reduce();
    return set_.summarize();
  }

 private:
  void reduce() {
    for (size_t off = 0; off < buffer_.size(); off += kSlowestChunk) {
      const size_t k = std::min<size_t>(kSlowestChunk, buffer_.size() - off);
      std::memcpy(c_.data(), buffer_.data() + off, k * sizeof(int64_t));
      allreduce(c_, "tree", k, DType::kInt64, ReduceOp::kMax);
      if (c_.rank() == 0)
        for (size_t i = 0; i < k; ++i) {
          int64_t v = 0;
          std::memcpy(&v, c_.data() + (k + i) * sizeof(int64_t), sizeof v);
          set_.add(v);
        }
    }
    buffer_.clear();
  }

  Communicator& c_;
  std::vector<int64_t> buffer_;
  stats::SampleSet set_;
};

// The descheduling of one size over every rank (untimed tree allreduce of 4 doubles, max; every
// rank calls it): null when no rank's loop lost the CPU, else the largest counts
// (DeschedDelta::toJson's members).
json deschedAcrossRanks(Communicator& c, const DeschedDelta& d) {
  const double in[4] = {d.lostCpu() ? 1.0 : 0.0, static_cast<double>(d.involuntarySwitches),
                        d.stealUs, d.runDelayUs};
  std::memcpy(c.data(), in, sizeof in);
  allreduce(c, "tree", 4, DType::kFloat64, ReduceOp::kMax);
  double out[4];
  std::memcpy(out, c.data() + sizeof in, sizeof out);
  if (out[0] == 0) return nullptr;
  json j{{"involuntary_switches", static_cast<int64_t>(out[1])}, {"steal_us", out[2]}};
  if (out[3] >= 0) j["run_delay_us"] = out[3];
  return j;
}

report::CollectiveRow rowAcrossRanks(int n, const AcrossRanks& a, uint64_t bytes,
                                     const stats::Summary& sm, uint64_t& wrongTotal) {
  report::CollectiveRow row;
  row.ranks = n;
  row.tMinUs = a.minUs;
  row.tMaxUs = a.maxUs;
  row.tAvgUs = a.sumUs / n;
  row.slowestP50Us = sm.p50;
  row.slowestP99Us = sm.p99;
  row.slowestMaxUs = sm.max;
  if (row.tAvgUs > 0 && bytes > 0) {
    row.algbwGBs = static_cast<double>(bytes) / (row.tAvgUs * 1e-6) / 1e9;
    row.busbwGBs = row.algbwGBs * 2.0 * (n - 1) / n;
  }
  wrongTotal += a.wrong;
  row.wrong = a.wrong;
  return row;
}

// Concurrent ping-pong: this rank pings `target` while answering pings from `source` (they may
// be the same rank). Every message's first byte says ping ('P') or reply ('R'). Exactly as many
// receives are posted per peer as messages will come, so nothing is left posted afterwards.
stats::Summary ringPhase(Communicator& c, int target, int source, uint64_t bytes, uint64_t warmup,
                         uint64_t iters) {
  const uint64_t total = warmup + iters;
  uint8_t* d = c.data();
  d[0] = 'P';
  d[bytes] = 'R';
  std::vector<int> peers{target};
  if (source != target) peers.push_back(source);
  std::vector<uint64_t> expected(peers.size(), 0), posted(peers.size(), 0);
  expected[0] += total;                          // replies from target
  expected[peers.size() == 1 ? 0 : 1] += total;  // pings from source
  auto slotOff = [&](uint32_t slot) { return (2 + slot) * bytes; };
  auto indexOf = [&](int peer) { return peer == peers[0] ? size_t{0} : size_t{1}; };
  auto repost = [&](size_t pi, uint32_t slot) {
    if (posted[pi] < expected[pi]) {
      c.postRecv(peers[pi], slotOff(slot), bytes, slot);
      ++posted[pi];
    }
  };
  for (size_t pi = 0; pi < peers.size(); ++pi)
    for (uint32_t s = 0; s < 2; ++s)
      repost(pi, static_cast<uint32_t>(pi * 2 + s));
  stats::SampleSet samples;
  samples.reserve(iters);
  uint64_t gotReplies = 0, served = 0, sendsOut = 0;
  int64_t t0 = nowNs();
  c.postSend(target, 0, bytes, 100);
  ++sendsOut;
  auto onCompletion = [&](int peer, bool isRecv, uint32_t tag, uint32_t) {
    if (!isRecv) {
      --sendsOut;
      return;
    }
    const uint8_t type = d[slotOff(tag)];
    repost(indexOf(peer), tag);
    if (type == 'P') {
      c.postSend(peer, bytes, bytes, 101);
      ++sendsOut;
      ++served;
    } else {
      int64_t t1 = nowNs();
      if (gotReplies >= warmup) samples.add((t1 - t0) / 2);
      ++gotReplies;
      if (gotReplies < total) {
        t0 = nowNs();
        c.postSend(target, 0, bytes, 100);
        ++sendsOut;
      }
    }
  };
  while (gotReplies < total || served < total || sendsOut > 0)
    c.poll(onCompletion);
  return samples.summarize();
}

}  // namespace

std::string eventModeReason(const PlacementRequest& placement, const launch::RankInfo& info) {
  const int local = std::max(info.localRanks, info.localRank + 1);
  const int cpus = info.source == "np"
                       ? allowedCpuCount()
                       : static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  if (local > cpus)
    return fmt::format(
        "auto: event mode ({} busy-polling ranks on this host would share {} CPU{}; "
        "--use-event off to busy-poll anyway)",
        local, cpus, cpus == 1 ? "" : "s");
  bool shared = false;
  (void)rankPlacement(placement, info.localRank, local, &shared);
  if (shared)
    return fmt::format(
        "auto: event mode (--cpu {} has fewer CPUs than the {} ranks on this host; --use-event "
        "off to busy-poll anyway)",
        placement.cpus, local);
  return "";
}

CommOptions commOptions(const CollectiveParams& p, std::vector<int> peers, uint64_t dataBytes) {
  CommOptions co;
  co.transport = p.transport;
  co.device = p.device;
  co.timeoutMs = p.timeoutMs;
  co.peers = std::move(peers);
  co.dataBytes = dataBytes;
  return co;
}

namespace {

// runCollective's body; `stage` follows the run for errors raised outside the waits.
CollectiveOutcome runCollectiveIn(const CollectiveParams& p, const launch::RankInfo& info,
                                  rendezvous::Store& store, report::Reporter* reporter,
                                  std::string& stage) {
  CollectiveOutcome out;
  const int me = info.rank, n = info.worldSize;
  const int64_t start = nowNs();
  CommOptions co = commOptions(p, peersNeeded(p, me, n), 64);
  uint64_t maxBytes = 0;
  for (uint64_t b : p.sizes)
    maxBytes = std::max(maxBytes, b);
  const bool useSharp = p.algo == "sharp" && (p.test == "allreduce" || p.test == "barrier");
  // SHARP: [0, 2 * maxBytes) input and result (one sharp_coll_reg_mr), then the staging area of
  // the out-of-band collectives.
  const uint64_t sharpRegion = p.test == "allreduce" ? 2 * std::max<uint64_t>(maxBytes, 64) : 64;
  if (useSharp) {
    co.dataBytes = sharpRegion + sharp::kStageBytes;
    co.bufferFor =
        fmt::format("SHARP {} of up to {} bytes: input, result and staging", p.test, maxBytes);
  } else if (p.test == "allreduce") {
    co.dataBytes = allreduceDataBytes(me, n, std::max<uint64_t>(maxBytes, 65536));
    co.bufferFor =
        fmt::format("allreduce of up to {} bytes per rank: input, result and scratch", maxBytes);
  } else if (p.test == "ring") {
    co.dataBytes = 6 * p.ringBytes;
    co.bufferFor = fmt::format("ring ping-pong of {} bytes", p.ringBytes);
  }
  // The untimed reductions (iteration counts, slowest rank per iteration) use the data area.
  co.dataBytes = std::max(co.dataBytes, allreduceDataBytes(me, n, kSlowestChunk * sizeof(int64_t)));
  engine::testHold("connect", me, stage);
  Communicator c(store, me, n, info.host, co);
  c.setStage(stage);
  // Bound before any timed loop; published before the barrier, so rank 0 finds every rank's.
  const json placement = placeRank(c, p.placement, info);
  c.barrier();
  // Errors outside the waits (the store's news of a dead rank) name the stage too.
  auto enter = [&](std::string s, int warmup) {
    stage = s + (warmup < 0 ? "" : warmup ? ", warmup" : ", measuring");
    c.setStage(std::move(s));
    if (warmup >= 0) c.setWarmup(warmup != 0);
  };
  out.wireupSeconds = static_cast<double>(nowNs() - start) / 1e9;
  const bool root = me == 0 && reporter != nullptr;
  json extra{{"wireup_s", out.wireupSeconds},
             {"peers_per_rank", c.peers().size()},
             {"rendezvous", store.describe()}};
  std::unique_ptr<sharp::Session> sharpSession;
  if (useSharp) {
    const int64_t t0 = nowNs();
    sharp::SessionOptions so;
    so.timeoutMs = p.timeoutMs;
    so.localRank = info.localRank;
    so.registerBytes = sharpRegion;
    so.stageOffset = sharpRegion;
    so.stageBytes = sharp::kStageBytes;
    sharpSession = sharp::open(c, so);
    if (p.test == "allreduce") sharpSession->checkSupported(p.dtype, p.op);
    extra["sharp"] = sharpSession->facts();
    extra["sharp"]["init_s"] = static_cast<double>(nowNs() - t0) / 1e9;
    c.barrier();
  }

  if (p.test == "barrier") {
    if (root) reporter->begin(collectiveRunInfo(c, p, info, extra, placement));
    const uint64_t warm = warmupWithBudget(p, warmupFor(p, 0));
    // Errors name the phase (they said "during connect" for every barrier failure).
    enter("barrier", warm > 0);
    if (warm > 0) engine::testHold("warmup", me, stage);
    int64_t w0 = nowNs();
    for (uint64_t i = 0; i < warm; ++i) {
      if (!sharpSession) {
        c.barrier();
      } else if (int rc = sharpSession->barrier(); rc != 0) {
        sharpSession->fail("sharp_coll_do_barrier", rc);
      }
    }
    const int64_t perIter = warm ? (nowNs() - w0) / static_cast<int64_t>(warm) : 0;
    const uint64_t iters = budgetedIterations(p, itersFor(p, 0), agreeMax(c, perIter));
    enter("barrier", 0);
    engine::testHold("mid-run", me, stage);
    RankResult rr;
    SlowestPerIteration samples(c, iters);
    int64_t sum = 0;
    const DeschedProbe probe;  // read before and after the timed loop, not inside it
    for (uint64_t i = 0; i < iters; ++i) {
      int64_t t0 = nowNs();
      int rc = 0;
      if (sharpSession)
        rc = sharpSession->barrier();
      else
        c.barrier();
      int64_t dt = nowNs() - t0;
      if (rc != 0) sharpSession->fail("sharp_coll_do_barrier", rc);
      samples.add(dt);
      sum += dt;
    }
    rr.meanUs = static_cast<double>(sum) / static_cast<double>(iters) / 1000;
    const json desched = deschedAcrossRanks(c, probe.stop());
    stats::Summary slowest = samples.finish();
    const AcrossRanks across = reduceAcrossRanks(c, rr);
    if (root) {
      report::Row row;
      row.descheduled = desched;
      row.iterations = iters;
      row.warmup = warm;
      uint64_t w = 0;
      row.collective = rowAcrossRanks(n, across, 0, slowest, w);
      row.collective->algorithm = sharpSession ? "sharp" : "dissemination";
      row.collective->wrong.reset();
      reporter->row(row);
    }
  } else if (p.test == "allreduce") {
    CostModel model;
    if (p.algo == "auto") {
      model = fitModel(c, p);
      extra["model"] = json{{"alpha_us", model.alphaUs},
                            {"beta_us_per_byte", model.betaUsPerByte},
                            {"gamma_us_per_byte", model.gammaUsPerByte}};
    }
    if (root) reporter->begin(collectiveRunInfo(c, p, info, extra, placement));
    const size_t es = elementSize(p.dtype);
    for (size_t idx = 0; idx < p.sizes.size(); ++idx) {
      const uint64_t count = p.sizes[idx] / es, bytes = count * es;
      const std::string algo = p.algo == "auto" ? chooseAlgorithm(model, n, bytes) : p.algo;
      const uint64_t warm = warmupWithBudget(p, warmupFor(p, bytes));
      fillInput(c.data(), count, p.dtype, me);
      enter(fmt::format("size {}", bytes), warm > 0);
      if (idx == 0 && warm > 0) engine::testHold("warmup", me, stage);
      int64_t w0 = nowNs();
      for (uint64_t i = 0; i < warm; ++i) {
        if (!sharpSession) {
          allreduce(c, algo, count, p.dtype, p.op);
        } else if (int rc = sharpSession->allreduce(0, bytes, count, p.dtype, p.op); rc != 0) {
          sharpSession->fail("sharp_coll_do_allreduce", rc);
        }
        c.barrier();
      }
      const int64_t perIter = warm ? (nowNs() - w0) / static_cast<int64_t>(warm) : 0;
      const uint64_t iters = budgetedIterations(p, itersFor(p, bytes), agreeMax(c, perIter));
      fillInput(c.data(), count, p.dtype, me);  // agreeMax used the data area
      enter(fmt::format("size {}", bytes), 0);
      if (idx == 1) engine::testHold("mid-run", me, stage);
      RankResult rr;
      SlowestPerIteration samples(c, iters);
      int64_t sum = 0;
      const DeschedProbe probe;  // read before and after the timed loop, not inside it
      for (uint64_t i = 0; i < iters; ++i) {
        int64_t t0 = nowNs();
        int rc = 0;
        if (sharpSession)
          rc = sharpSession->allreduce(0, bytes, count, p.dtype, p.op);
        else
          allreduce(c, algo, count, p.dtype, p.op);
        int64_t dt = nowNs() - t0;
        if (rc != 0) sharpSession->fail("sharp_coll_do_allreduce", rc);
        c.barrier();
        // A reduction of the buffered times used the data area: the input goes back (untimed).
        if (samples.add(dt)) fillInput(c.data(), count, p.dtype, me);
        sum += dt;
      }
      rr.meanUs = static_cast<double>(sum) / static_cast<double>(iters) / 1000;
      const DeschedDelta lost = probe.stop();
      if (p.check) {
        std::memset(c.data() + bytes, 0xee, bytes);  // a stale result cannot pass
        if (sharpSession) {
          if (int rc = sharpSession->allreduce(0, bytes, count, p.dtype, p.op))
            sharpSession->fail("sharp_coll_do_allreduce", rc);
        } else {
          allreduce(c, algo, count, p.dtype, p.op);
        }
        c.barrier();
        rr.wrong = countWrong(c.data() + bytes, count, p.dtype, p.op, n);
        out.wrong += rr.wrong;
      }
      const json desched = deschedAcrossRanks(c, lost);
      stats::Summary slowest = samples.finish();
      const AcrossRanks across = reduceAcrossRanks(c, rr);
      if (root) {
        report::Row row;
        row.descheduled = desched;
        row.bytes = bytes;
        row.iterations = iters;
        row.warmup = warm;
        uint64_t w = 0;
        row.collective = rowAcrossRanks(n, across, bytes, slowest, w);
        row.collective->algorithm = algo;
        row.collective->count = count;
        if (sharpSession) {
          // In-network reduction: the switches reduce, so nccl-tests' busbw factor does not
          // apply; one request per call, split by libsharp_coll into OST payloads.
          row.collective->busbwGBs = 0;
          row.collective->inNetwork = true;
          row.collective->ostPayloadBytes = sharpSession->payloadPerOst();
        }
        if (!p.check) row.collective->wrong.reset();
        out.wrong = w;
        reporter->row(row);
      }
    }
  } else if (p.test == "ring") {
    if (p.ringBytes < 1) throw UsageError("--size 0: the ring ping-pong needs at least 1 byte");
    if (root) reporter->begin(collectiveRunInfo(c, p, info, extra, placement));
    const uint64_t iters = itersFor(p, p.ringBytes), warm = warmupFor(p, p.ringBytes);
    if (n > 1) {
      for (const char* dir : {"right", "left"}) {
        bool right = std::strcmp(dir, "right") == 0;
        int target = right ? ringRight(me, n) : ringLeft(me, n);
        int source = right ? ringLeft(me, n) : ringRight(me, n);
        enter(fmt::format("ring ping-pong {}, to rank {}, from rank {}", dir, target, source), -1);
        const DeschedProbe probe;
        stats::Summary s = ringPhase(c, target, source, p.ringBytes, warm, iters);
        json result{{"dst", target},
                    {"median", s.median},
                    {"min", s.min},
                    {"mean", s.mean},
                    {"p99", s.p99}};
        if (const DeschedDelta d = probe.stop(); d.lostCpu()) result["desched"] = d.toJson();
        c.store().set(fmt::format("ring/{}/{}", dir, me), result.dump());
        c.barrier();
      }
    }
    if (root) {
      std::vector<report::RingLinkRow> rows;
      std::vector<LinkLatency> lat;
      std::vector<json> descheds;  // per row, before sorting: null or the source rank's loss
      for (const char* dir : {"right", "left"})
        for (int r = 0; r < n && n > 1; ++r) {
          json j = json::parse(c.store().get(fmt::format("ring/{}/{}", dir, r), p.timeoutMs),
                               nullptr, false);
          if (!j.is_object()) throw ProtocolError("malformed ring result");
          report::RingLinkRow l;
          l.srcRank = r;
          l.dstRank = j.value("dst", 0);
          l.srcHost = c.hostOf(r);
          l.dstHost = c.hostOf(l.dstRank);
          l.srcAddress = c.addressOf(r);
          l.dstAddress = c.addressOf(l.dstRank);
          l.direction = dir;
          l.medianUs = j.value("median", 0.0);
          l.minUs = j.value("min", 0.0);
          l.meanUs = j.value("mean", 0.0);
          l.p99Us = j.value("p99", 0.0);
          rows.push_back(l);
          descheds.push_back(j.contains("desched") && j["desched"].is_object() ? j["desched"]
                                                                               : json());
          lat.push_back(LinkLatency{l.srcRank, l.dstRank, l.medianUs});
        }
      OutlierReport o = findOutliers(lat, n, p.outlierK);
      std::vector<std::pair<report::RingLinkRow, json>> sorted;
      for (size_t i = 0; i < rows.size(); ++i) {
        rows[i].outlier = o.outlier[i];
        sorted.emplace_back(rows[i], descheds[i]);
      }
      std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
        return a.first.medianUs < b.first.medianUs;
      });
      size_t flagged = 0;
      for (const auto& [l, desched] : sorted) {
        report::Row row;
        row.descheduled = desched;
        row.bytes = p.ringBytes;
        row.iterations = iters;
        row.warmup = warm;
        row.link = l;
        reporter->row(row);
        flagged += l.outlier;
      }
      if (flagged) {
        std::string slow;
        for (int r : o.slowRanks)
          slow +=
              fmt::format("{}{} ({} {})", slow.empty() ? "" : ", ", r, c.hostOf(r), c.addressOf(r));
        out.outlierSummary = fmt::format(
            "ring: {} of {} links above {:.2f} us (baseline {:.2f} us + {} x max(MAD {:.2f}, "
            "link MAD {:.2f}, baseline/10)){}",
            flagged, rows.size(), o.thresholdUs, o.baselineUs, p.outlierK, o.madUs, o.linkMadUs,
            slow.empty() ? "" : "; slow rank(s): " + slow);
      }
    }
  } else {
    throw UsageError(fmt::format("unknown collective test '{}'", p.test));
  }
  // Everyone stays until rank 0 has read every result.
  enter("teardown", -1);
  engine::testHold("teardown", me, stage);
  c.barrier();
  if (sharpSession) sharpSession->close();
  return out;
}

}  // namespace

CollectiveOutcome runCollective(const CollectiveParams& p, const launch::RankInfo& info,
                                rendezvous::Store& store, report::Reporter* reporter) {
  std::string stage = "connect";
  try {
    return runCollectiveIn(p, info, store, reporter, stage);
  } catch (const std::exception& e) {
    engine::rethrowDuring(e, stage);  // every error names the phase: connect, size N, teardown
  }
}

}  // namespace rdmabench::collective
