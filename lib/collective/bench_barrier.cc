// `rdmabench barrier`: the dissemination (or SHARP) barrier's timed loop (bench.h).
#include "collective/bench_calls.h"
#include "collective/bench_run.h"

namespace rdmabench::collective::detail {

namespace {

// One barrier (bench_calls.h): the dissemination barrier over the data plane, or SHARP's.
struct BarrierCalls {
  BenchRun& r;
  int call() {
    if (r.sharp) return r.sharp->barrier();
    r.c.barrier();
    return 0;
  }
  void failed(int rc) { r.sharp->fail("sharp_coll_do_barrier", rc); }
  void after() {}
  void reduced() {}
};

}  // namespace

void runBarrier(BenchRun& r) {
  const CollectiveParams& p = r.p;
  r.begin();
  const uint64_t warm = calibratedWarmupFor(p, 0);
  // Errors name the phase (they said "during connect" for every barrier failure).
  r.enter("barrier", warm > 0);
  if (warm > 0) engine::testHold("warmup", r.me(), r.stage);
  BarrierCalls calls{r};
  const int64_t perIter = warmupCalls(warm, calls);
  const uint64_t iters = budgetedIterations(p, itersFor(p, 0), agreeMax(r.c, perIter));
  r.enter("barrier", 0);
  engine::testHold("mid-run", r.me(), r.stage);
  SlowestPerIteration samples(r.c, iters);
  const DeschedProbe probe;  // read before and after the timed loop, not inside it
  const RankResult rr = timeCalls(iters, samples, calls);
  const nlohmann::json desched = deschedAcrossRanks(r.c, probe.stop(), r.p.yieldCpuShare);
  stats::Summary slowest = samples.finish();
  const AcrossRanks across = reduceAcrossRanks(r.c, rr);
  if (!r.root()) return;
  report::Row row;
  row.descheduled = desched;
  row.iterations = iters;
  row.warmup = warm;
  row.collective = rowAcrossRanks(r.n(), across, 0, slowest);
  row.collective->algorithm = r.sharp ? "sharp" : "dissemination";
  row.collective->wrong.reset();
  r.reporter->row(row);
}

}  // namespace rdmabench::collective::detail
