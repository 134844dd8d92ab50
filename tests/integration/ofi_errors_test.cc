// Error paths of the libfabric (ofi) backend (tcp;ofi_rxm, present wherever libfabric is):
// unknown providers and domains, limits, bad options and addresses; and the backend probe.
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

// ---- error paths (tcp;ofi_rxm, always present where libfabric is) ----

class OfiErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why = unavailableReason({"tcp;ofi_rxm", "lo"});
    if (!why.empty()) GTEST_SKIP() << why;
  }
  DeviceOptions base() const {
    DeviceOptions o;
    o.provider = "tcp;ofi_rxm";
    o.device = "lo";
    return o;
  }
};

TEST_F(OfiErrors, UnknownProviderListsProviders) {
  DeviceOptions o = base();
  o.provider = "nosuchprovider";
  std::string m = messageOf<UsageError>([&] { (void)ofi::openDevice(o); });
  EXPECT_NE(m.find("nosuchprovider"), std::string::npos) << m;
  EXPECT_NE(m.find("tcp;ofi_rxm"), std::string::npos) << m;
}

TEST_F(OfiErrors, UnknownDomainListsDomains) {
  DeviceOptions o = base();
  o.device = "nosuchdomain0";
  std::string m = messageOf<UsageError>([&] { (void)ofi::openDevice(o); });
  EXPECT_NE(m.find("nosuchdomain0"), std::string::npos) << m;
  EXPECT_NE(m.find("lo"), std::string::npos) << m;
}

TEST_F(OfiErrors, MessageAboveMaxMsgSizeIsRejected) {
  // tcp's max_msg_size is SIZE_MAX; Tuning clamps it as a smaller provider would report.
  ofi::Tuning t;
  t.maxMessageBytes = 4096;
  auto a = ofi::openDevice(base(), t);
  auto b = ofi::openDevice(base(), t);
  EXPECT_EQ(a->caps().maxMessageBytes, 4096u);
  Link l = connectPair(*a, *b);
  Buffer buf(8192);
  auto m = a->registerMemory(buf.data, 8192);
  std::string msg = messageOf<UsageError>([&] { (void)l.ab->postSend(*m, 0, 4097, 1); });
  EXPECT_NE(msg.find("max_msg_size"), std::string::npos) << msg;
  EXPECT_NE(msg.find("4096"), std::string::npos) << msg;
  EXPECT_THROW((void)l.ab->postRecv(*m, 0, 8192, 2), UsageError);
}

TEST_F(OfiErrors, UnsupportedOptionsAreUsageErrors) {
  DeviceOptions o = base();
  o.endpointType = "dgram";
  EXPECT_THROW((void)ofi::openDevice(o), UsageError);
  o = base();
  o.inlineBytes = 1 << 30;
  std::string m = messageOf<UsageError>([&] { (void)ofi::openDevice(o); });
  EXPECT_NE(m.find("inject_size"), std::string::npos) << m;
}

TEST_F(OfiErrors, MalformedPeerAddressIsRejected) {
  auto a = ofi::openDevice(base());
  auto c = a->createConnector();
  EXPECT_THROW((void)c->connect({1, 2, 3}, Deadline(1000)), ProtocolError);
}

TEST(OfiProbe, ListsTcpRxmWithLimits) {
  BackendStatus s = ofi::probe();
  ASSERT_TRUE(s.built);
  ASSERT_TRUE(s.usable) << s.reason;
  bool found = false;
  for (const auto& p : s.details["providers"]) {
    if (p["provider"] != "tcp;ofi_rxm") continue;
    found = true;
    for (const auto& d : p["domains"]) {
      EXPECT_TRUE(d.contains("inject_size"));
      EXPECT_TRUE(d.contains("max_msg_size"));
      EXPECT_TRUE(d.contains("mr_mode"));
    }
  }
  EXPECT_TRUE(found) << s.details.dump();
  EXPECT_NE(s.reason.find("tcp;ofi_rxm"), std::string::npos) << s.reason;
}

TEST_F(OfiErrors, UnknownProviderForMsgListsMsgProviders) {
  DeviceOptions o = base();
  o.provider = "nosuchprovider";
  o.endpointType = "msg";
  std::string m = messageOf<UsageError>([&] { (void)ofi::openDevice(o); });
  EXPECT_NE(m.find("nosuchprovider"), std::string::npos) << m;
  EXPECT_NE(m.find("FI_EP_MSG"), std::string::npos) << m;
  EXPECT_NE(m.find("tcp"), std::string::npos) << m;
  // An RDM-only provider is not an FI_EP_MSG provider either.
  o.provider = "tcp;ofi_rxm";
  EXPECT_THROW((void)ofi::openDevice(o), UsageError);
}

TEST_F(OfiErrors, MsgAddressIsNotAcceptedByRdmAndViceVersa) {
  DeviceOptions m = base();
  m.provider = "tcp";
  m.endpointType = "msg";
  auto dm = ofi::openDevice(m);
  auto dr = ofi::openDevice(base());
  auto cm = dm->createConnector();
  auto cr = dr->createConnector();
  EXPECT_THROW((void)cr->connect(cm->localAddress(), Deadline(1000)), ProtocolError);
  EXPECT_THROW((void)cm->connect(cr->localAddress(), Deadline(1000)), ProtocolError);
}

#endif  // RDMABENCH_HAVE_OFI

}  // namespace
}  // namespace rdmabench::transport
