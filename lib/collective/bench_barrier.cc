// `rdmabench barrier`: the dissemination (or SHARP) barrier's timed loop (bench.h).
#include "collective/bench_run.h"
#include "common/measure_clock.h"

namespace rdmabench::collective::detail {

namespace {

// One barrier: the dissemination barrier over the data plane, or SHARP's.
void barrierOnce(BenchRun& r) {
  if (!r.sharp) {
    r.c.barrier();
  } else if (int rc = r.sharp->barrier(); rc != 0) {
    r.sharp->fail("sharp_coll_do_barrier", rc);
  }
}

// The timed loop: this rank's mean (us) and the slowest rank per iteration.
RankResult timeBarriers(BenchRun& r, uint64_t iters, SlowestPerIteration& samples) {
  RankResult rr;
  int64_t sum = 0;
  for (uint64_t i = 0; i < iters; ++i) {
    int64_t t0 = measureNs();
    int rc = 0;
    if (r.sharp)
      rc = r.sharp->barrier();
    else
      r.c.barrier();
    int64_t dt = measureNs() - t0;
    if (rc != 0) r.sharp->fail("sharp_coll_do_barrier", rc);
    samples.add(dt);
    sum += dt;
  }
  rr.meanUs = static_cast<double>(sum) / static_cast<double>(iters) / 1000;
  return rr;
}

}  // namespace

void runBarrier(BenchRun& r) {
  const CollectiveParams& p = r.p;
  r.begin();
  const uint64_t warm = calibratedWarmupFor(p, 0);
  // Errors name the phase (they said "during connect" for every barrier failure).
  r.enter("barrier", warm > 0);
  if (warm > 0) engine::testHold("warmup", r.me(), r.stage);
  int64_t w0 = measureNs();
  for (uint64_t i = 0; i < warm; ++i)
    barrierOnce(r);
  const int64_t perIter = warm ? (measureNs() - w0) / static_cast<int64_t>(warm) : 0;
  const uint64_t iters = budgetedIterations(p, itersFor(p, 0), agreeMax(r.c, perIter));
  r.enter("barrier", 0);
  engine::testHold("mid-run", r.me(), r.stage);
  SlowestPerIteration samples(r.c, iters);
  const DeschedProbe probe;  // read before and after the timed loop, not inside it
  const RankResult rr = timeBarriers(r, iters, samples);
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
