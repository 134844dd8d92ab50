// `rdmabench allreduce`: the timed loop per size, the --check pass and the cost model of
// --algo auto (bench.h, model.h).
#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collective/allreduce.h"
#include "collective/bench_calls.h"
#include "collective/bench_run.h"
#include "collective/pairs_loops.h"
#include "common/error.h"
#include "common/measure_clock.h"

namespace rdmabench::collective::detail {

using nlohmann::json;

namespace {

// Mean one-way latency (RTT/2, us) of `iters` ping-pongs of `bytes` between ranks 0 and 1: the
// ping-pong engine on their link (pairs' measurements, pairs_loops.h); rank 0 measures, rank 1
// answers (and returns 0: every rank takes rank 0's model from the store).
double pingPong01(Communicator& c, uint64_t bytes, uint64_t warmup, uint64_t iters) {
  PairLatency t;
  t.run.bytes = bytes;
  t.run.warmup = warmup;
  t.run.iterations = iters;
  t.step = "model ping-pong with rank {}";
  if (c.rank() == 0) return pairLatency(c, 1, true, t).samples.summarize().mean;
  pairLatency(c, 0, false, t);
  return 0;
}

json modelJson(const CostModel& m) {
  return json{{"alpha_us", m.alphaUs},
              {"beta_us_per_byte", m.betaUsPerByte},
              {"gamma_us_per_byte", m.gammaUsPerByte}};
}

// One size of the sweep: its element count, bytes and planned algorithm (built before the
// loops: a timed call neither allocates nor formats).
struct SizeRun {
  size_t index;  // in p.sizes (test holds: warmup at the first, mid-run at the second)
  uint64_t count, bytes;
  std::string algo;    // the report's name ("sharp" included)
  AllreducePlan plan;  // the data plane's (unused with SHARP)
};

// One allreduce of the size (bench_calls.h): data plane or SHARP, then an untimed barrier
// (osu_allreduce, IMB's -sync on).
struct AllreduceCalls {
  BenchRun& r;
  const SizeRun& s;
  int call() {
    if (r.sharp) return r.sharp->allreduce(0, s.bytes, s.count, r.p.dtype, r.p.op);
    s.plan.run(r.c);
    return 0;
  }
  void failed(int rc) { r.sharp->fail("sharp_coll_do_allreduce", rc); }
  void after() { r.c.barrier(); }
  // A reduction of the buffered times used the data area: the input goes back (untimed).
  void reduced() { fillInput(r.c.data(), s.count, r.p.dtype, r.me()); }
};

// Warmup, each call followed by a barrier; the agreed iteration count of the timed loop.
uint64_t warmupAndAgree(BenchRun& r, const SizeRun& s, uint64_t warm) {
  const CollectiveParams& p = r.p;
  fillInput(r.c.data(), s.count, p.dtype, r.me());
  r.enter(fmt::format("size {}", s.bytes), warm > 0);
  if (s.index == 0 && warm > 0) engine::testHold("warmup", r.me(), r.stage);
  AllreduceCalls calls{r, s};
  const int64_t perIter = warmupCalls(warm, calls);
  return budgetedIterations(p, itersFor(p, s.bytes), agreeMax(r.c, perIter));
}

// --check: one more call, its result compared with the local computation; wrong elements.
uint64_t checkOnce(BenchRun& r, const SizeRun& s) {
  const CollectiveParams& p = r.p;
  std::memset(r.c.data() + s.bytes, 0xee, s.bytes);  // a stale result cannot pass
  AllreduceCalls calls{r, s};
  if (const int rc = calls.call(); rc != 0) calls.failed(rc);
  calls.after();
  return countWrong(r.c.data() + s.bytes, s.count, p.dtype, p.op, r.n());
}

// Rank 0: the size's report row.
void reportSize(BenchRun& r, const SizeRun& s, uint64_t iters, uint64_t warm,
                const AcrossRanks& across, const stats::Summary& slowest, const json& desched) {
  report::Row row;
  row.descheduled = desched;
  row.bytes = s.bytes;
  row.iterations = iters;
  row.warmup = warm;
  row.collective = rowAcrossRanks(r.n(), across, s.bytes, slowest);
  row.collective->algorithm = s.algo;
  row.collective->count = s.count;
  if (r.sharp) {
    // In-network reduction: the switches reduce, so nccl-tests' busbw factor does not
    // apply; one request per call, split by libsharp_coll into OST payloads.
    row.collective->busbwGBs = 0;
    row.collective->inNetwork = true;
    row.collective->ostPayloadBytes = r.sharp->payloadPerOst();
  }
  if (!r.p.check) row.collective->wrong.reset();
  r.out.wrong = across.wrong;
  r.reporter->row(row);
}

void runSize(BenchRun& r, const SizeRun& s) {
  const CollectiveParams& p = r.p;
  const uint64_t warm = calibratedWarmupFor(p, s.bytes);
  const uint64_t iters = warmupAndAgree(r, s, warm);
  fillInput(r.c.data(), s.count, p.dtype, r.me());  // agreeMax used the data area
  r.enter(fmt::format("size {}", s.bytes), 0);
  if (s.index == 1) engine::testHold("mid-run", r.me(), r.stage);
  SlowestPerIteration samples(r.c, iters);
  const DeschedProbe probe;  // read before and after the timed loop, not inside it
  AllreduceCalls calls{r, s};
  RankResult rr = timeCalls(iters, samples, calls);
  const DeschedDelta lost = probe.stop();
  if (p.check) {
    rr.wrong = checkOnce(r, s);
    r.out.wrong += rr.wrong;
  }
  const json desched = deschedAcrossRanks(r.c, lost, r.p.yieldCpuShare);
  stats::Summary slowest = samples.finish();
  const AcrossRanks across = reduceAcrossRanks(r.c, rr);
  if (r.root()) reportSize(r, s, iters, warm, across, slowest, desched);
}

}  // namespace

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
    int64_t t0 = measureNs();
    for (int i = 0; i < 4; ++i)
      reduceInto(a.data(), b.data(), count, p.dtype, p.op);
    m.gammaUsPerByte =
        static_cast<double>(measureNs() - t0) / 4 / 1000 / static_cast<double>(bytes);
    c.store().set("model", modelJson(m).dump());
  }
  // Every rank takes rank 0's numbers so all choose the same algorithm per size.
  json j = json::parse(c.store().get("model", p.timeoutMs), nullptr, false);
  if (!j.is_object()) throw ProtocolError("malformed cost model in the store");
  m.alphaUs = j.value("alpha_us", 0.0);
  m.betaUsPerByte = j.value("beta_us_per_byte", 0.0);
  m.gammaUsPerByte = j.value("gamma_us_per_byte", 0.0);
  return m;
}

void runAllreduce(BenchRun& r) {
  const CollectiveParams& p = r.p;
  CostModel model;
  if (p.algo == "auto") {
    model = fitModel(r.c, p);
    r.extra["model"] = modelJson(model);
  }
  r.begin();
  const size_t es = elementSize(p.dtype);
  for (size_t idx = 0; idx < p.sizes.size(); ++idx) {
    const uint64_t count = p.sizes[idx] / es, bytes = count * es;
    const std::string algo = p.algo == "auto" ? chooseAlgorithm(model, r.n(), bytes) : p.algo;
    // SHARP reduces in the switches: a placeholder plan, never run.
    const Algorithm planned = r.sharp ? Algorithm::kTree : parseAlgorithm(algo);
    runSize(r, SizeRun{idx, count, bytes, algo,
                       AllreducePlan(r.me(), r.n(), planned, r.sharp ? 0 : count, p.dtype, p.op)});
  }
}

}  // namespace rdmabench::collective::detail
