// The measurement core (engine/timed_loop.h): the order of a timed iteration's steps, which
// iterations are warmup, the samples (half round trip or not) on a fake clock, the window
// loop's start of the measured interval and the poll loop's check cadence. Counts and orders
// only: the clock is a counter.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/timed_loop.h"

namespace rdmabench::engine {
namespace {

// A clock that advances by 10 ns per read, plus what the exchange "takes".
struct FakeClock {
  int64_t t = 0;
  int64_t operator()() { return t += 10; }
};

struct Recorder : IterationHooks {
  FakeClock& clock;
  std::vector<std::string> log;
  std::vector<int64_t> samples;
  explicit Recorder(FakeClock& c) : clock(c) {}
  void prepare(uint64_t i) { log.push_back("prepare " + std::to_string(i)); }
  void measuring(int64_t t0) { log.push_back("measuring " + std::to_string(t0)); }
  void exchange(uint64_t i) {
    log.push_back("exchange " + std::to_string(i));
    clock.t += 100 * static_cast<int64_t>(i + 1);  // iteration i takes 100 (i + 1) + 10 ns
  }
  void finish(uint64_t i) { log.push_back("finish " + std::to_string(i)); }
  void record(int64_t ns) { samples.push_back(ns); }
};

TEST(TimedLoop, IterationsRunWarmupFirstAndRecordOnlyMeasured) {
  FakeClock clock;
  Recorder r(clock);
  const int64_t start = runIterations(IterationLoop{2, 3, /*halfRoundTrip=*/true}, clock, r);
  const std::vector<std::string> want{"prepare 0",  "exchange 0", "finish 0",   "prepare 1",
                                      "exchange 1", "finish 1",   "prepare 2",  "measuring 350",
                                      "exchange 2", "finish 2",   "prepare 3",  "exchange 3",
                                      "finish 3",   "prepare 4",  "exchange 4", "finish 4"};
  EXPECT_EQ(r.log, want);
  // Clock reads: iteration 0 at 10 and 120 (+100), iteration 1 at 130 and 340 (+200), so the
  // first measured iteration starts at 350.
  EXPECT_EQ(start, 350);
  // Iteration i lasts 100 (i + 1) + 10 ns (its exchange plus one clock step); half recorded.
  EXPECT_EQ(r.samples, (std::vector<int64_t>{155, 205, 255}));
}

TEST(TimedLoop, RoundTripSamplesAreNotHalved) {
  FakeClock clock;
  Recorder r(clock);
  runIterations(IterationLoop{0, 2, /*halfRoundTrip=*/false}, clock, r);
  EXPECT_EQ(r.samples, (std::vector<int64_t>{110, 210}));
  EXPECT_EQ(r.log.at(1), "measuring 10");  // no warmup: the first iteration is measured
}

TEST(TimedLoop, NoMeasuredIterationReturnsNoStart) {
  FakeClock clock;
  Recorder r(clock);
  EXPECT_EQ(runIterations(IterationLoop{2, 0, true}, clock, r), INT64_MIN);
  EXPECT_TRUE(r.samples.empty());
}

struct WindowRecorder {
  FakeClock& clock;
  std::vector<std::string> log;
  void measuring() {
    log.push_back("measuring");
    clock.t += 1000;  // a start handshake before the clock reads t0
  }
  void post(uint64_t it) { log.push_back("post " + std::to_string(it)); }
  void wait(uint64_t it) {
    log.push_back("wait " + std::to_string(it));
    clock.t += 5;
  }
};

TEST(TimedLoop, WindowsStartTheClockAfterTheHandshakeBeforeTheFirstMeasuredWindow) {
  FakeClock clock;
  WindowRecorder w{clock, {}};
  const int64_t t0 = runWindows(WindowLoop{1, 2}, clock, w);
  EXPECT_EQ(w.log, (std::vector<std::string>{"post 0", "wait 0", "measuring", "post 1", "wait 1",
                                             "post 2", "wait 2"}));
  EXPECT_EQ(t0, 10 + 5 + 1000 + 10);  // first read, window 0, handshake, the t0 read
}

TEST(TimedLoop, PollUntilChecksEveryNPolls) {
  int polls = 0, checks = 0;
  pollUntil([&] { return polls == 10; }, [&] { ++polls; }, 4, [&] { ++checks; });
  EXPECT_EQ(polls, 10);
  EXPECT_EQ(checks, 2);  // after polls 4 and 8
  polls = checks = 0;
  pollUntil([&] { return polls == 10; }, [&] { ++polls; }, 0, [&] { ++checks; });
  EXPECT_EQ(checks, 0);  // 0: never
  polls = checks = 0;
  pollUntil([&] { return true; }, [&] { ++polls; }, 1, [&] { ++checks; });
  EXPECT_EQ(polls + checks, 0);  // done before the first poll
}

struct StreamRecorder {
  FakeClock& clock;
  int polls = 0, checks = 0, stopAfter = 5;
  std::vector<std::string> log;
  void start() { log.push_back("start"); }
  bool stopped() const { return polls == stopAfter; }
  void poll() {
    ++polls;
    clock.t += 7;
  }
  void check() { ++checks; }
};

TEST(TimedLoop, StreamIsTimedFromBeforeItsStartToTheStop) {
  FakeClock clock;
  StreamRecorder s{clock};
  // Reads at 10 (t0) and at 55 (after 5 polls of 7 ns): 45 ns.
  EXPECT_EQ(runUntilStopped(clock, s, 2), 45);
  EXPECT_EQ(s.log, std::vector<std::string>{"start"});
  EXPECT_EQ(s.polls, 5);
  EXPECT_EQ(s.checks, 2);  // after polls 2 and 4
}

}  // namespace
}  // namespace rdmabench::engine
