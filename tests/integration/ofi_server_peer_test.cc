// A server session's ofi RDM device (DeviceOptions::acceptOnly) sends only to the host of the
// control connection (docs/wire-protocol.md, threat model): a client naming another host's
// address in its Addresses frame would make rxm open a connection there (a port probe on the
// client's behalf). rdmPeerRefusal is the rule; the device test shows it applied before
// fi_av_insert, so no packet ever leaves for the forged address (192.0.2.1 is TEST-NET-1).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/error.h"
#include "transport/backends.h"
#include "transport/transport.h"
#ifdef RDMABENCH_HAVE_OFI
#include <rdma/fabric.h>

#include "transport/ofi/ofi_device_impl.h"
#include "transport/ofi/ofi_wire.h"
#endif

namespace rdmabench::transport {
namespace {

#ifdef RDMABENCH_HAVE_OFI

// A zero-padded endpoint name (ofi_wire.h kNameBuffer) holding sockaddr_in ip:port.
std::vector<uint8_t> name4(const char* ip, uint16_t port, sa_family_t family = AF_INET) {
  std::vector<uint8_t> n(ofi::kNameBuffer, 0);
  sockaddr_in a{};
  a.sin_family = family;
  a.sin_port = htons(port);
  inet_pton(AF_INET, ip, &a.sin_addr);
  std::memcpy(n.data(), &a, sizeof a);
  return n;
}

TEST(OfiServerPeer, TheControlHostPasses) {
  EXPECT_EQ(ofi::rdmPeerRefusal("10.1.2.3", FI_SOCKADDR_IN, name4("10.1.2.3", 5000).data()), "");
  // The control socket of a dual-stack listener reports IPv4 peers as IPv4-mapped IPv6.
  EXPECT_EQ(ofi::rdmPeerRefusal("::ffff:10.1.2.3", FI_SOCKADDR_IN, name4("10.1.2.3", 1).data()),
            "");
  EXPECT_EQ(ofi::rdmPeerRefusal("10.1.2.3", FI_SOCKADDR, name4("10.1.2.3", 1).data()), "");
}

TEST(OfiServerPeer, AnotherHostIsRefusedNamingBoth) {
  const std::string m =
      ofi::rdmPeerRefusal("10.1.2.3", FI_SOCKADDR_IN, name4("192.0.2.1", 22).data());
  EXPECT_NE(m.find("192.0.2.1"), std::string::npos) << m;
  EXPECT_NE(m.find("10.1.2.3"), std::string::npos) << m;
  EXPECT_NE(m.find("only sends to the host that connected"), std::string::npos) << m;
}

TEST(OfiServerPeer, LoopbackControlAllowsOnlyThisHostsAddresses) {
  // A local client may name any of this host's addresses (verbs;ofi_rxm names the RDMA
  // interface's IP although the control connection came over lo), never a remote one.
  EXPECT_EQ(ofi::rdmPeerRefusal("127.0.0.1", FI_SOCKADDR_IN, name4("127.0.0.1", 9).data()), "");
  EXPECT_EQ(ofi::rdmPeerRefusal("127.0.0.1", FI_SOCKADDR_IN, name4("127.0.0.2", 9).data()), "");
  EXPECT_NE(ofi::rdmPeerRefusal("127.0.0.1", FI_SOCKADDR_IN, name4("192.0.2.1", 9).data()), "");
}

TEST(OfiServerPeer, AFamilyTheFormatDoesNotCarryIsRefused) {
  // The provider reads FI_SOCKADDR_IN's layout whatever the family field says.
  EXPECT_NE(ofi::rdmPeerRefusal("10.1.2.3", FI_SOCKADDR_IN, name4("10.1.2.3", 1, AF_INET6).data()),
            "");
}

TEST(OfiServerPeer, NamesWithoutAnIpAndNonServerDevicesPass) {
  std::vector<uint8_t> str(ofi::kNameBuffer, 0);
  std::memcpy(str.data(), "fi_shm://1234", 13);
  EXPECT_EQ(ofi::rdmPeerRefusal("10.1.2.3", FI_ADDR_STR, str.data()), "");
  EXPECT_EQ(ofi::rdmPeerRefusal("", FI_SOCKADDR_IN, name4("192.0.2.1", 1).data()), "");
}

// The rule on a real tcp;ofi_rxm device over lo: an honest loopback peer connects, a forged
// address of another host fails in connect() (before fi_av_insert) naming both addresses.
TEST(OfiServerPeer, ServerDeviceRefusesAForgedRdmAddressBeforeUsingIt) {
  DeviceOptions server;
  server.provider = "tcp;ofi_rxm";
  server.device = "lo";
  server.acceptOnly = true;
  server.peerHost = "127.0.0.1";
  DeviceOptions client = server;
  client.acceptOnly = false;
  client.peerHost.clear();
  auto s = ofi::openDevice(server);
  auto c = ofi::openDevice(client);
  auto sc = s->createConnector();
  auto cc = c->createConnector();
  std::vector<uint8_t> honest = cc->localAddress();
  ASSERT_GE(honest.size(), ofi::kAddressHeader + sizeof(sockaddr_in));
  // The honest blob names 127.0.0.1 (the lo domain): accepted.
  EXPECT_NO_THROW((void)sc->connect(honest, Deadline(10000)));
  // The same blob with the IP rewritten: refused by a fresh connector of the same device.
  std::vector<uint8_t> forged = honest;
  sockaddr_in a{};
  std::memcpy(&a, forged.data() + ofi::kAddressHeader, sizeof a);
  ASSERT_EQ(a.sin_family, AF_INET);
  inet_pton(AF_INET, "192.0.2.1", &a.sin_addr);
  std::memcpy(forged.data() + ofi::kAddressHeader, &a, sizeof a);
  auto sc2 = s->createConnector();
  try {
    (void)sc2->connect(forged, Deadline(10000));
    FAIL() << "a forged peer address of another host was accepted";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("192.0.2.1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not the host of the control connection"),
              std::string::npos)
        << e.what();
  }
}

#endif

}  // namespace
}  // namespace rdmabench::transport
