#pragma once
// The measurement core: the timed loops every command runs, one clock and one method each.
// The point-to-point engines (pingpong.cc, bandwidth_window.cc) and the N-rank commands
// (pairs, ring and congestion in lib/collective) call these; none keeps a private copy.
//
//  - runIterations: the ping-pong / exchange loop (perftest ib_*_lat, osu_latency): per
//    iteration t0, post and wait for the answer, t1; warmup iterations first in the same loop,
//    unrecorded. Sample = (t1 - t0) / 2 (one-way latency, as perftest, OSU, IMB) or t1 - t0.
//  - runWindows: osu_bw's window loop: per iteration post a window, wait for it (the target's
//    acknowledgement for send); the measured interval starts before the first measured window.
//  - pollUntil: a poll loop with a check every N polls (deadlines, a store's liveness check)
//    that reads no clock itself: an unused check costs a countdown per poll; runUntilStopped
//    times such a loop from its first post to the stop.
//
// The clock is a callable returning nanoseconds (differences only): pass &measureNs (the
// measurement clock, common/measure_clock.h); tests inject a fake. The loops are templates over
// the caller's operations (inlined); they neither allocate, format nor throw themselves: what
// the operations throw (TimeoutError, TransportError from engine::Progress) propagates.
// Thread-safety: none of their own; one loop per thread, on that thread's device.

#include <cstdint>

namespace rdmabench::engine {

// Counts of runIterations: `warmup` iterations run first and are not recorded, then
// `iterations` measured ones, each recorded once.
struct IterationLoop {
  uint64_t warmup = 0;
  uint64_t iterations = 0;
  // true: each sample is (t1 - t0) / 2, the one-way latency of a ping-pong (send, write);
  // false: t1 - t0 (a read's round trip, one iteration of an exchange).
  bool halfRoundTrip = true;
};

// Defaults for the optional steps of runIterations' operations (derive from it).
struct IterationHooks {
  void prepare(uint64_t /*i*/) {}    // untimed, before t0 (a --check pattern)
  void measuring(int64_t /*t0*/) {}  // iteration `warmup` starts at t0 (warmup over)
  void finish(uint64_t /*i*/) {}     // untimed, after t1 (repost a receive, verify)
};

// Runs warmup + iterations iterations; for iteration i:
//   ops.prepare(i); t0 = now(); if (i == warmup) ops.measuring(t0);
//   ops.exchange(i);                                  // timed: post, wait for the answer
//   t1 = now(); ops.finish(i); if (i >= warmup) ops.record(sample);  // sample in ns
// Returns the t0 of the first measured iteration (the start of the measured wall time), or
// INT64_MIN when no measured iteration ran.
template <class Clock, class Ops>
int64_t runIterations(const IterationLoop& loop, Clock&& now, Ops& ops) {
  const uint64_t total = loop.warmup + loop.iterations;
  int64_t start = INT64_MIN;
  for (uint64_t i = 0; i < total; ++i) {
    ops.prepare(i);
    const int64_t t0 = now();
    if (i == loop.warmup) {
      start = t0;
      ops.measuring(t0);
    }
    ops.exchange(i);
    const int64_t t1 = now();
    ops.finish(i);
    if (i >= loop.warmup) ops.record(loop.halfRoundTrip ? (t1 - t0) / 2 : t1 - t0);
  }
  return start;
}

// Counts of runWindows, in windows.
struct WindowLoop {
  uint64_t warmup = 0;
  uint64_t iterations = 0;
};

// osu_bw's window loop; for iteration it:
//   if (it == warmup) { ops.measuring(); t0 = now(); }   // start handshakes, then the clock
//   ops.post(it); ops.wait(it);                          // a window out, its delivery awaited
// Returns t0: the measured interval starts before the first measured window is posted (now()
// before the loop when warmup >= warmup + iterations, i.e. no measured window). The interval's
// end is the caller's read of the clock after its closing step (the last window's
// acknowledgement is already delivery for a unidirectional send).
template <class Clock, class Ops>
int64_t runWindows(const WindowLoop& loop, Clock&& now, Ops& ops) {
  const uint64_t total = loop.warmup + loop.iterations;
  int64_t t0 = now();
  for (uint64_t it = 0; it < total; ++it) {
    if (it == loop.warmup) {
      ops.measuring();
      t0 = now();
    }
    ops.post(it);
    ops.wait(it);
  }
  return t0;
}

// Polls until done(): `poll()` once per turn, and `check()` every `checkEvery` polls (0: never).
// done() is asked before each poll. Polls are counted down: no divide, no clock.
template <class Done, class Poll, class Check>
void pollUntil(Done&& done, Poll&& poll, uint32_t checkEvery, Check&& check) {
  uint32_t left = checkEvery;
  while (!done()) {
    poll();
    if (left != 0 && --left == 0) {
      left = checkEvery;
      check();
    }
  }
}

// A stream timed until told to stop (congestion's aggressor: windows out until the victims'
// leader says stop): t0 = now(); ops.start(); then pollUntil(ops.stopped(), ops.poll(),
// checkEvery, ops.check()); returns now() - t0 in ns, read after the poll that saw the stop.
template <class Clock, class Ops>
int64_t runUntilStopped(Clock&& now, Ops& ops, uint32_t checkEvery) {
  const int64_t t0 = now();
  ops.start();
  pollUntil([&ops] { return ops.stopped(); }, [&ops] { ops.poll(); }, checkEvery,
            [&ops] { ops.check(); });
  return now() - t0;
}

}  // namespace rdmabench::engine
