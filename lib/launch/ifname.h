#pragma once
// Which IPv4 address a rank publishes on a multi-homed host: --ifname / $RDMABENCH_IFNAME, in
// the syntax of NCCL_SOCKET_IFNAME (NCCL's socket.h): a comma list of interface name prefixes
// ("eth,ib"), "^" before the list to exclude those prefixes instead ("^docker,lo"), "=" before
// the list for exact names ("=eth0"). Rank 0 publishes this address for its store under PMIx
// (docs/rendezvous.md "PMIx"), and every rank binds its data plane to it. Thread-safety: pure
// functions, except localInterfaces (reads the system's interfaces).

#include <string>
#include <vector>

namespace rdmabench::launch {

// One interface as getifaddrs lists it; ipv4 is "" when it has no IPv4 address.
struct Interface {
  std::string name;
  std::string ipv4;  // first IPv4 address, dotted quad
  bool up = false;
  bool loopback = false;
};

// This host's interfaces in getifaddrs order, one entry per name.
std::vector<Interface> localInterfaces();

// The address to publish. `spec` empty: the first IPv4 address of an interface that is up and
// not loopback, else "127.0.0.1" (a single host). Otherwise the first IPv4 address, in list
// order, of an up interface `spec` selects (loopback only when named). UsageError, one line
// naming the option (`what`, e.g. "--ifname") and the value: no interface matches (the
// interfaces there are are listed), or the matching ones are down or have no IPv4 address.
std::string selectAddress(const std::vector<Interface>& interfaces, const std::string& spec,
                          const std::string& what = "--ifname");

}  // namespace rdmabench::launch
