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

// Values a hostile client might send are refused with the field named, never truncated (2^32+1
// used to become 1) or converted out of range (1e30 -> uint64 is undefined behaviour).
TEST(TestSpec, OutOfRangeFieldsAreRejectedNotTruncated) {
  auto expectRejected = [](const char* field, nlohmann::json value) {
    TestSpec s = latSpec();
    s.test = "bw";
    s.sizes = {64};
    auto j = s.toJson();
    j[field] = value;
    try {
      TestSpec t = TestSpec::fromJson(j);
      FAIL() << field << "=" << value.dump() << " accepted as window " << t.window << " qp "
             << t.queuePairs << " iterations " << t.iterations;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  expectRejected("window", (1ull << 32) + 1);
  expectRejected("queue_pairs", (1ull << 32) + 1);
  expectRejected("cq_moderation", (1ull << 32) + 1);
  expectRejected("iterations", 1e30);
  expectRejected("iterations", 2.5);
  expectRejected("iterations", -1);
  expectRejected("warmup", 1e30);
  expectRejected("timeout_ms", 1e30);
  expectRejected("duration_s", 1e30);
  expectRejected("sizes", nlohmann::json::array({1.5}));
  expectRejected("sizes", nlohmann::json::array({-1}));
  expectRejected("test", 7);
  auto j = latSpec().toJson();
  j["server_device"]["tx_depth"] = (1ull << 32) + 1;
  EXPECT_THROW(TestSpec::fromJson(j), ProtocolError);
  j = latSpec().toJson();
  j["server_device"]["ib_port"] = 1e30;
  EXPECT_THROW(TestSpec::fromJson(j), ProtocolError);
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
