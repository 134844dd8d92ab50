// The timed loop stays clean: Progress runs the control-plane watchdog (a syscall) only after a
// stretch without completions, never while completions flow; dead peers and stalls are still
// noticed promptly. Runs on a fake device whose clock advances per poll (fake_device.h), so
// seconds of fake time take milliseconds and nothing depends on the machine's load.
#include "engine/progress.h"

#include <gtest/gtest.h>

#include <chrono>

#include "common/clock.h"
#include "common/error.h"
#include "common/measure_clock.h"
#include "engine/pingpong.h"
#include "fake_device.h"

namespace rdmabench::engine {
namespace {

using testing::fakeClockNs;
using testing::FakeDevice;
using testing::FakeEndpoint;
using testing::fakeNowNs;

constexpr int64_t kMs = 1'000'000;

struct ProgressFixture : ::testing::Test {
  void SetUp() override { fakeClockNs() = 1'000'000'000; }
};

using ProgressTest = ProgressFixture;

TEST_F(ProgressTest, NoWatchdogWhileCompletionsFlow) {
  // One completion every 100 polls of 10 us each (1 ms apart): 10 s of fake time.
  FakeDevice dev(10'000);
  int watchdogRuns = 0;
  Progress p(
      dev, 5000, [&] { ++watchdogRuns; }, "peer", transport::ProgressMode::kBusyPoll);
  p.setClock(&fakeNowNs);
  const int64_t start = fakeClockNs();
  for (int i = 0; i < 10'000; ++i) {
    dev.schedule(100, transport::Completion{}, true);
    size_t got = 0;
    while (got == 0)
      got = p.pollOnce([](const transport::Completion&) {});
  }
  EXPECT_GE(fakeClockNs() - start, 9'000 * kMs);
  // The old cadence (every 20 ms of idle spinning) would have run it ~500 times here.
  EXPECT_EQ(watchdogRuns, 0);
}

// The idle spin's periodic deadline check reads the measurement clock (rdtsc once --clock chose
// the TSC), not CLOCK_MONOTONIC: on an hpet clocksource (the rxe VM) every monotonic read is a
// system call, which a 4 KiB ping-pong's wait paid several times per message on both sides.
TEST_F(ProgressTest, IdleChecksReadTheMeasurementClock) {
  FakeDevice dev(10'000);
  Progress p(dev, 5000, nullptr, "peer", transport::ProgressMode::kBusyPoll);
  EXPECT_EQ(p.clock(), &measureNs);
  EXPECT_NE(p.clock(), &nowNs);
}

TEST_F(ProgressTest, WatchdogStartsAfterAStallOnly) {
  FakeDevice dev(10'000);  // 10 us per poll
  std::vector<int64_t> runsAt;
  Progress p(
      dev, 5000, [&] { runsAt.push_back(fakeClockNs()); }, "peer",
      transport::ProgressMode::kBusyPoll);
  p.setClock(&fakeNowNs);
  dev.schedule(1, transport::Completion{}, true);
  while (p.pollOnce([](const transport::Completion&) {}) == 0) {
  }
  const int64_t lastCompletion = fakeClockNs();
  while (fakeClockNs() - lastCompletion < 200 * kMs)
    p.pollOnce([](const transport::Completion&) {});
  ASSERT_FALSE(runsAt.empty());
  // Not before 50 ms without progress (the stall is noticed at most 64 polls late), not later
  // than 50 ms + one check interval; then every 20 ms.
  EXPECT_GE(runsAt.front() - lastCompletion, Progress::kWatchdogAfterNs);
  EXPECT_LE(runsAt.front() - lastCompletion, Progress::kWatchdogAfterNs + 2 * kMs);
  EXPECT_GE(runsAt.size(), 6u);
  EXPECT_LE(runsAt.size(), 9u);
  for (size_t i = 1; i < runsAt.size(); ++i)
    EXPECT_GE(runsAt[i] - runsAt[i - 1], Progress::kWatchdogEveryNs);
}

TEST_F(ProgressTest, DeadPeerStillDetectedPromptly) {
  FakeDevice dev(10'000);
  const int64_t died = fakeClockNs() + 30 * kMs;
  Progress p(
      dev, 5000,
      [&] {
        if (fakeClockNs() >= died) throw ProtocolError("peer closed the control connection");
      },
      "peer", transport::ProgressMode::kBusyPoll);
  p.setClock(&fakeNowNs);
  p.setPhase("size 8");
  try {
    for (;;)
      p.pollOnce([](const transport::Completion&) {});
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("size 8"), std::string::npos) << e.what();
  }
  // As fast as the old 20 ms cadence allowed for a peer dead since the start of a stall:
  // within 50 ms + 20 ms of the last progress.
  EXPECT_LE(fakeClockNs() - died, 50 * kMs);
}

TEST_F(ProgressTest, NoProgressTimeoutStillFires) {
  FakeDevice dev(100'000);  // 100 us per poll
  Progress p(dev, 300, nullptr, "peer 10.0.0.2", transport::ProgressMode::kBusyPoll);
  p.setClock(&fakeNowNs);
  p.setPhase("size 8, warmup");
  const int64_t start = fakeClockNs();
  EXPECT_THROW(
      {
        for (;;)
          p.pollOnce([](const transport::Completion&) {});
      },
      TimeoutError);
  EXPECT_GE(fakeClockNs() - start, 300 * kMs);
  // The stall is noticed at the first check (64 polls = 6.4 ms here), then 300 ms, checked
  // every 6.4 ms.
  EXPECT_LE(fakeClockNs() - start, 320 * kMs);
}

// A busy-polling loop whose peer stalls for more than kBackoffAfterNs sleeps between polls (a
// stopped or slow client no longer costs the server a core until --max-timeout); a passive
// target keeps polling.
TEST_F(ProgressTest, BusyPollBacksOffAfterALongStall) {
  for (bool passive : {false, true}) {
    FakeDevice dev(1'000'000);  // 1 ms of fake time per poll
    Progress p(dev, 60'000, nullptr, "peer", transport::ProgressMode::kBusyPoll);
    p.setClock(&fakeNowNs);
    p.setPassive(passive);
    dev.schedule(1, transport::Completion{}, true);
    while (p.pollOnce([](const transport::Completion&) {}) == 0) {
    }
    const int64_t last = fakeClockNs();
    while (fakeClockNs() - last < Progress::kBackoffAfterNs + 100 * kMs)
      p.pollOnce([](const transport::Completion&) {});
    // Sleeping 100 us per poll: 5000 polls take >= 500 ms; polling on, microseconds each.
    const int polls = passive ? 5000 : 200;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < polls; ++i)
      p.pollOnce([](const transport::Completion&) {});
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    if (passive)
      EXPECT_LT(us, 250'000) << "a passive target must keep busy polling";
    else
      EXPECT_GE(us, 200 * 100) << "200 idle polls after a 1.1 s stall slept " << us << " us";
  }
}

// Issue #26: timed loops name their step with a constant pattern and integers (Step), formatted
// only when an error names it; the text is what the formatted phase said before.
TEST(ProgressStep, FormattedOnlyInTheError) {
  EXPECT_EQ((Step{"ring allgather step {}: waiting for rank {}", 2, 5}).text(),
            "ring allgather step 2: waiting for rank 5");
  const int kids[] = {1, 2, 4};
  EXPECT_EQ((Step{"tree reduce: waiting for children rank {}", 0, 0, kids, 3}).text(),
            "tree reduce: waiting for children rank 1, 2, 4");
  EXPECT_EQ(Step{}.text(), "");
}

TEST_F(ProgressTest, TimeoutNamesTheStep) {
  FakeDevice dev(100'000);
  Progress p(dev, 300, nullptr, "", transport::ProgressMode::kBusyPoll);
  p.setClock(&fakeNowNs);
  p.setStage("size 64");
  p.setWarmup(false);
  p.setStep(Step{"barrier round {}: waiting for rank {}", 1, 3});
  try {
    for (;;)
      p.pollOnce([](const transport::Completion&) {});
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "during size 64, measuring: barrier round 1: waiting for rank 3"),
              std::string::npos)
        << e.what();
  }
  p.setPhase("verification pass");  // a text phase replaces the step
  EXPECT_EQ(p.where(), "size 64, measuring: verification pass");
}

// The whole ping-pong engine on the fake device: seconds of fake time with completions flowing
// and not one control-plane check inside the timed loop.
class PingPongClean : public ProgressFixture, public ::testing::WithParamInterface<std::string> {};

TEST_P(PingPongClean, NoWatchdogInTimedLoop) {
  FakeDevice dev(1'000);  // 1 us per poll; the echo takes 50 polls
  BufferLayout layout = BufferLayout::forMaxMessage(64);
  AlignedBuffer buf(layout.total());
  auto mr = dev.registerMemory(buf.data(), buf.size());
  FakeEndpoint ep(dev, 50);
  Link link;
  link.endpoint = &ep;
  link.region = mr.get();
  link.remote = mr->exportRegion();
  link.layout = layout;
  int watchdogRuns = 0;
  Progress progress(
      dev, 5000, [&] { ++watchdogRuns; }, "fake-peer", transport::ProgressMode::kBusyPoll);
  progress.setClock(&fakeNowNs);
  PingPongParams params;
  params.op = dataOp(parseOp(GetParam()));
  params.bytes = 8;
  params.iterations = 20'000;
  params.warmup = 100;
  params.check = params.op == DataOp::kSend;
  const int64_t start = fakeClockNs();
  PingPongResult r = runPingPong(dev, link, progress, params);
  EXPECT_GE(fakeClockNs() - start, 900 * kMs);  // ~1 s of fake time
  EXPECT_EQ(watchdogRuns, 0);
  EXPECT_EQ(r.samples.count(), 20'000u);
  EXPECT_EQ(r.checkErrors, 0u);
  if (params.op != DataOp::kRead) {
    // Moderated completions: one signaled post in signalEvery (64), plus the last one.
    EXPECT_EQ(ep.sends(), 20'100u);
    EXPECT_LE(ep.sends() - ep.unsignaled(), 20'100u / 64 + 2);
    EXPECT_EQ(dev.completionsReported,
              20'100u - ep.unsignaled() + (params.op == DataOp::kSend ? 20'100u : 0));
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, PingPongClean, ::testing::Values("send", "write", "read"));

// Write latency spins on the flag byte and polls every spinsPerPoll spins only where the transport
// lands writes without target progress; both paths give every sample, with --check clean.
struct TargetProgressDevice : FakeDevice {
  using FakeDevice::FakeDevice;
  transport::Caps caps() const override {
    transport::Caps c = FakeDevice::caps();
    c.rmaNeedsTargetProgress = true;
    return c;
  }
};

TEST_F(ProgressTest, WriteSpinPollsEveryKOrEverySpin) {
  for (bool needsTarget : {false, true})
    for (uint32_t k : {1u, 16u}) {
      TargetProgressDevice targetDev(1'000);
      FakeDevice plainDev(1'000);
      FakeDevice& dev = needsTarget ? static_cast<FakeDevice&>(targetDev) : plainDev;
      BufferLayout layout = BufferLayout::forMaxMessage(64);
      AlignedBuffer buf(layout.total());
      auto mr = dev.registerMemory(buf.data(), buf.size());
      FakeEndpoint ep(dev, 5);
      Link link;
      link.endpoint = &ep;
      link.region = mr.get();
      link.remote = mr->exportRegion();
      link.layout = layout;
      Progress progress(dev, 5000, nullptr, "fake-peer", transport::ProgressMode::kBusyPoll);
      progress.setClock(&fakeNowNs);
      PingPongParams params;
      params.op = DataOp::kWrite;
      params.bytes = 32;
      params.iterations = 500;
      params.warmup = 10;
      params.check = true;
      params.spinsPerPoll = k;
      PingPongResult r = runPingPong(dev, link, progress, params);
      EXPECT_EQ(r.samples.count(), 500u) << needsTarget << " " << k;
      EXPECT_EQ(r.checkErrors, 0u) << needsTarget << " " << k;
      EXPECT_EQ(ep.sends(), 510u);
    }
}

// The responder (the server's side) calls `ready` (where the server sends "size ready") only
// once its first receive is posted and before it sends or waits: a client told earlier sends
// into an empty receive queue, which soft-RoCE fails after about a second of RNR
// (docs/fault-matrix.md).
class PingPongReady : public ProgressFixture, public ::testing::WithParamInterface<std::string> {};

TEST_P(PingPongReady, ResponderPostsItsReceiveBeforeReady) {
  FakeDevice dev(1'000);
  BufferLayout layout = BufferLayout::forMaxMessage(64);
  AlignedBuffer buf(layout.total());
  auto mr = dev.registerMemory(buf.data(), buf.size());
  FakeEndpoint ep(dev, 50);
  Link link;
  link.endpoint = &ep;
  link.region = mr.get();
  link.remote = mr->exportRegion();
  link.layout = layout;
  Progress progress(
      dev, 5000, [] {}, "fake-peer", transport::ProgressMode::kBusyPoll);
  progress.setClock(&fakeNowNs);
  PingPongParams params;
  params.op = dataOp(parseOp(GetParam()));
  params.bytes = 8;
  params.iterations = 10;
  params.initiator = false;
  int calls = 0;
  uint64_t recvsAtReady = 0, sendsAtReady = 0, pollsAtReady = 0;
  struct Stop {};
  params.ready = [&] {
    ++calls;
    recvsAtReady = ep.recvsPosted();
    sendsAtReady = ep.sends();
    pollsAtReady = dev.polls();
    throw Stop{};  // the client would send now; this test only checks the order
  };
  EXPECT_THROW(runPingPong(dev, link, progress, params), Stop);
  EXPECT_EQ(calls, 1);
  // send: the echo's receive; read: the initiator's final control message; write: none needed.
  EXPECT_EQ(recvsAtReady, params.op == DataOp::kWrite ? 0u : 1u);
  EXPECT_EQ(sendsAtReady, 0u);
  EXPECT_EQ(pollsAtReady, 0u);
}

INSTANTIATE_TEST_SUITE_P(Ops, PingPongReady, ::testing::Values("send", "write", "read"));

}  // namespace
}  // namespace rdmabench::engine
