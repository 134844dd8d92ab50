#pragma once
// Internal to collective/bench_barrier.cc and bench_allreduce.cc: the one iteration skeleton of
// the calls they time (osu_barrier, osu_allreduce), on the measurement core's ping-pong loop
// (engine/timed_loop.h runIterations, the full time per call: t1 - t0), and their warmup.
// Thread-safety: one thread per rank.

#include <cstdint>

#include "collective/bench_run.h"
#include "common/measure_clock.h"
#include "engine/timed_loop.h"

namespace rdmabench::collective::detail {

// Runs `warm` untimed calls, each `ops.call()` then `ops.after()` (a call's failure code
// reported through ops.failed), and returns the mean time of one, ns (0 when warm is 0): the
// calibration of budgetedIterations.
template <class Ops>
int64_t warmupCalls(uint64_t warm, Ops& ops) {
  const int64_t w0 = measureNs();
  for (uint64_t i = 0; i < warm; ++i) {
    if (const int rc = ops.call(); rc != 0) ops.failed(rc);
    ops.after();
  }
  return warm ? (measureNs() - w0) / static_cast<int64_t>(warm) : 0;
}

// The timed loop: `iters` calls, each timed on its own (t0, `ops.call()`, t1), then untimed: a
// failure code (!= 0) goes to `ops.failed(rc)` (it throws), `ops.after()` runs (allreduce's
// barrier, IMB's -sync on), and the time goes to `samples`; `ops.reduced()` runs when that
// reduced the buffered times through the data area (an input kept there must be written
// again). Returns this rank's mean time per call, us.
template <class Ops>
RankResult timeCalls(uint64_t iters, SlowestPerIteration& samples, Ops& ops) {
  struct Loop : engine::IterationHooks {
    Ops& ops;
    SlowestPerIteration& samples;
    int rc = 0;
    int64_t sum = 0;
    void exchange(uint64_t) { rc = ops.call(); }
    void finish(uint64_t) {
      if (rc != 0) ops.failed(rc);
      ops.after();
    }
    void record(int64_t ns) {
      if (samples.add(ns)) ops.reduced();
      sum += ns;
    }
  } loop{{}, ops, samples};
  engine::runIterations(engine::IterationLoop{0, iters, /*halfRoundTrip=*/false}, measureNs, loop);
  RankResult rr;
  rr.meanUs = static_cast<double>(loop.sum) / static_cast<double>(iters) / 1000;
  return rr;
}

}  // namespace rdmabench::collective::detail
