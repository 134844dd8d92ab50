// Errors name the phase a fault hit (issue #12's fault matrix, docs/fault-matrix.md): where()
// composes stage, iteration mark and step; rethrowDuring adds the phase without changing the
// error class (so the exit status); the test-only hold hook fires for its phase and rank only.
#include <cstdlib>

#include <gtest/gtest.h>

#include "common/error.h"
#include "engine/progress.h"
#include "fake_device.h"

namespace rdmabench::engine {
namespace {

using testing::FakeDevice;
using testing::fakeNowNs;

TEST(FaultPhase, WhereNamesStageIterationsAndStep) {
  FakeDevice dev(1000);
  Progress p(dev, 1000, nullptr, "peer", transport::ProgressMode::kBusyPoll);
  EXPECT_EQ(p.where(), "");
  p.setStage("connect");
  EXPECT_EQ(p.where(), "connect");
  p.setStage("size 8");
  p.setWarmup(true);
  EXPECT_EQ(p.where(), "size 8, warmup");
  p.setPhase("tree: waiting for parent rank 2");
  EXPECT_EQ(p.where(), "size 8, warmup: tree: waiting for parent rank 2");
  p.setWarmup(false);
  EXPECT_EQ(p.where(), "size 8, measuring: tree: waiting for parent rank 2");
  p.setStage("teardown");  // clears the step and the mark
  EXPECT_EQ(p.where(), "teardown");
}

TEST(FaultPhase, TimeoutNamesPhaseAndPeerOnlyWhenKnown) {
  for (const char* peer : {"10.0.0.1:18515", ""}) {
    FakeDevice dev(100'000'000);  // 100 ms per poll: the 200 ms timeout fires in a few checks
    Progress p(dev, 200, nullptr, peer, transport::ProgressMode::kBusyPoll);
    p.setClock(&fakeNowNs);
    p.setStage("size 64");
    p.setWarmup(false);
    try {
      for (;;)
        p.pollOnce([](const transport::Completion&) {});
    } catch (const TimeoutError& e) {  // the loop ends only here
      std::string m = e.what();
      EXPECT_NE(m.find("during size 64, measuring"), std::string::npos) << m;
      EXPECT_EQ(m.find("from peer") != std::string::npos, *peer != '\0') << m;
    }
  }
}

// Calls rethrowDuring on `e` from inside a catch block, as its callers do.
template <typename E>
std::pair<int, std::string> rethrown(const E& e, const std::string& phase) {
  try {
    try {
      throw e;
    } catch (const std::exception& caught) {
      rethrowDuring(caught, phase);
    }
  } catch (const std::exception& out) {
    return {exitCodeFor(out), out.what()};
  }
  return {0, ""};
}

TEST(FaultPhase, RethrowDuringKeepsTheClass) {
  EXPECT_EQ(rethrown(TimeoutError("timed out"), "connect"),
            std::make_pair(3, std::string("timed out (during connect)")));
  EXPECT_EQ(rethrown(InterruptedError("interrupted"), "teardown"),
            std::make_pair(4, std::string("interrupted (during teardown)")));
  EXPECT_EQ(rethrown(PeerError("peer died"), "size 8, warmup"),
            std::make_pair(1, std::string("peer died (during size 8, warmup)")));
  // A message that already names its phase, and usage errors, are left alone.
  EXPECT_EQ(rethrown(TimeoutError("no progress during size 8"), "size 8"),
            std::make_pair(3, std::string("no progress during size 8")));
  EXPECT_EQ(rethrown(UsageError("--max-bytes"), "connect"),
            std::make_pair(2, std::string("--max-bytes")));
  try {
    try {
      throw PeerError("x");
    } catch (const std::exception& e) {
      rethrowDuring(e, "connect");
    }
  } catch (const PeerError&) {
    SUCCEED();  // still a PeerError: engines prefer the peer's report to their own symptom
  }
}

TEST(FaultPhase, HoldHookFiresForItsPhaseAndRankOnly) {
  ::setenv("RDMABENCH_TEST_HOLD", "warmup@2", 1);
  ::setenv("RDMABENCH_TEST_HOLD_MS", "0", 1);
  ::testing::internal::CaptureStderr();
  testHold("warmup", 1, "size 8, warmup");
  testHold("connect", 2, "connect");
  testHold("warmup", 2, "size 8, warmup");
  std::string err = ::testing::internal::GetCapturedStderr();
  ::unsetenv("RDMABENCH_TEST_HOLD");
  ::unsetenv("RDMABENCH_TEST_HOLD_MS");
  EXPECT_NE(err.find("holding at warmup"), std::string::npos) << err;
  EXPECT_EQ(err.find("connect"), std::string::npos) << err;
  EXPECT_EQ(err.find("holding"), err.rfind("holding")) << err;  // once
}

}  // namespace
}  // namespace rdmabench::engine
