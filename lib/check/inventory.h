#pragma once
// Step 1 of `rdmabench check` (docs/check.md): what the node's RDMA devices and their netdevs
// say about themselves, read from sysfs only (no MAD, no verbs call, no root): per device the
// firmware version and NUMA node; per port the state, physical state, rate, link layer and the
// populated GID table with each entry's type (IB, RoCE v1, RoCE v2) and netdev; per netdev the
// operational state, speed and MTU.
// The root is injectable ($RDMABENCH_CHECK_SYSFS, default "/sys") so tests read a fake tree.
// Never throws for a missing or unreadable file: the field stays empty (-1 for numbers) and the
// reader goes on. Thread-safety: pure functions.

#include <cstdint>
#include <string>
#include <vector>

namespace rdmabench::check {

struct GidRow {
  int index = 0;
  std::string gid;     // as sysfs prints it ("fe80:0000:...")
  std::string type;    // "IB", "RoCE v1", "RoCE v2" (gid_attrs/types), "" = not stated
  std::string netdev;  // gid_attrs/ndevs, "" = none
};

struct NetdevState {
  std::string name;        // "" = the port has no netdev (InfiniBand)
  std::string operstate;   // "up", "down", "lowerlayerdown", ...
  int64_t speedMbps = -1;  // /sys/class/net/N/speed; -1 = not stated (veth, down)
  int64_t mtu = -1;        // bytes
  int numaNode = -1;       // of the netdev's PCI device; -1 = none
};

struct PortState {
  std::string device;
  int port = 0;
  std::string state;      // "ACTIVE", "DOWN", ... (the text after "4: ")
  std::string physState;  // "LinkUp", "Disabled", ... (the text after "5: ")
  std::string rate;       // "100 Gb/sec (4X EDR)" as sysfs prints it
  double rateGbps = 0;    // the leading number of `rate`; 0 = unknown
  std::string linkLayer;  // "InfiniBand" | "Ethernet"
  std::vector<GidRow> gids;
  NetdevState netdev;

  std::string name() const;  // "mlx5_0/1": the subject of every finding about this port
  bool active() const { return state == "ACTIVE"; }
  bool ethernet() const { return linkLayer == "Ethernet"; }
};

struct DeviceState {
  std::string name;
  std::string fwVer;     // fw_ver; "" = not stated (rxe has none)
  std::string nodeType;  // "1: CA"
  int numaNode = -1;     // device/numa_node, else the netdev's; -1 = none
  std::vector<PortState> ports;
};

struct Inventory {
  std::string root;  // the sysfs root read
  std::vector<DeviceState> devices;
  std::vector<PortState*> ports();  // every port of every device, in order
};

// $RDMABENCH_CHECK_SYSFS when set and not empty, else "/sys".
std::string sysfsRoot();

// Reads ROOT/class/infiniband/* (devices in name order; ports in number order). `only`: device
// names to keep (empty = all).
Inventory readInventory(const std::string& root, const std::vector<std::string>& only = {});

// The first line of a sysfs file without its newline; "" when it cannot be read.
std::string readLine(const std::string& path);
// The names in a directory, sorted; empty when it cannot be read.
std::vector<std::string> listDir(const std::string& path);

// "4: ACTIVE" -> "ACTIVE"; text without "N: " comes back as it is.
std::string afterColon(const std::string& s);
// "100 Gb/sec (4X EDR)" -> 100; 0 when it does not start with a number.
double parseRateGbps(const std::string& s);

}  // namespace rdmabench::check
