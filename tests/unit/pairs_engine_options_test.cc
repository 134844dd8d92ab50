// pairs takes lat / bw's engine options (--op, --mode, --cq-mod, -l, --tx-depth; issue #37):
// parsed by the same code into the same test descriptions, refused with the same messages, and
// handed to the engines as the same parameters lat / bw hand them (engine/spec_params.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/coll_options.h"
#include "cli/options.h"
#include "collective/pairs_spec.h"
#include "common/error.h"
#include "engine/spec_params.h"
#include "fake_device.h"

namespace rdmabench::cli {
namespace {

std::string pairsError(const std::vector<std::string>& args) {
  try {
    parseCollectiveCommand("pairs", args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string bwError(const std::vector<std::string>& args) {
  try {
    parseClientCommand("bw", args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(PairsEngineOptions, DefaultsAreWindowModeSendOnePostPerCall) {
  const collective::PairsParams p = parseCollectiveCommand("pairs", {}).pairsParams();
  EXPECT_EQ(p.op, engine::Op::kSend);
  EXPECT_EQ(p.mode, engine::BwMode::kWindow);
  EXPECT_EQ(p.cqModeration, 1u);
  EXPECT_EQ(p.postList, 1u);
  EXPECT_EQ(p.txDepth, 0u);
}

TEST(PairsEngineOptions, ParsedIntoParams) {
  CollCommand c =
      parseCollectiveCommand("pairs", {"-t", "socket", "--op", "write", "--mode", "stream", "-l",
                                       "4", "--cq-mod", "8", "--tx-depth", "64"});
  const collective::PairsParams& p = c.pairsParams();
  EXPECT_EQ(p.op, engine::Op::kWrite);
  EXPECT_EQ(p.mode, engine::BwMode::kStream);
  EXPECT_EQ(p.postList, 4u);
  EXPECT_EQ(p.cqModeration, 8u);
  EXPECT_EQ(p.txDepth, 64u);
  EXPECT_EQ(p.device.txDepth, 64u);  // the send queue depth too, as bw's --tx-depth
  // Stream mode without --cq-mod: perftest's moderation, as bw.
  EXPECT_EQ(parseCollectiveCommand("pairs", {"--mode", "stream"}).pairsParams().cqModeration, 100u);
  EXPECT_EQ(
      parseCollectiveCommand("pairs", {"--mode", "stream", "-l", "4"}).pairsParams().cqModeration,
      4u);
}

// Every refusal of these options reads as bw's for the same values (pairs' window is bw's -w 16).
TEST(PairsEngineOptions, UsageErrorsAreBwsWordForWord) {
  const std::vector<std::vector<std::string>> cases = {
      {"-t", "socket", "--op", "tagged"},
      {"--op", "atomic"},
      {"--mode", "bursty"},
      {"--mode", "stream", "-w", "8"},
      {"-t", "socket", "-w", "16", "--cq-mod", "17"},
      {"-t", "socket", "-w", "16", "-l", "17"},
      {"--cq-mod", "0"},
      {"-l", "5000"},
      {"-t", "socket", "--mode", "stream", "-l", "200"},  // without -t: refused once chosen
      {"-t", "socket", "--mode", "stream", "--cq-mod", "200"},
      {"-t", "socket", "--mode", "stream", "--tx-depth", "16", "--cq-mod", "17"},
      {"--tx-depth", "0"},
  };
  for (const auto& args : cases) {
    const std::string p = pairsError(args), b = bwError(args);
    EXPECT_FALSE(p.empty()) << args[1];
    EXPECT_EQ(p, b) << args[1];
  }
  EXPECT_EQ(pairsError({"-t", "socket", "--op", "tagged"}),
            "--op tagged: only for -t ofi with --ep rdm (FI_TAGGED), not -t socket");
  EXPECT_EQ(pairsError({"-t", "socket", "--cq-mod", "17"}),
            "--cq-mod 17: out of range 1..16 (the window)");
}

// pairs and bw given the same options hand the engines the same parameters (the structural half
// of "pairs gives lat / bw's figures": one entry point, one mapping, equal counts).
TEST(PairsEngineOptions, EnginesGetBwsAndLatsParameters) {
  const std::vector<std::string> opts = {"-t",       "socket", "--op",       "write",
                                         "--mode",   "stream", "-l",         "4",
                                         "--cq-mod", "8",      "--tx-depth", "64"};
  const collective::PairsParams p = parseCollectiveCommand("pairs", opts).pairsParams();
  std::vector<std::string> bwArgs = opts;
  bwArgs.insert(bwArgs.end(), {"-s", "1M", "-n", "160"});
  const engine::TestSpec bw = parseClientCommand("bw", bwArgs).client.spec;
  const engine::ProbeCounts k = engine::probeCounts(p.iterations, p.warmup, p.bwIters);
  const collective::PairBandwidthCounts n = collective::pairBandwidthCounts(p, k);
  EXPECT_EQ(n.iterations, 160u);  // --bw-iters 10 x 16 messages
  EXPECT_EQ(n.warmup, 32u);
  const engine::BandwidthParams a =
      engine::bandwidthParams(collective::pairsBandwidthSpec(p), p.bwBytes, n.iterations, 0, true);
  const engine::BandwidthParams b =
      engine::bandwidthParams(bw, bw.sizes[0], bw.iterationsFor(bw.sizes[0]), 0, true);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.window, b.window);
  EXPECT_EQ(a.window, 64u);  // the stream's posts in flight = --tx-depth
  EXPECT_EQ(a.cqModeration, b.cqModeration);
  EXPECT_EQ(a.postList, b.postList);
  EXPECT_EQ(a.bidirectional, b.bidirectional);
  const engine::TestSpec lat =
      parseClientCommand("lat", {"-t", "socket", "--op", "read", "-s", "8"}).client.spec;
  collective::PairsParams pr = p;
  pr.op = engine::Op::kRead;
  const engine::PingPongParams la =
      engine::pingPongParams(collective::pairsLatencySpec(pr), 8, 1000, 100, true);
  const engine::PingPongParams lb = engine::pingPongParams(lat, 8, 1000, 100, true);
  EXPECT_EQ(la.op, engine::DataOp::kRead);
  EXPECT_EQ(la.op, lb.op);
  EXPECT_EQ(la.check, lb.check);
  EXPECT_EQ(la.signalEvery, lb.signalEvery);
}

// The options define the measurement: they enter the run id every rank derives, so ranks
// started by hand with different options get different ids and the store refuses the second
// (docs/rendezvous.md "Run id"); --np's ranks inherit the parsed parameters.
TEST(PairsEngineOptions, OptionsEnterTheRunId) {
  const CollCommand base = parseCollectiveCommand("pairs", {"-t", "socket"});
  for (const std::vector<std::string>& extra :
       std::vector<std::vector<std::string>>{{"--op", "write"},
                                             {"--mode", "stream"},
                                             {"-l", "4"},
                                             {"--cq-mod", "8"},
                                             {"--mode", "stream", "--tx-depth", "64"}}) {
    std::vector<std::string> args = {"-t", "socket"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CollCommand c = parseCollectiveCommand("pairs", args);
    EXPECT_NE(c.launch.defaultRunId, base.launch.defaultRunId) << extra[0];
    EXPECT_NE(
        c.launch.runDescription.find(extra[0].substr(0, 2) == "--" ? extra[0] : "--post-list"),
        std::string::npos)
        << c.launch.runDescription;
  }
}

// A device without RDMA write / read: the refusal lat / bw give, naming op, transport and device.
TEST(PairsEngineOptions, OpWithoutRmaIsRefusedNamingTheTransport) {
  struct NoRma : testing::FakeDevice {
    transport::Caps caps() const override {
      transport::Caps c = FakeDevice::caps();
      c.rmaWrite = c.rmaRead = false;
      return c;
    }
  } dev;
  EXPECT_NO_THROW(engine::checkOpCaps(engine::Op::kSend, dev));
  try {
    engine::checkOpCaps(engine::Op::kWrite, dev);
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--op write: the fake transport on fake0 does not support RDMA write");
  }
  try {
    engine::checkOpCaps(engine::Op::kRead, dev);
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--op read: the fake transport on fake0 does not support RDMA read");
  }
}

}  // namespace
}  // namespace rdmabench::cli
