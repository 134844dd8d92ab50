// --ifname / $RDMABENCH_IFNAME (launch/ifname.h): which IPv4 address a rank publishes on a
// multi-homed host, in NCCL_SOCKET_IFNAME syntax, and the one-line errors.
#include <gtest/gtest.h>

#include "common/error.h"
#include "launch/ifname.h"

namespace rdmabench::launch {
namespace {

const std::vector<Interface> kHost = {
    {"lo", "127.0.0.1", true, true},   {"docker0", "172.17.0.1", true, false},
    {"eth0", "10.0.0.5", true, false}, {"eth1", "192.168.7.5", true, false},
    {"ib0", "", true, false},          {"eth2", "10.9.9.9", false, false},
};

std::string errorOf(const std::string& spec, const std::vector<Interface>& ifs = kHost) {
  try {
    selectAddress(ifs, spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(IfnameSelect, DefaultIsFirstUpNonLoopback) {
  EXPECT_EQ(selectAddress(kHost, ""), "172.17.0.1");
  EXPECT_EQ(selectAddress({{"lo", "127.0.0.1", true, true}}, ""), "127.0.0.1");
  EXPECT_EQ(selectAddress({}, ""), "127.0.0.1");
}

TEST(IfnameSelect, PrefixExactAndListInInterfaceOrder) {
  EXPECT_EQ(selectAddress(kHost, "eth1"), "192.168.7.5");
  EXPECT_EQ(selectAddress(kHost, "eth"), "10.0.0.5");            // prefix: eth0 first
  EXPECT_EQ(selectAddress(kHost, "eth1,docker"), "172.17.0.1");  // interface order, as NCCL
  EXPECT_EQ(selectAddress(kHost, "=eth1"), "192.168.7.5");
  EXPECT_EQ(selectAddress(kHost, "lo"), "127.0.0.1");  // loopback when named
}

TEST(IfnameSelect, ExcludeSkipsLoopbackAndNamedPrefixes) {
  EXPECT_EQ(selectAddress(kHost, "^docker"), "10.0.0.5");
  EXPECT_EQ(selectAddress(kHost, "^docker,eth0"), "192.168.7.5");
  EXPECT_EQ(selectAddress(kHost, "^=eth0,docker0,lo"), "192.168.7.5");
}

TEST(IfnameSelect, OneLineErrorsNameTheInterface) {
  EXPECT_EQ(errorOf("eth9"),
            "--ifname eth9: no such interface on this host (interfaces: lo, docker0, eth0, eth1, "
            "ib0, eth2)");
  EXPECT_EQ(errorOf("ib0"), "--ifname ib0: no usable IPv4 address on ib0 (no IPv4 address)");
  EXPECT_EQ(errorOf("=eth2"), "--ifname =eth2: no usable IPv4 address on eth2 (down)");
  EXPECT_EQ(errorOf("=eth"),
            "--ifname =eth: no such interface on this host (interfaces: lo, "
            "docker0, eth0, eth1, ib0, eth2)");
  EXPECT_EQ(errorOf(","),
            "--ifname ',': no interface name (NAME[,NAME...], ^ to exclude, = for "
            "exact names)");
  EXPECT_EQ(errorOf("eth9", {}),
            "--ifname eth9: no such interface on this host (interfaces: none)");
}

TEST(IfnameSelect, LocalInterfacesListsLoopback) {
  bool lo = false;
  for (const Interface& i : localInterfaces())
    if (i.loopback && i.ipv4 == "127.0.0.1") lo = true;
  EXPECT_TRUE(lo);
  EXPECT_EQ(selectAddress(localInterfaces(), "=lo"), "127.0.0.1");
}

}  // namespace
}  // namespace rdmabench::launch
