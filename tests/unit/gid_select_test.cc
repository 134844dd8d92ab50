// The GID selection policy of the verbs backend (transport/verbs/gid_select.h): pure functions
// over a GID table, no device needed. The route-hint lookup (name resolution) stays an
// integration test (VerbsGidSelect.RouteHintOfLoopbackAndUnknownPeers).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#ifdef RDMABENCH_HAVE_VERBS
#include "transport/verbs/gid_select.h"
#endif

namespace rdmabench::transport {
namespace {

#ifdef RDMABENCH_HAVE_VERBS
// GID selection policy: pure function, runs everywhere.
verbs::GidEntry gidEntry(int index, const std::string& text, verbs::GidType type,
                         const std::string& netdev) {
  verbs::GidEntry e;
  e.index = index;
  e.type = type;
  e.netdev = netdev;
  if (text.rfind("::ffff:", 0) == 0) {
    e.gid[10] = e.gid[11] = 0xff;
    unsigned a, b, c, d;
    EXPECT_EQ(std::sscanf(text.c_str() + 7, "%u.%u.%u.%u", &a, &b, &c, &d), 4);
    e.gid[12] = static_cast<uint8_t>(a);
    e.gid[13] = static_cast<uint8_t>(b);
    e.gid[14] = static_cast<uint8_t>(c);
    e.gid[15] = static_cast<uint8_t>(d);
  } else {
    e.gid[0] = 0xfe;
    e.gid[1] = 0x80;
    e.gid[15] = static_cast<uint8_t>(index);
  }
  return e;
}

uint32_t ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  uint8_t bytes[4] = {a, b, c, d};
  uint32_t v;
  std::memcpy(&v, bytes, 4);
  return v;
}

TEST(VerbsGidSelect, PolicyOrder) {
  using verbs::GidType;
  std::vector<verbs::GidEntry> t = {
      gidEntry(0, "fe80", GidType::kRoceV1, "eth0"),
      gidEntry(1, "fe80", GidType::kRoceV2, "eth0"),
      gidEntry(2, "::ffff:10.0.0.1", GidType::kRoceV1, "eth0"),
      gidEntry(3, "::ffff:10.0.0.1", GidType::kRoceV2, "eth0"),
      gidEntry(4, "::ffff:192.168.5.9", GidType::kRoceV1, "eth1"),
      gidEntry(5, "::ffff:192.168.5.9", GidType::kRoceV2, "eth1"),
  };
  verbs::RouteHint none;
  EXPECT_EQ(verbs::selectGidIndex(t, none), 3);  // first RoCE v2 IPv4-mapped
  verbs::RouteHint viaEth1;
  viaEth1.sourceIpv4 = ipv4(192, 168, 5, 9);
  EXPECT_EQ(verbs::selectGidIndex(t, viaEth1), 5);  // the one on the route to the peer
  verbs::RouteHint netdevOnly;
  netdevOnly.sourceIpv4 = ipv4(172, 16, 0, 1);  // address not in the table
  netdevOnly.sourceNetdev = "eth1";
  EXPECT_EQ(verbs::selectGidIndex(t, netdevOnly), 5);
  std::vector<verbs::GidEntry> v2NoIp = {gidEntry(0, "fe80", GidType::kRoceV1, "eth0"),
                                         gidEntry(1, "fe80", GidType::kRoceV2, "eth0")};
  EXPECT_EQ(verbs::selectGidIndex(v2NoIp, viaEth1), 1);
  std::vector<verbs::GidEntry> ib = {gidEntry(0, "fe80", GidType::kIb, "")};
  EXPECT_EQ(verbs::selectGidIndex(ib, viaEth1), 0);
  EXPECT_EQ(verbs::selectGidIndex({}, none), 0);
}

TEST(VerbsGidSelect, TextAndMapping) {
  auto e = gidEntry(1, "::ffff:10.1.2.3", verbs::GidType::kRoceV2, "veth0");
  uint32_t ip = 0;
  EXPECT_TRUE(verbs::isIpv4Mapped(e.gid, &ip));
  EXPECT_EQ(ip, ipv4(10, 1, 2, 3));
  EXPECT_EQ(verbs::gidToString(e.gid), "::ffff:10.1.2.3");
  EXPECT_FALSE(verbs::isIpv4Mapped(gidEntry(0, "fe80", verbs::GidType::kIb, "").gid));
}
#endif

}  // namespace
}  // namespace rdmabench::transport
