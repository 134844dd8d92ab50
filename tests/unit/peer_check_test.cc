// transport/peer_check.h: where a server session may address a client (docs/wire-protocol.md,
// "Data path direction"). bind() probes only; nothing is sent.
#include "transport/peer_check.h"

#include <gtest/gtest.h>

#include <string>

namespace rdmabench::transport {
namespace {

TEST(PeerCheck, CanonicalIpReadsEveryFormOfTheSameAddress) {
  EXPECT_EQ(canonicalIp("10.1.2.3"), "10.1.2.3");
  EXPECT_EQ(canonicalIp("::ffff:10.1.2.3"), "10.1.2.3");
  EXPECT_EQ(canonicalIp("[fe80::1%eth0]"), "fe80::1");
  EXPECT_EQ(canonicalIp("FE80:0::1"), "fe80::1");
  EXPECT_EQ(canonicalIp("node-a"), "");
}

TEST(PeerCheck, TheControlHostIsAllowedAnyOtherIsRefusedNamingBoth) {
  EXPECT_EQ(serverPeerRefusal("10.1.2.3", "10.1.2.3"), "");
  EXPECT_EQ(serverPeerRefusal("::ffff:10.1.2.3", "10.1.2.3"), "");
  const std::string m = serverPeerRefusal("10.1.2.3", "192.0.2.1");
  EXPECT_NE(m.find("192.0.2.1"), std::string::npos) << m;
  EXPECT_NE(m.find("10.1.2.3"), std::string::npos) << m;
  EXPECT_NE(serverPeerRefusal("10.1.2.3", "not-an-ip"), "");
}

TEST(PeerCheck, ALoopbackClientMayNameOnlyThisHostsAddresses) {
  EXPECT_EQ(serverPeerRefusal("127.0.0.1", "127.0.0.1"), "");
  EXPECT_EQ(serverPeerRefusal("127.0.0.1", "127.0.0.2"), "");  // lo owns 127/8
  EXPECT_NE(serverPeerRefusal("127.0.0.1", "192.0.2.1"), "");  // TEST-NET-1: never local
}

TEST(PeerCheck, NoControlPeerMeansNotAServerSession) {
  EXPECT_EQ(serverPeerRefusal("", "192.0.2.1"), "");
}

}  // namespace
}  // namespace rdmabench::transport
