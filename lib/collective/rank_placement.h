#pragma once
// CPU / NUMA placement of every rank of an N-rank run (`--cpu LIST`, `--numa auto|N|off`,
// docs/metrics.md "Placement"): each rank binds its own thread (common/placement.h, per local
// rank through rankPlacement: one CPU of the list each, as mpirun --map-by core --bind-to core)
// and publishes what it got; rank 0 puts every rank's CPUs in the run header and warns when
// ranks of one host were bound to the same CPU. Thread-safety: one thread per rank.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collective/comm.h"
#include "common/placement.h"
#include "launch/launch.h"

namespace rdmabench::collective {

// Binds the calling thread for local rank info.localRank of info.localRanks near c's device,
// publishes the facts under "place/<rank>" in the store (as PlacementFacts::toJson) and returns
// them (with "source" naming the rank's share of a --cpu list). UsageError for CPUs or a node that
// do not exist here; a failed bind is a warning (applyPlacement).
PlacementFacts placeRank(Communicator& c, const PlacementRequest& request,
                         const launch::RankInfo& info);

// Rank 0: rank 0's facts plus PlacementFacts::ranks (every rank's host, cpus, source) in rank
// order, read from the store (waits up to timeoutMs per rank, TimeoutError naming the rank), and
// a warning joining rank 0's warning, the other ranks' warnings and sharedCpuWarning.
PlacementFacts gatherPlacement(Communicator& c, const PlacementFacts& own, int64_t timeoutMs);

// One rank's binding as gathered by rank 0.
struct RankCpus {
  int rank = 0;
  std::string host;
  std::string cpus;  // hwloc list syntax, "3" or "0-3"
};

// Oversubscription, per host: "4 ranks on node1 run on 2 CPUs (0-1)" when a host has more ranks
// than CPUs in the union of their bindings (cpuset/affinity, whatever set it: --cpu, srun,
// mpirun, taskset, the cgroup), else "ranks 0, 2 on node1 share CPU 0" for ranks bound to the
// same single CPU; joined by "; ", "" when none. Pure, thread-safe.
std::string sharedCpuWarning(const std::vector<RankCpus>& ranks);

}  // namespace rdmabench::collective
