// Error paths of the libibverbs backend: bad device, GID index, inline size, depths, MTU,
// peer address, and a peer that vanishes mid-transfer. Skips like verbs_transport_test.cc
// without a usable RDMA device; runs for real in the soft-RoCE VM.

#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "common/error.h"
#include "transport/backends.h"
#include "transport/info_json.h"
#include "transport/transport.h"
#include "verbs_test_util.h"

namespace rdmabench::transport {
namespace {

using namespace verbstest;

template <typename Fn>
std::string usageErrorOf(Fn fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("WRONG CLASS: ") + e.what();
  }
  return "NO ERROR";
}

TEST(VerbsErrors, BadDeviceNameListsDevices) {
  SKIP_WITHOUT_VERBS();
  DeviceOptions o = baseOptions();
  std::string real = verbs::openDevice(o)->name();
  o.device = "nosuchdev9";
  std::string msg = usageErrorOf([&] { (void)verbs::openDevice(o); });
  EXPECT_TRUE(containsText(msg, "--device nosuchdev9")) << msg;
  EXPECT_TRUE(containsText(msg, real)) << msg;
  std::cout << "[ message  ] " << msg << "\n";
}

TEST(VerbsErrors, GidIndexOutOfRange) {
  SKIP_WITHOUT_VERBS();
  DeviceOptions o = baseOptions();
  o.gidIndex = 4000;
  std::string msg = usageErrorOf([&] { (void)verbs::openDevice(o); });
  EXPECT_TRUE(containsText(msg, "--gid-index 4000: out of range 0..")) << msg;
  EXPECT_TRUE(containsText(msg, "port 1")) << msg;
  std::cout << "[ message  ] " << msg << "\n";
}

TEST(VerbsErrors, InlineAboveCap) {
  SKIP_WITHOUT_VERBS();
  DeviceOptions o = baseOptions();
  o.inlineBytes = 1 << 20;
  std::string msg = usageErrorOf([&] { (void)verbs::openDevice(o); });
  EXPECT_TRUE(containsText(msg, "--inline 1048576: above the inline cap")) << msg;
  std::cout << "[ message  ] " << msg << "\n";
  // The cap it names is accepted.
  auto pos = msg.find("inline cap ");
  ASSERT_NE(pos, std::string::npos);
  o.inlineBytes = std::stoll(msg.substr(pos + 11));
  EXPECT_GT(o.inlineBytes, 0);
  auto dev = verbs::openDevice(o);
  EXPECT_EQ(dev->caps().inlineBytes, static_cast<uint32_t>(o.inlineBytes));
}

TEST(VerbsErrors, DepthAboveMax) {
  SKIP_WITHOUT_VERBS();
  DeviceOptions o = baseOptions();
  o.txDepth = 1u << 30;
  std::string msg = usageErrorOf([&] { (void)verbs::openDevice(o); });
  EXPECT_TRUE(containsText(msg, "--tx-depth 1073741824: above max_qp_wr")) << msg;
  o.txDepth = 0;
  o.rxDepth = 1u << 30;
  msg = usageErrorOf([&] { (void)verbs::openDevice(o); });
  EXPECT_TRUE(containsText(msg, "--rx-depth 1073741824: above max_qp_wr")) << msg;
  std::cout << "[ message  ] " << msg << "\n";
}

TEST(VerbsErrors, MtuAboveActive) {
  SKIP_WITHOUT_VERBS();
  DeviceOptions o = baseOptions();
  int active = static_cast<int>(verbs::openDevice(o)->info().common.activeMtu.value_or(0));
  if (active >= 4096) GTEST_SKIP() << "active MTU is already 4096";
  o.mtu = 4096;
  std::string msg = usageErrorOf([&] { (void)verbs::openDevice(o); });
  EXPECT_TRUE(containsText(msg, "--mtu 4096: above the active MTU")) << msg;
  o.mtu = 1000;
  msg = usageErrorOf([&] { (void)verbs::openDevice(o); });
  EXPECT_TRUE(containsText(msg, "--mtu 1000")) << msg;
  // A smaller MTU is negotiated as the minimum of both sides.
  o.mtu = 256;
  auto a = verbs::openDevice(o);
  auto b = verbs::openDevice(baseOptions());
  auto ca = a->createConnector();
  auto cb = b->createConnector();
  auto ea = ca->connect(cb->localAddress(), Deadline(kWaitMs));
  auto eb = cb->connect(ca->localAddress(), Deadline(kWaitMs));
  EXPECT_EQ(toJson(ea->info())["mtu"], 256);
  EXPECT_EQ(toJson(eb->info())["mtu"], 256);
}

TEST(VerbsErrors, MalformedPeerAddress) {
  SKIP_WITHOUT_VERBS();
  auto dev = verbs::openDevice(baseOptions());
  auto c = dev->createConnector();
  EXPECT_THROW((void)c->connect({1, 2, 3}, Deadline(kWaitMs)), ProtocolError);
}

TEST(VerbsErrors, DestroyedPeerFailsWithRetryExceeded) {
  SKIP_WITHOUT_VERBS();
  Loopback lb;
  std::vector<uint8_t> bufA(4096);
  auto mrA = lb.a->registerMemory(bufA.data(), bufA.size());
  lb.eb[0].reset();  // the peer QP vanishes (as if its process died)
  auto t0 = nowNs();
  ASSERT_EQ(lb.ea[0]->postSend(*mrA, 0, 1024, 5), PostResult::kOk);
  Completion c;
  try {
    c = waitOne(*lb.a, false, 20000);
  } catch (const TimeoutError& e) {
    FAIL() << e.what() << "; endpoint " << toJson(lb.ea[0]->info()).dump();
  }
  double seconds = static_cast<double>(nowNs() - t0) / 1e9;
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.context, 5u);
  EXPECT_TRUE(containsText(lb.a->errorText(c), "QPN")) << lb.a->errorText(c);
  std::cout << "[ dead peer] after " << seconds << " s: " << lb.a->errorText(c) << "\n";
  EXPECT_LT(seconds, 30.0);
  // Later posts on the dead QP fail too (flushed), they do not hang.
  PostResult pr = lb.ea[0]->postSend(*mrA, 0, 8, 6);
  if (pr == PostResult::kOk) {
    Completion f = waitOne(*lb.a, false, 10000);
    EXPECT_FALSE(f.ok());
  }
}

}  // namespace
}  // namespace rdmabench::transport
