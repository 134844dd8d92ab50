#include "transport/verbs/gid_select.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace rdmabench::transport::verbs {

const char* toString(GidType type) {
  switch (type) {
    case GidType::kIb:
      return "IB";
    case GidType::kRoceV1:
      return "RoCE v1";
    case GidType::kRoceV2:
      return "RoCE v2";
  }
  return "?";
}

bool isIpv4Mapped(const GidBytes& gid, uint32_t* ipv4) {
  for (int i = 0; i < 10; ++i)
    if (gid[i] != 0) return false;
  if (gid[10] != 0xff || gid[11] != 0xff) return false;
  if (ipv4 != nullptr) std::memcpy(ipv4, &gid[12], 4);
  return true;
}

std::string gidToString(const GidBytes& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET6, gid.data(), text, sizeof(text)) == nullptr) return "?";
  return text;
}

int selectGidIndex(const std::vector<GidEntry>& entries, const RouteHint& hint) {
  // Lower rank is better; entries that fit no rule are not candidates.
  int best = -1;
  int bestRank = 100;
  for (const GidEntry& e : entries) {
    if (e.type != GidType::kRoceV2) continue;
    uint32_t ip = 0;
    bool mapped = isIpv4Mapped(e.gid, &ip);
    int rank;
    if (mapped && hint.sourceIpv4 && ip == *hint.sourceIpv4) {
      rank = 0;
    } else if (mapped && !hint.sourceNetdev.empty() && e.netdev == hint.sourceNetdev) {
      rank = 1;
    } else if (mapped) {
      rank = 2;
    } else {
      rank = 3;
    }
    if (rank < bestRank || (rank == bestRank && e.index < best)) {
      best = e.index;
      bestRank = rank;
    }
  }
  return best < 0 ? 0 : best;
}

namespace {

std::optional<uint32_t> resolveIpv4(const std::string& host) {
  if (host.empty()) return std::nullopt;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return std::nullopt;
  uint32_t ip = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr.s_addr;
  freeaddrinfo(res);
  return ip;
}

std::optional<uint32_t> sourceTowards(uint32_t peer) {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(4791);  // RoCE v2 UDP port; connect() on UDP sends nothing
  to.sin_addr.s_addr = peer;
  std::optional<uint32_t> result;
  sockaddr_in me{};
  socklen_t len = sizeof(me);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len) == 0)
    result = me.sin_addr.s_addr;
  ::close(fd);
  return result;
}

std::string netdevOf(uint32_t ip) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string name;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if (reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr == ip) {
      name = i->ifa_name;
      break;
    }
  }
  freeifaddrs(list);
  return name;
}

}  // namespace

RouteHint resolveRouteHint(const std::string& peerHost, const std::string& localHost) {
  RouteHint hint;
  // The route towards the peer wins; a loopback source (peer on 127/8) says nothing about
  // the RDMA netdev, so then the --local-host address is used.
  if (auto peer = resolveIpv4(peerHost)) hint.sourceIpv4 = sourceTowards(*peer);
  if (hint.sourceIpv4 && (ntohl(*hint.sourceIpv4) >> 24) == 127) hint.sourceIpv4.reset();
  if (!hint.sourceIpv4) hint.sourceIpv4 = resolveIpv4(localHost);
  if (hint.sourceIpv4) hint.sourceNetdev = netdevOf(*hint.sourceIpv4);
  return hint;
}

}  // namespace rdmabench::transport::verbs
