#include "common/placement.h"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench {
namespace {

class Topology {
 public:
  Topology() {
    if (hwloc_topology_init(&t_) != 0) throw SystemError("hwloc_topology_init", errno);
    // Keep OS devices (HCAs, NICs) so a device name leads to its NUMA node.
    hwloc_topology_set_io_types_filter(t_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t_) != 0) {
      hwloc_topology_destroy(t_);
      throw SystemError("hwloc_topology_load", errno);
    }
  }
  ~Topology() { hwloc_topology_destroy(t_); }
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  hwloc_topology_t get() const { return t_; }

 private:
  hwloc_topology_t t_{};
};

const Topology& topology() {
  static const Topology t;
  return t;
}

class Bitmap {
 public:
  Bitmap() : b_(hwloc_bitmap_alloc()) {}
  ~Bitmap() { hwloc_bitmap_free(b_); }
  Bitmap(const Bitmap&) = delete;
  Bitmap& operator=(const Bitmap&) = delete;
  hwloc_bitmap_t get() const { return b_; }

 private:
  hwloc_bitmap_t b_;
};

std::string listOf(hwloc_const_bitmap_t b) {
  char* s = nullptr;
  if (hwloc_bitmap_list_asprintf(&s, b) < 0 || !s) return "";
  std::string r(s);
  std::free(s);
  return r;
}

// A Linux CPU list (cpuset(7) "List format"): comma-separated items, each N or N-M with N <= M.
bool isCpuList(const std::string& s) {
  size_t i = 0;
  auto number = [&](unsigned long& v) {
    size_t start = i;
    v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - start < 6)
      v = v * 10 + (s[i++] - '0');
    return i > start && !(i < s.size() && s[i] >= '0' && s[i] <= '9');
  };
  while (true) {
    unsigned long lo = 0, hi = 0;
    if (!number(lo)) return false;
    if (i < s.size() && s[i] == '-') {
      ++i;
      if (!number(hi) || hi < lo) return false;
    }
    if (i == s.size()) return true;
    if (s[i++] != ',') return false;
  }
}

// NUMA node of an OS device (HCA, NIC) by name, through its first non-I/O ancestor; -1 when
// hwloc does not know the device (software devices such as rxe0 or lo have no PCI locality).
int deviceNumaNode(hwloc_topology_t t, const std::string& name) {
  for (hwloc_obj_t o = hwloc_get_next_osdev(t, nullptr); o; o = hwloc_get_next_osdev(t, o)) {
    if (!o->name || name != o->name) continue;
    hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(t, o);
    if (a && a->nodeset && !hwloc_bitmap_iszero(a->nodeset)) return hwloc_bitmap_first(a->nodeset);
  }
  return -1;
}

int parseNode(const std::string& numa) {
  if (numa.empty() || numa.size() > 4 || numa.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(
        fmt::format("--numa {}: must be auto, off or a NUMA node number 0..9999", numa));
  return std::atoi(numa.c_str());
}

}  // namespace

nlohmann::json PlacementFacts::toJson() const {
  nlohmann::json j{{"cpus", cpus},
                   {"cpu_numa_nodes", cpuNumaNodes},
                   {"device", device},
                   {"device_numa_node", deviceNumaNode >= 0 ? nlohmann::json(deviceNumaNode)
                                                            : nlohmann::json("unknown")},
                   {"source", source}};
  if (!warning.empty()) j["warning"] = warning;
  if (!ranks.empty()) {
    j["ranks"] = nlohmann::json::array();
    for (const RankPlacement& r : ranks)
      j["ranks"].push_back(
          {{"rank", r.rank}, {"host", r.host}, {"cpus", r.cpus}, {"source", r.source}});
  }
  return j;
}

void validatePlacement(const PlacementRequest& r) {
  if (!r.cpus.empty() && !isCpuList(r.cpus))
    throw UsageError(fmt::format(
        "--cpu {}: not a CPU list (expected numbers and ranges, e.g. 2 or 0-3,8)", r.cpus));
  if (r.numa != "auto" && r.numa != "off") parseNode(r.numa);
  if (!r.cpus.empty() && r.numa != "auto" && r.numa != "off")
    throw UsageError(fmt::format("--cpu {} and --numa {}: give one of them", r.cpus, r.numa));
}

void loadTopologyOnce() {
  (void)topology();
}

PlacementFacts applyPlacement(const PlacementRequest& r, const std::string& deviceName) {
  validatePlacement(r);
  hwloc_topology_t t = topology().get();
  PlacementFacts f;
  f.device = deviceName;
  f.deviceNumaNode = deviceNumaNode(t, deviceName);
  hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(t);
  Bitmap current;
  if (hwloc_get_cpubind(t, current.get(), HWLOC_CPUBIND_THREAD) != 0)
    hwloc_bitmap_copy(current.get(), allowed);
  // A launcher binding (srun --cpu-bind, mpirun --bind-to, taskset): narrower than allowed.
  const bool inherited = !hwloc_bitmap_isincluded(allowed, current.get());
  const std::string currentList = listOf(current.get());

  Bitmap target;  // empty = keep the current binding
  if (!r.cpus.empty()) {
    hwloc_bitmap_list_sscanf(target.get(), r.cpus.c_str());
    if (hwloc_bitmap_iszero(target.get()) || !hwloc_bitmap_isincluded(target.get(), allowed))
      throw UsageError(
          fmt::format("--cpu {}: not within the CPUs allowed here ({})", r.cpus, listOf(allowed)));
    f.source = "bound by --cpu " + r.cpus;
  } else if (r.numa == "off") {
    f.source =
        inherited ? "inherited binding (launcher/taskset), --numa off" : "not bound (--numa off)";
  } else if (r.numa != "auto") {
    int node = parseNode(r.numa);
    hwloc_obj_t n = hwloc_get_numanode_obj_by_os_index(t, static_cast<unsigned>(node));
    if (!n) {
      Bitmap nodes;
      hwloc_cpuset_to_nodeset(t, allowed, nodes.get());
      throw UsageError(
          fmt::format("--numa {}: no such NUMA node here (nodes: {})", node, listOf(nodes.get())));
    }
    hwloc_bitmap_and(target.get(), n->cpuset, allowed);
    if (hwloc_bitmap_iszero(target.get()))
      throw UsageError(
          fmt::format("--numa {}: none of its CPUs is allowed here ({})", node, listOf(allowed)));
    f.source = fmt::format("bound to NUMA node {} by --numa {}", node, node);
  } else if (inherited) {
    f.source = "inherited binding (launcher/taskset) kept by --numa auto";
  } else if (f.deviceNumaNode < 0) {
    f.source = "not bound (--numa auto: device NUMA node unknown)";
  } else {
    hwloc_obj_t n = hwloc_get_numanode_obj_by_os_index(t, static_cast<unsigned>(f.deviceNumaNode));
    if (n) hwloc_bitmap_and(target.get(), n->cpuset, allowed);
    f.source =
        hwloc_bitmap_iszero(target.get())
            ? "not bound (--numa auto: no allowed CPU on the device's node)"
            : fmt::format("bound to the device's NUMA node {} by --numa auto", f.deviceNumaNode);
  }

  if (!hwloc_bitmap_iszero(target.get()) && !hwloc_bitmap_isequal(target.get(), current.get())) {
    if (inherited)
      f.warning =
          fmt::format("{} overrides the binding the launcher set (CPUs {})", f.source, currentList);
    if (hwloc_set_cpubind(t, target.get(), HWLOC_CPUBIND_THREAD) != 0) {
      f.warning = fmt::format("could not bind to CPUs {}: {} (running on CPUs {})",
                              listOf(target.get()), std::strerror(errno), currentList);
    } else {
      hwloc_bitmap_copy(current.get(), target.get());
    }
  }
  f.cpus = listOf(current.get());
  Bitmap nodes;
  hwloc_cpuset_to_nodeset(t, current.get(), nodes.get());
  f.cpuNumaNodes = listOf(nodes.get());
  if (f.warning.empty() && f.deviceNumaNode >= 0 &&
      !(hwloc_bitmap_weight(nodes.get()) == 1 &&
        hwloc_bitmap_isset(nodes.get(), static_cast<unsigned>(f.deviceNumaNode))))
    f.warning = fmt::format("CPUs {} (NUMA node {}) are not all on the NUMA node of {} ({})",
                            f.cpus, f.cpuNumaNodes, deviceName, f.deviceNumaNode);
  return f;
}

PlacementRequest rankPlacement(const PlacementRequest& request, int localRank, int localRanks,
                               bool* shared) {
  validatePlacement(request);
  if (shared) *shared = false;
  if (request.cpus.empty() || localRanks <= 1) return request;
  Bitmap list;
  hwloc_bitmap_list_sscanf(list.get(), request.cpus.c_str());
  std::vector<unsigned> cpus;
  unsigned cpu;
  hwloc_bitmap_foreach_begin(cpu, list.get()) cpus.push_back(cpu);
  hwloc_bitmap_foreach_end();
  if (cpus.empty()) return request;
  if (shared) *shared = cpus.size() < static_cast<size_t>(localRanks);
  PlacementRequest r = request;
  r.cpus = fmt::format("{}", cpus[static_cast<size_t>(std::max(localRank, 0)) % cpus.size()]);
  return r;
}

}  // namespace rdmabench
