// Test descriptions: JSON round trip, validation limits, OSU default iteration counts.
#include "engine/spec.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace rdmabench::engine {
namespace {

TestSpec latSpec() {
  TestSpec s;
  s.sizes = {0, 8, 4096, 1 << 20};
  return s;
}

TEST(TestSpec, JsonRoundTrip) {
  TestSpec s = latSpec();
  s.test = "bw";
  s.sizes = {1, 65536};
  s.bidirectional = true;
  s.window = 32;
  s.queuePairs = 4;
  s.serverDevice.provider = "tcp;ofi_rxm";
  TestSpec t = TestSpec::fromJson(s.toJson());
  EXPECT_EQ(t.test, "bw");
  EXPECT_EQ(t.sizes, s.sizes);
  EXPECT_TRUE(t.bidirectional);
  EXPECT_EQ(t.window, 32u);
  EXPECT_EQ(t.queuePairs, 4u);
  EXPECT_EQ(t.serverDevice.provider, "tcp;ofi_rxm");
}

TEST(TestSpec, MalformedJsonIsProtocolError) {
  EXPECT_THROW(TestSpec::fromJson(nlohmann::json::array()), ProtocolError);
  EXPECT_THROW(TestSpec::fromJson(nlohmann::json{{"test", "lat"}}), ProtocolError);
  auto j = latSpec().toJson();
  j["sizes"] = "many";
  EXPECT_THROW(TestSpec::fromJson(j), Error);
}

TEST(TestSpec, LimitsNameTheOption) {
  auto expectUsage = [](TestSpec s, const char* option) {
    try {
      s.validate();
      FAIL() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(option), std::string::npos) << e.what();
    }
  };
  TestSpec s = latSpec();
  s.window = 0;
  expectUsage(s, "--window");
  s = latSpec();
  s.sizes = {1ull << 32};
  expectUsage(s, "--size");
  s = latSpec();
  s.op = "read";
  expectUsage(s, "--size 0");
  s = latSpec();
  s.op = "atomic";
  expectUsage(s, "--op");
  s = latSpec();
  s.op = "tagged";
  expectUsage(s, "--op tagged: only for -t ofi");
  s.transport = "ofi";
  s.validate();  // FI_TAGGED on an RDM endpoint: valid, 0 B included
  s.serverDevice.endpointType = "msg";
  expectUsage(s, "--ep msg");
  s = latSpec();
  s.timeoutMs = 1;
  expectUsage(s, "--timeout");
  s = latSpec();
  s.queuePairs = 2;
  expectUsage(s, "--qp");
  s = latSpec();
  s.test = "bw";
  s.sizes = {64};
  s.cqModeration = 65;
  expectUsage(s, "--cq-mod");
}

TEST(TestSpec, OsuDefaultIterations) {
  TestSpec s = latSpec();
  EXPECT_EQ(s.iterationsFor(8192), 10000u);
  EXPECT_EQ(s.iterationsFor(8193), 1000u);
  EXPECT_EQ(s.warmupFor(8), 100u);
  EXPECT_EQ(s.warmupFor(1 << 20), 10u);
  s.test = "bw";
  EXPECT_EQ(s.iterationsFor(8), 100u);
  EXPECT_EQ(s.iterationsFor(1 << 20), 20u);
  s.iterations = 7;
  s.warmup = 0;
  EXPECT_EQ(s.iterationsFor(1 << 20), 7u);
  EXPECT_EQ(s.warmupFor(1), 0u);
}

}  // namespace
}  // namespace rdmabench::engine
