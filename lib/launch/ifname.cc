#include "launch/ifname.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"

namespace rdmabench::launch {

std::vector<Interface> localInterfaces() {
  std::vector<Interface> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_name == nullptr) continue;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const Interface& x) { return x.name == i->ifa_name; });
    if (it == out.end()) {
      out.push_back(Interface{i->ifa_name, "", (i->ifa_flags & IFF_UP) != 0,
                              (i->ifa_flags & IFF_LOOPBACK) != 0});
      it = out.end() - 1;
    }
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || !it->ipv4.empty()) continue;
    char text[INET_ADDRSTRLEN];
    const auto* a = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if (inet_ntop(AF_INET, &a->sin_addr, text, sizeof text)) it->ipv4 = text;
  }
  freeifaddrs(list);
  return out;
}

namespace {

// NCCL_SOCKET_IFNAME matching: prefixes, or exact names after "=", negated after "^".
struct IfSpec {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> names;
  bool matches(const std::string& name) const {
    bool any = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return exact ? name == n : name.compare(0, n.size(), n) == 0;
    });
    return any != exclude;
  }
};

IfSpec parseSpec(const std::string& spec, const std::string& what) {
  IfSpec s;
  std::string rest = spec;
  if (!rest.empty() && rest[0] == '^') s.exclude = true, rest.erase(0, 1);
  if (!rest.empty() && rest[0] == '=') s.exact = true, rest.erase(0, 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t comma = rest.find(',', pos);
    if (comma == std::string::npos) comma = rest.size();
    std::string name = rest.substr(pos, comma - pos);
    if (!name.empty()) s.names.push_back(name);
    pos = comma + 1;
  }
  if (s.names.empty())
    throw UsageError(
        fmt::format("{} '{}': no interface name (NAME[,NAME...], ^ to exclude, = "
                    "for exact names)",
                    what, spec));
  return s;
}

}  // namespace

std::string selectAddress(const std::vector<Interface>& interfaces, const std::string& spec,
                          const std::string& what) {
  if (spec.empty()) {
    for (const Interface& i : interfaces)
      if (i.up && !i.loopback && !i.ipv4.empty()) return i.ipv4;
    return "127.0.0.1";
  }
  const IfSpec s = parseSpec(spec, what);
  std::vector<std::string> matched;
  for (const Interface& i : interfaces) {
    // Loopback only when named (as NCCL: "^docker" must not pick lo).
    if (!s.matches(i.name) || (i.loopback && s.exclude)) continue;
    if (i.up && !i.ipv4.empty()) return i.ipv4;
    matched.push_back(fmt::format("{} ({})", i.name, !i.up ? "down" : "no IPv4 address"));
  }
  if (!matched.empty())
    throw UsageError(
        fmt::format("{} {}: no usable IPv4 address on {}", what, spec, fmt::join(matched, ", ")));
  std::vector<std::string> names;
  for (const Interface& i : interfaces)
    names.push_back(i.name);
  throw UsageError(fmt::format("{} {}: no such interface on this host (interfaces: {})", what, spec,
                               names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
}

}  // namespace rdmabench::launch
