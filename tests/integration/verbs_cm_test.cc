// verbs backend in rdma_cm mode (DeviceOptions::rdmaCm, `--rdma-cm`): two Devices on the same
// RDMA device in one process, QPs connected by librdmacm. The two connect() calls run in two
// threads (each thread owns one Device), since an rdma_cm connect waits for its peer.
// Skips where no ACTIVE RDMA port exists; runs for real in the soft-RoCE VM (ci/rxe-vm).

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <future>
#include <thread>

#include "common/error.h"
#include "transport/backends.h"
#include "transport/info_json.h"
#include "transport/transport.h"

#include "verbs_test_util.h"

namespace rdmabench::transport {
namespace {

using verbstest::kWaitMs;
using verbstest::waitOk;

DeviceOptions cmOptions() {
  DeviceOptions o = verbstest::baseOptions();
  o.rdmaCm = true;
  return o;
}

// `pairs` QP pairs connected by rdma_cm (verbs_test_util.h Loopback, both connects at once).
struct CmPair : verbstest::Loopback {
  explicit CmPair(int pairs, DeviceOptions o = cmOptions()) : Loopback(o, pairs, true) {}
};

TEST(VerbsCm, ConnectsQpsThatSendWriteAndRead) {
  SKIP_WITHOUT_VERBS();
  CmPair p(2);
  for (int i = 0; i < 2; ++i) {
    auto pa = toJson(p.ea[i]->info());
    auto pb = toJson(p.eb[i]->info());
    std::cout << "[ endpoint ] " << pa.dump() << "\n";
    EXPECT_EQ(pa["connection_manager"], "rdma_cm");
    EXPECT_EQ(pa["state"], "RTS");
    EXPECT_EQ(pa["peer_qpn"], pb["qpn"]);
    EXPECT_EQ(pb["peer_qpn"], pa["qpn"]);
    EXPECT_EQ(pa["rnr_retry"], 7);
    EXPECT_EQ(pb["rnr_retry"], 7);
    EXPECT_EQ(pa["retry_cnt"], 6);
    EXPECT_EQ(pa["mtu"], pb["mtu"]);
    EXPECT_GT(pa["max_rd_atomic"].get<int>(), 0);
    EXPECT_NE(pa["qpn"], toJson(p.ea[1 - i]->info())["qpn"]);
  }
  const uint32_t inl = p.a->caps().inlineBytes;
  const uint32_t mtu = toJson(p.ea[0]->info())["mtu"].get<uint32_t>();
  const size_t kMax = 1 << 20;
  std::vector<uint8_t> bufA(kMax), bufB(kMax);
  auto mrA = p.a->registerMemory(bufA.data(), kMax);
  auto mrB = p.b->registerMemory(bufB.data(), kMax);
  for (uint32_t size : {0u, 1u, inl, mtu + 1, 1u << 20}) {
    SCOPED_TRACE("send size " + std::to_string(size));
    for (uint32_t k = 0; k < size; ++k)
      bufA[k] = static_cast<uint8_t>(k * 3 + size);
    std::memset(bufB.data(), 0, kMax);
    ASSERT_EQ(p.eb[1]->postRecv(*mrB, 0, kMax, 7), PostResult::kOk);
    ASSERT_EQ(p.ea[1]->postSend(*mrA, 0, size, 8), PostResult::kOk);
    Completion r = waitOk(*p.b);
    EXPECT_EQ(r.bytes, size);
    EXPECT_EQ(std::memcmp(bufA.data(), bufB.data(), size), 0);
    EXPECT_EQ(waitOk(*p.a).context, 8u);
  }
  // Write A -> B, then read it back from B into A's second half.
  for (uint32_t k = 0; k < 4096; ++k)
    bufA[k] = static_cast<uint8_t>(k * 5 + 1);
  ASSERT_EQ(p.ea[0]->postWrite(*mrA, 0, 4096, mrB->exportRegion(), 8192, 9), PostResult::kOk);
  EXPECT_EQ(waitOk(*p.a).op, OpKind::kWrite);
  EXPECT_EQ(std::memcmp(bufA.data(), bufB.data() + 8192, 4096), 0);
  ASSERT_EQ(p.ea[0]->postRead(*mrA, 65536, 4096, mrB->exportRegion(), 8192, 10), PostResult::kOk);
  EXPECT_EQ(waitOk(*p.a).op, OpKind::kRead);
  EXPECT_EQ(std::memcmp(bufA.data(), bufA.data() + 65536, 4096), 0);
}

TEST(VerbsCm, PeerThatNeverConnectsTimesOutNamingIt) {
  SKIP_WITHOUT_VERBS();
  auto a = verbs::openDevice(cmOptions());
  auto b = verbs::openDevice(cmOptions());
  auto ca = a->createConnector();
  auto cb = b->createConnector();  // listens, but never calls connect()
  auto t0 = std::chrono::steady_clock::now();
  try {
    ca->connect(cb->localAddress(), Deadline(1500));
    FAIL() << "connect succeeded without a peer";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("rdma_cm"), std::string::npos) << e.what();
  }
  auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(secs, 5.0);
}

TEST(VerbsCm, OutOfBandPeerAddressIsAProtocolError) {
  SKIP_WITHOUT_VERBS();
  auto a = verbs::openDevice(cmOptions());
  DeviceOptions plain = cmOptions();
  plain.rdmaCm = false;
  auto b = verbs::openDevice(plain);
  auto ca = a->createConnector();
  auto cb = b->createConnector();
  EXPECT_THROW(ca->connect(cb->localAddress(), Deadline(1000)), ProtocolError);
}

TEST(VerbsCm, MtuOtherThanActiveIsAUsageError) {
  SKIP_WITHOUT_VERBS();
  DeviceOptions o = cmOptions();
  o.mtu = 256;
  try {
    verbs::openDevice(o);
    FAIL() << "--mtu 256 with --rdma-cm accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--rdma-cm"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rdmabench::transport
