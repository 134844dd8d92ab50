#pragma once
// CPU / NUMA placement of the benchmark thread (--cpu LIST, --numa auto|N|off), through hwloc
// (topology, the device's NUMA node, binding), never by parsing sysfs by hand.
//
// Policy (docs/metrics.md, "Placement"):
//  - --cpu LIST binds to exactly those CPUs (hwloc list syntax "0-3,8"). Overriding a binding
//    that a launcher (srun, mpirun, taskset) already set prints a warning, never silently.
//  - --numa N binds to the CPUs of NUMA node N (same warning rule).
//  - --numa auto (default) binds to the CPUs of the device's NUMA node when hwloc knows it (a
//    PCI HCA or NIC); it keeps an existing launcher binding (an existing cpuset/affinity narrower
//    than the allowed CPUs) and binds nothing when the device's node is unknown (software
//    devices: rxe, loopback). It binds to the node's cores, not one core: in loopback mode the
//    forked server and the client would otherwise share one core.
//  - --numa off binds nothing.
// The header then shows the CPU set used, its NUMA node(s), the device's NUMA node, and a warning
// when they differ. Not thread-safe (call from the benchmark thread before timed loops).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rdmabench {

struct PlacementRequest {
  std::string cpus;           // --cpu LIST; "" = not given
  std::string numa = "auto";  // --numa auto | off | N
};

// One rank's binding in an N-rank run header (collective/rank_placement.h gatherPlacement).
struct RankPlacement {
  int rank = 0;
  std::string host;
  std::string cpus;    // hwloc list syntax, "3" or "0-3"
  std::string source;  // as PlacementFacts::source
};

struct PlacementFacts {
  std::string cpus;          // CPU list the thread is bound to (hwloc list syntax), "0-3"
  std::string cpuNumaNodes;  // NUMA nodes of those CPUs, "0" or "0-1" ("" unknown)
  std::string device;        // the device/interface name looked up
  int deviceNumaNode = -1;   // -1 = unknown (virtual device, no hwloc I/O info)
  std::string source;        // "bound by --cpu 2", "inherited binding (launcher)", ...
  std::string warning;       // "" when fine
  // N-rank runs only: every rank's binding in rank order (empty for point-to-point runs).
  std::vector<RankPlacement> ranks;
  // JSON run.placement: cpus, cpu_numa_nodes, device, device_numa_node (number or "unknown"),
  // source, warning (when set), ranks [{rank, host, cpus, source}] (when set).
  nlohmann::json toJson() const;
};

// Checks the request's syntax (UsageError naming the option, value and accepted form); no
// binding. Called while parsing the command line.
void validatePlacement(const PlacementRequest& request);

// Discovers this host's topology (hwloc with I/O devices: 30-150 ms on a loaded 2-core host) once
// per process; applyPlacement reuses it, and so do processes forked afterwards: the --np launcher
// calls this before forking, so 1024 local ranks do not each rediscover it (that alone was
// minutes of CPU). Thread-safe (a function-local static). SystemError when hwloc fails.
void loadTopologyOnce();

// Applies `request` to the calling thread for a run on `deviceName` (verbs device, ofi domain
// or network interface) and returns the facts for the run header. Throws UsageError for CPUs
// or a NUMA node that do not exist or are not allowed here (naming the allowed ones); hwloc
// failures to bind become a warning, not an error.
PlacementFacts applyPlacement(const PlacementRequest& request, const std::string& deviceName);

// The request of local rank `localRank` (0-based) of `localRanks` ranks on this host, for N-rank
// runs (as mpirun --map-by core --bind-to core): with --cpu LIST and more than one local rank,
// each rank takes one CPU of the list, the localRank-th in ascending order, cycling when the
// list has fewer CPUs than ranks (then `*shared` is set). Any other request applies to every
// rank as it is (--numa N: the whole node; auto keeps a launcher's per-rank binding). Validates
// the request first (UsageError). Pure, thread-safe.
PlacementRequest rankPlacement(const PlacementRequest& request, int localRank, int localRanks,
                               bool* shared = nullptr);

}  // namespace rdmabench
