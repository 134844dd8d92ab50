// libibverbs backend: two Devices on the same RDMA device in one process, QPs connected in
// loopback. Skips (with the probe's reason) where no ACTIVE RDMA port exists, e.g. on a host
// kernel without RDMA; runs for real in the soft-RoCE VM (ci/rxe-vm, shared/rxe-vm.md).
//
// Shared helpers: verbs_test_util.h; error paths: verbs_errors_test.cc; the pure GID selection
// policy: tests/unit/gid_select_test.cc.

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <set>
#include <thread>

#include "common/error.h"
#include "transport/backends.h"
#include "transport/info_json.h"
#include "transport/transport.h"
#include "verbs_test_util.h"

#ifdef RDMABENCH_HAVE_VERBS
#include "transport/verbs/gid_select.h"
#endif

namespace rdmabench::transport {
namespace {

using namespace verbstest;

TEST(VerbsProbe, ReportsDevicesOrReason) {
  BackendStatus st = verbs::probe();
  EXPECT_EQ(st.name, "verbs");
  EXPECT_FALSE(st.reason.empty());
  if (!st.built) GTEST_SKIP() << st.reason;
  if (!st.usable) GTEST_SKIP() << "no usable RDMA device: " << st.reason;
  ASSERT_TRUE(st.details.contains("devices")) << st.details.dump();
  int autoMarks = 0;
  int activePorts = 0;
  for (const auto& dev : st.details["devices"])
    for (const auto& port : dev.value("ports", nlohmann::json::array())) {
      if (port["state"] == "ACTIVE") ++activePorts;
      for (const auto& g : port["gids"])
        autoMarks += g["auto"].get<bool>() ? 1 : 0;
    }
  EXPECT_GE(activePorts, 1) << st.details.dump();
  EXPECT_GE(autoMarks, 1) << st.details.dump();
  std::cout << "[ probe    ] " << st.reason << "\n" << st.details.dump(1) << "\n";
}

TEST(VerbsDevice, CapsAndProperties) {
  SKIP_WITHOUT_VERBS();
  auto dev = verbs::openDevice(baseOptions());
  Caps caps = dev->caps();
  EXPECT_TRUE(caps.rmaWrite);
  EXPECT_TRUE(caps.rmaRead);
  EXPECT_GE(caps.maxMessageBytes, 1u << 20);
  EXPECT_EQ(caps.maxSendQueue, 128u);
  EXPECT_EQ(caps.maxRecvQueue, 512u);
  EXPECT_LE(caps.inlineBytes, 220u);
  auto props = toJson(dev->info());
  EXPECT_EQ(props["device"], dev->name());
  // The shared facts under their one name (transport::CommonProperties), as the reports read them.
  CommonProperties common = readCommonProperties(props);
  EXPECT_EQ(common.inlineBytes, caps.inlineBytes) << props.dump();
  EXPECT_TRUE(common.port && common.gidIndex && common.activeMtu && common.mtu) << props.dump();
  EXPECT_FALSE(props.contains("inline")) << props.dump();
  std::cout << "[ device   ] " << props.dump() << "\n";
  if (props["link_layer"] == "Ethernet" && !baseOptions().peerHost.empty()) {
    // With RXE_IP as the peer, auto must pick the RoCE v2 GID holding that address.
    EXPECT_EQ(props["gid_type"], "RoCE v2");
    EXPECT_EQ(props["gid"], "::ffff:" + baseOptions().peerHost) << props.dump();
  }
}

TEST(VerbsSendRecv, PingPongSizesWithDataCheck) {
  SKIP_WITHOUT_VERBS();
  Loopback lb;
  auto props = toJson(lb.ea[0]->info());
  std::cout << "[ endpoint ] " << props.dump() << "\n";
  EXPECT_TRUE(readCommonProperties(props).inlineBytes) << props.dump();
  const uint32_t mtu = props["mtu"].get<uint32_t>();
  const uint32_t inl = lb.a->caps().inlineBytes;
  EXPECT_EQ(props["peer_qpn"], toJson(lb.eb[0]->info())["qpn"]);
  const size_t kMax = 1 << 20;
  std::vector<uint8_t> bufA(kMax), bufB(kMax);
  auto mrA = lb.a->registerMemory(bufA.data(), kMax);
  auto mrB = lb.b->registerMemory(bufB.data(), kMax);
  std::vector<uint32_t> sizes = {0, 1, inl, mtu - 1, mtu, mtu + 1, 1u << 20};
  uint8_t seed = 1;
  for (uint32_t size : sizes) {
    SCOPED_TRACE("size " + std::to_string(size));
    // ping A -> B
    std::memset(bufB.data(), 0, kMax);
    fillPattern(bufA.data(), size, seed);
    ASSERT_EQ(lb.eb[0]->postRecv(*mrB, 0, kMax, 100 + size), PostResult::kOk);
    ASSERT_EQ(lb.ea[0]->postSend(*mrA, 0, size, 200 + size), PostResult::kOk);
    Completion r = waitOk(*lb.b);
    EXPECT_EQ(r.op, OpKind::kRecv);
    EXPECT_EQ(r.context, 100u + size);
    EXPECT_EQ(r.bytes, size);
    EXPECT_TRUE(checkPattern(bufB.data(), size, seed));
    Completion s = waitOk(*lb.a);
    EXPECT_EQ(s.op, OpKind::kSend);
    EXPECT_EQ(s.context, 200u + size);
    // pong B -> A with another pattern
    ++seed;
    std::memset(bufA.data(), 0, kMax);
    fillPattern(bufB.data(), size, seed);
    ASSERT_EQ(lb.ea[0]->postRecv(*mrA, 0, kMax, 300), PostResult::kOk);
    ASSERT_EQ(lb.eb[0]->postSend(*mrB, 0, size, 400), PostResult::kOk);
    r = waitOk(*lb.a);
    EXPECT_EQ(r.op, OpKind::kRecv);
    EXPECT_EQ(r.bytes, size);
    EXPECT_TRUE(checkPattern(bufA.data(), size, seed));
    EXPECT_EQ(waitOk(*lb.b).context, 400u);
    ++seed;
  }
}

TEST(VerbsSendRecv, RecvTooShortCompletesWithError) {
  SKIP_WITHOUT_VERBS();
  Loopback lb;
  std::vector<uint8_t> bufA(4096), bufB(4096);
  auto mrA = lb.a->registerMemory(bufA.data(), bufA.size());
  auto mrB = lb.b->registerMemory(bufB.data(), bufB.size());
  ASSERT_EQ(lb.eb[0]->postRecv(*mrB, 0, 16, 1), PostResult::kOk);
  ASSERT_EQ(lb.ea[0]->postSend(*mrA, 0, 1024, 2), PostResult::kOk);
  Completion r = waitOne(*lb.b);
  EXPECT_FALSE(r.ok()) << "bytes " << r.bytes;  // rxe: LOC_QP_OP_ERR, not LOC_LEN_ERR
  EXPECT_TRUE(containsText(lb.b->errorText(r), "QPN")) << lb.b->errorText(r);
  std::cout << "[ error    ] " << lb.b->errorText(r) << "\n";
}

TEST(VerbsRma, WriteWithLastBytePolling) {
  SKIP_WITHOUT_VERBS();
  Loopback lb;
  const size_t kMax = 1 << 20;
  std::vector<uint8_t> bufA(kMax), bufB(kMax);
  auto mrA = lb.a->registerMemory(bufA.data(), kMax);
  auto mrB = lb.b->registerMemory(bufB.data(), kMax);
  RemoteRegion remote = RemoteRegion::decode(mrB->exportRegion().encode());
  EXPECT_EQ(remote.key.size(), 4u);
  uint8_t seed = 11;
  for (uint32_t size : {1u, 64u, 4096u, 65537u, 1u << 20}) {
    SCOPED_TRACE("size " + std::to_string(size));
    std::memset(bufB.data(), 0, kMax);
    fillPattern(bufA.data(), size, seed);
    bufA[size - 1] = 0xA5;  // the byte the target spins on
    ASSERT_EQ(lb.ea[0]->postWrite(*mrA, 0, size, remote, 0, 7), PostResult::kOk);
    volatile uint8_t* last = bufB.data() + size - 1;
    Deadline deadline(kWaitMs);
    while (*last != 0xA5)
      ASSERT_FALSE(deadline.expired()) << "last byte never landed";
    EXPECT_TRUE(checkPattern(bufB.data(), size - 1, seed));
    Completion c = waitOk(*lb.a);
    EXPECT_EQ(c.op, OpKind::kWrite);
    EXPECT_EQ(c.context, 7u);
    Completion none;
    EXPECT_EQ(lb.b->poll(&none, 1), 0u) << "a write must not complete at the target";
    ++seed;
  }
}

TEST(VerbsRma, Read) {
  SKIP_WITHOUT_VERBS();
  Loopback lb;
  const size_t kMax = 1 << 20;
  std::vector<uint8_t> bufA(kMax), bufB(kMax);
  auto mrA = lb.a->registerMemory(bufA.data(), kMax);
  auto mrB = lb.b->registerMemory(bufB.data(), kMax);
  RemoteRegion remote = mrB->exportRegion();
  EXPECT_GE(lb.a->caps().maxOutstandingReads, 1u);
  for (uint32_t size : {1u, 4096u, 1u << 20}) {
    fillPattern(bufB.data(), size, 33);
    std::memset(bufA.data(), 0, kMax);
    ASSERT_EQ(lb.ea[0]->postRead(*mrA, 0, size, remote, 0, 9), PostResult::kOk);
    Completion c = waitOk(*lb.a);
    EXPECT_EQ(c.op, OpKind::kRead);
    EXPECT_EQ(c.bytes, size);
    EXPECT_TRUE(checkPattern(bufA.data(), size, 33)) << "size " << size;
  }
  // Range checks are usage errors.
  EXPECT_THROW((void)lb.ea[0]->postRead(*mrA, 0, 16, remote, kMax - 8, 1), UsageError);
  EXPECT_THROW((void)lb.ea[0]->postSend(*mrA, kMax - 8, 16, 1), UsageError);
}

TEST(VerbsWindow, RetryWhenFullAndUnsignaledModeration) {
  SKIP_WITHOUT_VERBS();
  DeviceOptions o = baseOptions();
  o.txDepth = 16;
  o.rxDepth = 64;
  Loopback lb(o);
  std::vector<uint8_t> bufA(1 << 16), bufB(1 << 16);
  auto mrA = lb.a->registerMemory(bufA.data(), bufA.size());
  auto mrB = lb.b->registerMemory(bufB.data(), bufB.size());

  // Without polling, exactly txDepth posts fit; all unsignaled: the queue still drains.
  for (uint32_t i = 0; i < 16; ++i)
    ASSERT_EQ(lb.ea[0]->postRecv(*mrA, 0, 64, i), PostResult::kOk);
  for (uint32_t i = 0; i < 64; ++i)
    ASSERT_EQ(lb.eb[0]->postRecv(*mrB, 0, 64, i), PostResult::kOk);
  EXPECT_EQ(lb.eb[0]->postRecv(*mrB, 0, 64, 99), PostResult::kRetry);
  for (uint32_t i = 0; i < 16; ++i)
    ASSERT_EQ(lb.ea[0]->postSend(*mrA, 0, 8, i, /*signaled=*/false), PostResult::kOk) << i;
  EXPECT_EQ(lb.ea[0]->postSend(*mrA, 0, 8, 16, false), PostResult::kRetry);
  Deadline deadline(kWaitMs);
  Completion c[8];
  size_t reported = 0;
  for (;;) {
    reported += lb.a->poll(c, 8);
    if (lb.ea[0]->postSend(*mrA, 0, 8, 16, true) == PostResult::kOk) break;
    ASSERT_FALSE(deadline.expired()) << "send queue never drained";
  }
  EXPECT_EQ(reported, 0u) << "unsignaled sends must not report completions";
  EXPECT_EQ(waitOk(*lb.a).context, 16u);
  // B got 17 messages.
  for (int i = 0; i < 17; ++i)
    EXPECT_EQ(waitOk(*lb.b).op, OpKind::kRecv);

  // Windowed stream: 2000 sequence-numbered messages, every 4th signaled, kRetry handled by
  // polling; the receiver reposts and checks order.
  const uint32_t kMsgs = 2000, kSize = 64, kMod = 4;
  uint32_t sent = 0, received = 0, retries = 0, sendCompletions = 0;
  // 47 of B's 64 receives are still posted; keep 64 posted until kMsgs were posted in all.
  uint32_t recvOutstanding = 64 - 17, recvPostedTotal = 64 - 17;
  auto topUp = [&] {
    while (recvOutstanding < 64 && recvPostedTotal < kMsgs) {
      if (lb.eb[0]->postRecv(*mrB, 0, kSize, recvPostedTotal) != PostResult::kOk) break;
      ++recvOutstanding;
      ++recvPostedTotal;
    }
  };
  deadline = Deadline(60000);
  while (received < kMsgs) {
    ASSERT_FALSE(deadline.expired()) << "sent " << sent << " received " << received;
    // Post until the window is full (kRetry), then poll: the windowed-bandwidth pattern.
    while (sent < kMsgs) {
      uint32_t slot = sent % 512;
      std::memcpy(bufA.data() + slot * kSize, &sent, 4);
      bool sig = (sent + 1) % kMod == 0 || sent + 1 == kMsgs;
      if (lb.ea[0]->postSend(*mrA, slot * kSize, kSize, sent, sig) != PostResult::kOk) {
        ++retries;
        break;
      }
      ++sent;
    }
    size_t n = lb.a->poll(c, 8);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(c[i].ok()) << lb.a->errorText(c[i]);
      EXPECT_EQ((c[i].context + 1) % kMod == 0 || c[i].context + 1 == kMsgs, true);
      ++sendCompletions;
    }
    n = lb.b->poll(c, 8);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(c[i].ok()) << lb.b->errorText(c[i]);
      ASSERT_EQ(c[i].bytes, kSize);
      ++received;
      --recvOutstanding;
    }
    topUp();
  }
  while (sendCompletions < kMsgs / kMod) {
    ASSERT_FALSE(deadline.expired());
    size_t n = lb.a->poll(c, 8);
    for (size_t i = 0; i < n; ++i)
      ASSERT_TRUE(c[i].ok()) << lb.a->errorText(c[i]);
    sendCompletions += static_cast<uint32_t>(n);
  }
  EXPECT_EQ(sendCompletions, kMsgs / kMod);
  EXPECT_GT(retries, 0u) << "a 16-deep send queue must fill during a 2000-message stream";
  std::cout << "[ window   ] " << kMsgs << " msgs, " << retries << " kRetry\n";
}

TEST(VerbsWindow, InOrderDeliveryWithSequenceNumbers) {
  SKIP_WITHOUT_VERBS();
  DeviceOptions o = baseOptions();
  o.txDepth = 32;
  o.rxDepth = 128;
  Loopback lb(o);
  const uint32_t kMsgs = 1000, kSize = 32, kSlots = 128;
  std::vector<uint8_t> bufA(kSlots * kSize), bufB(kSlots * kSize);
  auto mrA = lb.a->registerMemory(bufA.data(), bufA.size());
  auto mrB = lb.b->registerMemory(bufB.data(), bufB.size());
  uint64_t recvPosted = 0;
  for (; recvPosted < kSlots; ++recvPosted)
    ASSERT_EQ(lb.eb[0]->postRecv(*mrB, recvPosted * kSize, kSize, recvPosted), PostResult::kOk);
  uint32_t sent = 0, received = 0;
  Completion c[16];
  Deadline deadline(60000);
  while (received < kMsgs) {
    ASSERT_FALSE(deadline.expired()) << "sent " << sent << " received " << received;
    if (sent < kMsgs) {
      uint32_t slot = sent % kSlots;
      std::memcpy(bufA.data() + slot * kSize, &sent, 4);
      if (lb.ea[0]->postSend(*mrA, slot * kSize, kSize, sent, sent % 8 == 7) == PostResult::kOk)
        ++sent;
    }
    (void)lb.a->poll(c, 16);
    size_t n = lb.b->poll(c, 16);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(c[i].ok()) << lb.b->errorText(c[i]);
      uint64_t slot = c[i].context % kSlots;
      uint32_t seq;
      std::memcpy(&seq, bufB.data() + slot * kSize, 4);
      ASSERT_EQ(seq, received) << "out of order";
      ++received;
      if (recvPosted < kMsgs) {
        ASSERT_EQ(lb.eb[0]->postRecv(*mrB, slot * kSize, kSize, recvPosted++), PostResult::kOk);
      }
    }
  }
}

TEST(VerbsEvent, PingPongSleepingOnEvents) {
  SKIP_WITHOUT_VERBS();
  DeviceOptions o = baseOptions();
  o.progress = ProgressMode::kEvent;
  Loopback lb(o);
  EXPECT_EQ(toJson(lb.a->info())["event_mode"], true);
  std::vector<uint8_t> bufA(256), bufB(256);
  auto mrA = lb.a->registerMemory(bufA.data(), bufA.size());
  auto mrB = lb.b->registerMemory(bufB.data(), bufB.size());
  // Nothing pending: waitForEvent must return after about its timeout, not hang.
  auto t0 = nowNs();
  lb.a->waitForEvent(200);
  auto waitedMs = (nowNs() - t0) / 1000000;
  EXPECT_GE(waitedMs, 150);
  EXPECT_LT(waitedMs, 2000);
  for (uint32_t i = 0; i < 50; ++i) {
    ASSERT_EQ(lb.eb[0]->postRecv(*mrB, 0, 256, i), PostResult::kOk);
    bufA[0] = static_cast<uint8_t>(i);
    ASSERT_EQ(lb.ea[0]->postSend(*mrA, 0, 16, i), PostResult::kOk);
    Completion r = waitOk(*lb.b, true);
    EXPECT_EQ(r.context, i);
    EXPECT_EQ(bufB[0], static_cast<uint8_t>(i));
    EXPECT_EQ(waitOk(*lb.a, true).context, i);
    ASSERT_EQ(lb.ea[0]->postRecv(*mrA, 0, 256, i), PostResult::kOk);
    ASSERT_EQ(lb.eb[0]->postSend(*mrB, 0, 16, i), PostResult::kOk);
    EXPECT_EQ(waitOk(*lb.a, true).op, OpKind::kRecv);
    EXPECT_EQ(waitOk(*lb.b, true).op, OpKind::kSend);
  }
}

TEST(VerbsMultiQp, SeveralQpsShareOneCq) {
  SKIP_WITHOUT_VERBS();
  DeviceOptions o = baseOptions();
  o.txDepth = 64;
  o.rxDepth = 256;
  const int kPairs = 6;  // forces the shared CQ to grow (ibv_resize_cq)
  Loopback lb(o, kPairs);
  std::vector<uint8_t> bufA(kPairs * 64), bufB(kPairs * 64);
  auto mrA = lb.a->registerMemory(bufA.data(), bufA.size());
  auto mrB = lb.b->registerMemory(bufB.data(), bufB.size());
  for (int i = 0; i < kPairs; ++i) {
    ASSERT_EQ(lb.eb[i]->postRecv(*mrB, i * 64, 64, 100 + i), PostResult::kOk);
    bufA[i * 64] = static_cast<uint8_t>(0x40 + i);
  }
  for (int i = 0; i < kPairs; ++i)
    ASSERT_EQ(lb.ea[i]->postSend(*mrA, i * 64, 64, 200 + i), PostResult::kOk);
  std::vector<bool> gotRecv(kPairs), gotSend(kPairs);
  for (int i = 0; i < kPairs; ++i) {
    Completion r = waitOk(*lb.b);
    int k = static_cast<int>(r.context) - 100;
    ASSERT_TRUE(k >= 0 && k < kPairs);
    gotRecv[k] = true;
    EXPECT_EQ(bufB[k * 64], 0x40 + k);
    Completion s = waitOk(*lb.a);
    int j = static_cast<int>(s.context) - 200;
    ASSERT_TRUE(j >= 0 && j < kPairs);
    gotSend[j] = true;
  }
  for (int i = 0; i < kPairs; ++i)
    EXPECT_TRUE(gotRecv[i] && gotSend[i]) << i;
  std::set<uint32_t> qpns;
  for (auto& e : lb.ea)
    qpns.insert(toJson(e->info())["qpn"].get<uint32_t>());
  EXPECT_EQ(qpns.size(), static_cast<size_t>(kPairs));
  // Destroying one endpoint leaves the others working.
  lb.ea[0].reset();
  lb.eb[0].reset();
  ASSERT_EQ(lb.eb[1]->postRecv(*mrB, 0, 64, 7), PostResult::kOk);
  ASSERT_EQ(lb.ea[1]->postSend(*mrA, 0, 64, 8), PostResult::kOk);
  EXPECT_EQ(waitOk(*lb.b).context, 7u);
  EXPECT_EQ(waitOk(*lb.a).context, 8u);
}

#ifdef RDMABENCH_HAVE_VERBS
// The route hint for GID selection: a loopback peer falls back to --local-host; an unresolvable
// peer gives no hint (never an error).
TEST(VerbsGidSelect, RouteHintOfLoopbackAndUnknownPeers) {
  auto ipv4 = [](uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
    uint8_t bytes[4] = {a, b, c, d};
    uint32_t v;
    std::memcpy(&v, bytes, 4);
    return v;
  };
  verbs::RouteHint h = verbs::resolveRouteHint("127.0.0.1", "127.0.0.2");
  EXPECT_FALSE(h.sourceIpv4.has_value() && h.sourceIpv4 != ipv4(127, 0, 0, 2));
  verbs::RouteHint bad = verbs::resolveRouteHint("no-such-host.invalid", "");
  EXPECT_FALSE(bad.sourceIpv4.has_value());
}
#endif

}  // namespace
}  // namespace rdmabench::transport
