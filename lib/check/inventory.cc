#include "check/inventory.h"

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

namespace rdmabench::check {

std::string PortState::name() const {
  return fmt::format("{}/{}", device, port);
}

std::vector<PortState*> Inventory::ports() {
  std::vector<PortState*> out;
  for (auto& d : devices)
    for (auto& p : d.ports)
      out.push_back(&p);
  return out;
}

std::string sysfsRoot() {
  const char* r = std::getenv("RDMABENCH_CHECK_SYSFS");
  return r && *r ? std::string(r) : std::string("/sys");
}

std::string readLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' '))
    line.pop_back();
  return line;
}

std::vector<std::string> listDir(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = opendir(path.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string afterColon(const std::string& s) {
  const size_t c = s.find(": ");
  if (c == std::string::npos || c == 0) return s;
  for (size_t i = 0; i < c; ++i)
    if (s[i] < '0' || s[i] > '9') return s;
  return s.substr(c + 2);
}

double parseRateGbps(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return end == s.c_str() || v < 0 ? 0 : v;
}

namespace {

int64_t readInt(const std::string& path, int64_t def) {
  const std::string s = readLine(path);
  if (s.empty()) return def;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  return end == s.c_str() ? def : static_cast<int64_t>(v);
}

bool allZeroGid(const std::string& g) {
  return std::all_of(g.begin(), g.end(), [](char c) { return c == '0' || c == ':'; });
}

NetdevState readNetdev(const std::string& root, const std::string& name) {
  NetdevState n;
  n.name = name;
  if (name.empty()) return n;
  const std::string dir = root + "/class/net/" + name + "/";
  n.operstate = readLine(dir + "operstate");
  n.speedMbps = readInt(dir + "speed", -1);
  if (n.speedMbps <= 0) n.speedMbps = -1;  // veth and down links say -1 or fail with EINVAL
  n.mtu = readInt(dir + "mtu", -1);
  n.numaNode = static_cast<int>(readInt(dir + "device/numa_node", -1));
  return n;
}

// The port's netdev: the first GID entry that names one (RoCE), else a device/net/ entry whose
// dev_port matches the port (mlx5 and others list their netdevs there).
std::string portNetdev(const std::string& root, const std::string& devDir, const PortState& p) {
  for (const GidRow& g : p.gids)
    if (!g.netdev.empty()) return g.netdev;
  if (!p.ethernet()) return "";
  for (const std::string& n : listDir(devDir + "device/net")) {
    const int64_t devPort = readInt(root + "/class/net/" + n + "/dev_port", 0);
    if (devPort + 1 == p.port) return n;
  }
  return "";
}

PortState readPort(const std::string& root, const std::string& dev, int port) {
  PortState p;
  p.device = dev;
  p.port = port;
  const std::string devDir = root + "/class/infiniband/" + dev + "/";
  const std::string dir = devDir + fmt::format("ports/{}/", port);
  p.state = afterColon(readLine(dir + "state"));
  p.physState = afterColon(readLine(dir + "phys_state"));
  p.rate = readLine(dir + "rate");
  p.rateGbps = parseRateGbps(p.rate);
  p.linkLayer = readLine(dir + "link_layer");
  // Only populated entries have a type and a netdev (reading an empty one fails with EINVAL).
  for (const std::string& i : listDir(dir + "gids")) {
    GidRow g;
    g.index = std::atoi(i.c_str());
    g.gid = readLine(dir + "gids/" + i);
    if (g.gid.empty() || allZeroGid(g.gid)) continue;
    std::string type = readLine(dir + "gid_attrs/types/" + i);
    if (type == "IB/RoCE v1") type = p.ethernet() ? "RoCE v1" : "IB";
    g.type = type;
    g.netdev = readLine(dir + "gid_attrs/ndevs/" + i);
    p.gids.push_back(std::move(g));
  }
  std::sort(p.gids.begin(), p.gids.end(),
            [](const GidRow& a, const GidRow& b) { return a.index < b.index; });
  p.netdev = readNetdev(root, portNetdev(root, devDir, p));
  return p;
}

}  // namespace

Inventory readInventory(const std::string& root, const std::vector<std::string>& only) {
  Inventory inv;
  inv.root = root;
  for (const std::string& dev : listDir(root + "/class/infiniband")) {
    if (!only.empty() && std::find(only.begin(), only.end(), dev) == only.end()) continue;
    DeviceState d;
    d.name = dev;
    const std::string devDir = root + "/class/infiniband/" + dev + "/";
    d.fwVer = readLine(devDir + "fw_ver");
    d.nodeType = readLine(devDir + "node_type");
    d.numaNode = static_cast<int>(readInt(devDir + "device/numa_node", -1));
    std::vector<int> numbers;
    for (const std::string& n : listDir(devDir + "ports"))
      if (!n.empty() &&
          std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }))
        numbers.push_back(std::atoi(n.c_str()));
    std::sort(numbers.begin(), numbers.end());
    for (int n : numbers)
      d.ports.push_back(readPort(root, dev, n));
    if (d.numaNode < 0)
      for (const PortState& p : d.ports)
        if (p.netdev.numaNode >= 0) d.numaNode = p.netdev.numaNode;
    inv.devices.push_back(std::move(d));
  }
  return inv;
}

}  // namespace rdmabench::check
