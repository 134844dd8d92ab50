// Integration tests of the libfabric FI_EP_MSG endpoint (--ep msg): one connected endpoint per
// connection, connected concurrently as the client and server processes of a run are.
// Providers that fi_getinfo does not offer here are visible GTEST_SKIPs with the reason.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/error.h"
#include "transport/backends.h"
#include "transport/info_json.h"
#include "transport/transport.h"
#ifdef RDMABENCH_HAVE_OFI
#include "ofi_test_util.h"
#endif

namespace rdmabench::transport {
namespace {

#ifdef RDMABENCH_HAVE_OFI

using namespace ofitest;

class OfiMsgTransport : public ::testing::TestWithParam<ProviderCase> {
 protected:
  void SetUp() override {
    std::string why = msgUnavailableReason(GetParam());
    if (!why.empty()) GTEST_SKIP() << why;
  }
  DeviceOptions options() const {
    DeviceOptions o;
    o.provider = GetParam().provider;
    o.device = GetParam().domain;
    o.endpointType = "msg";
    return o;
  }
  std::unique_ptr<Device> open() { return ofi::openDevice(options()); }
};

TEST_P(OfiMsgTransport, PingPongWithVerification) {
  auto a = open();
  auto b = open();
  EXPECT_EQ(toJson(a->info())["endpoint_type"], "FI_EP_MSG");
  Link l = connectPairConcurrently(*a, *b);
  EXPECT_EQ(toJson(l.ab->info())["endpoint_type"], "FI_EP_MSG");
  EXPECT_NE(toJson(l.ab->info())["role"], toJson(l.ba->info())["role"]);
  const Caps caps = a->caps();
  constexpr size_t kBuf = (1 << 20) + 64;
  Buffer ba(kBuf), bb(kBuf);
  auto ma = a->registerMemory(ba.data, kBuf);
  auto mb = b->registerMemory(bb.data, kBuf);
  Poller p({a.get(), b.get()});
  uint32_t seed = 1;
  for (uint64_t size : {uint64_t{0}, uint64_t{1}, uint64_t{caps.inlineBytes}, uint64_t{64},
                        uint64_t{16384}, uint64_t{65536}, uint64_t{1} << 20}) {
    if (size > caps.maxMessageBytes) continue;
    SCOPED_TRACE("size " + std::to_string(size));
    const auto n = static_cast<uint32_t>(size);
    for (int dir = 0; dir < 2; ++dir) {
      Endpoint& tx = dir == 0 ? *l.ab : *l.ba;
      Endpoint& rx = dir == 0 ? *l.ba : *l.ab;
      MemoryRegion& mtx = dir == 0 ? *ma : *mb;
      MemoryRegion& mrx = dir == 0 ? *mb : *ma;
      Device* drx = dir == 0 ? b.get() : a.get();
      Device* dtx = dir == 0 ? a.get() : b.get();
      std::memset(mrx.data(), 0, n + 1);
      ASSERT_GE(p.post([&] { return rx.postRecv(mrx, 0, n, 100 + seed); }), 0);
      fill(mtx.data(), n, seed);
      ASSERT_GE(p.post([&] { return tx.postSend(mtx, 0, n, 200 + seed); }), 0);
      Completion rc = p.waitFor(drx, 100 + seed);
      ASSERT_TRUE(rc.ok()) << drx->errorText(rc);
      EXPECT_EQ(rc.op, OpKind::kRecv);
      EXPECT_EQ(rc.bytes, n);
      EXPECT_TRUE(matches(mrx.data(), n, seed));
      Completion sc = p.waitFor(dtx, 200 + seed);
      ASSERT_TRUE(sc.ok()) << dtx->errorText(sc);
      EXPECT_EQ(sc.op, OpKind::kSend);
      ++seed;
    }
  }
}

TEST_P(OfiMsgTransport, WindowedSendsWithRetryArriveInOrder) {
  DeviceOptions small = options();
  small.txDepth = 16;  // a shallow send queue: the window must hit kRetry
  auto a = ofi::openDevice(small);
  auto b = open();
  Link l = connectPairConcurrently(*a, *b);
  // A window beyond the queue depth forces kRetry on the sender.
  const uint32_t window = 256;
  constexpr uint32_t kMsg = 4096;
  const size_t bytes = size_t{kMsg} * window;
  Buffer sa(bytes), rb(bytes);
  auto ma = a->registerMemory(sa.data, bytes);
  auto mb = b->registerMemory(rb.data, bytes);
  Poller p({a.get(), b.get()});
  long retries = 0;
  uint32_t posted = 0;
  // Receives go up in batches the receive queue holds; sends follow.
  const uint32_t rxBatch = std::min(window, b->caps().maxRecvQueue);
  for (uint32_t base = 0; base < window; base += rxBatch) {
    const uint32_t n = std::min(rxBatch, window - base);
    for (uint32_t i = base; i < base + n; ++i)
      ASSERT_GE(p.post([&] { return l.ba->postRecv(*mb, i * kMsg, kMsg, 10000 + i); }), 0);
    for (uint32_t i = base; i < base + n; ++i) {
      uint64_t s = i;
      std::memset(sa.data + i * kMsg, static_cast<int>(s & 0xff), kMsg);
      std::memcpy(sa.data + i * kMsg, &s, sizeof(s));
      const long r = p.post([&] { return l.ab->postSend(*ma, i * kMsg, kMsg, s, i % 16 == 15); });
      ASSERT_GE(r, 0) << "send " << i << " never accepted";
      retries += r;
      ++posted;
    }
    for (uint32_t i = base; i < base + n; ++i) {
      Completion c = p.waitFor(b.get(), 10000 + i);
      ASSERT_TRUE(c.ok()) << b->errorText(c);
      uint64_t got = 0;
      std::memcpy(&got, rb.data + i * kMsg, sizeof(got));
      EXPECT_EQ(got, i) << "receive " << i << " matched out of post order";
      EXPECT_EQ(rb.data[i * kMsg + kMsg - 1], static_cast<uint8_t>(i & 0xff));
    }
  }
  Completion last = p.waitFor(a.get(), window - 1);
  ASSERT_TRUE(last.ok()) << a->errorText(last);
  EXPECT_EQ(posted, window);
  EXPECT_GT(retries, 0) << "a window of " << window << " on a send queue of 16 never saw kRetry";
  std::printf("[ %s msg ] window %u x %u B: %ld kRetry answers\n", GetParam().provider, window,
              kMsg, retries);
}

TEST_P(OfiMsgTransport, RmaWriteLandsWhileTargetPolls) {
  auto a = open();
  auto b = open();
  if (!a->caps().rmaWrite) GTEST_SKIP() << GetParam().provider << " FI_EP_MSG did not grant FI_RMA";
  Link l = connectPairConcurrently(*a, *b);
  constexpr size_t kBytes = 1 << 20;
  Buffer src(kBytes), dst(kBytes), back(kBytes);
  auto ms = a->registerMemory(src.data, kBytes);
  auto mback = a->registerMemory(back.data, kBytes);
  auto md = b->registerMemory(dst.data, kBytes);
  RemoteRegion remote = RemoteRegion::decode(md->exportRegion().encode());
  Poller p({a.get(), b.get()});
  checkWriteThenRead(p, *a, *l.ab, *ms, *mback, remote, src, dst, back, kBytes);
  if (::testing::Test::HasFatalFailure()) return;
}

TEST_P(OfiMsgTransport, TwoConnectionsOnOneDevice) {
  auto a = open();
  auto b = open();
  auto c = open();
  Link ab = connectPairConcurrently(*a, *b);
  Link ac = connectPairConcurrently(*a, *c);
  // Also two connections between the same pair of devices.
  Link ab2 = connectPairConcurrently(*a, *b);
  constexpr uint32_t kMsg = 128;
  Buffer ra(3 * kMsg), sb(2 * kMsg), sc(kMsg);
  auto mra = a->registerMemory(ra.data, 3 * kMsg);
  auto msb = b->registerMemory(sb.data, 2 * kMsg);
  auto msc = c->registerMemory(sc.data, kMsg);
  Poller p({a.get(), b.get(), c.get()});
  ASSERT_GE(p.post([&] { return ab.ab->postRecv(*mra, 0, kMsg, 1); }), 0);
  ASSERT_GE(p.post([&] { return ac.ab->postRecv(*mra, kMsg, kMsg, 2); }), 0);
  ASSERT_GE(p.post([&] { return ab2.ab->postRecv(*mra, 2 * kMsg, kMsg, 3); }), 0);
  fill(sc.data, kMsg, 3);
  fill(sb.data, kMsg, 2);
  fill(sb.data + kMsg, kMsg, 4);
  ASSERT_GE(p.post([&] { return ac.ba->postSend(*msc, 0, kMsg, 30); }), 0);
  ASSERT_GE(p.post([&] { return ab2.ba->postSend(*msb, kMsg, kMsg, 40); }), 0);
  ASSERT_GE(p.post([&] { return ab.ba->postSend(*msb, 0, kMsg, 20); }), 0);
  for (uint64_t ctx : {1, 2, 3}) {
    Completion x = p.waitFor(a.get(), ctx);
    ASSERT_TRUE(x.ok()) << a->errorText(x);
  }
  EXPECT_TRUE(matches(ra.data, kMsg, 2)) << "connection a-b received someone else's data";
  EXPECT_TRUE(matches(ra.data + kMsg, kMsg, 3)) << "connection a-c received someone else's data";
  EXPECT_TRUE(matches(ra.data + 2 * kMsg, kMsg, 4)) << "second a-b connection got wrong data";
  EXPECT_TRUE(p.waitFor(b.get(), 20).ok());
  EXPECT_TRUE(p.waitFor(b.get(), 40).ok());
  EXPECT_TRUE(p.waitFor(c.get(), 30).ok());
}

TEST_P(OfiMsgTransport, EndpointTeardownWithPostedReceivesLeavesDeviceUsable) {
  auto a = open();
  auto b = open();
  Buffer buf(4096), other(4096);
  auto ma = a->registerMemory(buf.data, 4096);
  auto mb = b->registerMemory(other.data, 4096);
  {
    Link l = connectPairConcurrently(*a, *b);
    Poller p({a.get(), b.get()});
    for (uint32_t i = 0; i < 4; ++i)
      ASSERT_GE(p.post([&] { return l.ab->postRecv(*ma, i * 1024, 1024, 40 + i); }), 0);
  }
  Link l = connectPairConcurrently(*a, *b);
  Poller p({a.get(), b.get()});
  ASSERT_GE(p.post([&] { return l.ab->postRecv(*ma, 0, 1024, 50); }), 0);
  fill(other.data, 1024, 5);
  ASSERT_GE(p.post([&] { return l.ba->postSend(*mb, 0, 1024, 51); }), 0);
  Completion c = p.waitFor(a.get(), 50);
  ASSERT_TRUE(c.ok()) << a->errorText(c);
  EXPECT_TRUE(matches(buf.data, 1024, 5));
  for (const Completion& x : p.completions(a.get()))
    EXPECT_FALSE(x.context >= 40 && x.context < 44) << "receive of a destroyed endpoint reported";
}

TEST_P(OfiMsgTransport, ConnectTimesOutNamingThePeerWhenItNeverConnects) {
  auto a = open();
  auto b = open();
  auto ca = a->createConnector();
  auto cb = b->createConnector();  // listens, but never calls connect()
  const int64_t t0 = nowNs();
  std::string m =
      messageOf<TimeoutError>([&] { (void)ca->connect(cb->localAddress(), Deadline(500)); });
  const double ms = static_cast<double>(nowNs() - t0) / 1e6;
  EXPECT_NE(m.find("peer"), std::string::npos) << m;
  EXPECT_NE(m.find("no FI_CONN"), std::string::npos) << m;
  if (std::string(GetParam().provider) == "tcp") {
    EXPECT_NE(m.find("127.0.0.1"), std::string::npos) << m;
  }
  EXPECT_GE(ms, 450.0);
  EXPECT_LT(ms, 5000.0);
}

INSTANTIATE_TEST_SUITE_P(Providers, OfiMsgTransport,
                         ::testing::Values(ProviderCase{"tcp", "lo"}, ProviderCase{"verbs", ""}),
                         caseName);

#endif  // RDMABENCH_HAVE_OFI

}  // namespace
}  // namespace rdmabench::transport
