#pragma once
// The header (report::RunInfo) of every N-rank command: test, transport, the ranks' hosts,
// rank 0's device, every rank's placement, wire-up facts and the iteration policy.
// Rank 0 only: it reads every rank's placement and host from the store (published by
// placeRank and the Communicator). Errors: TimeoutError naming a rank that never published.

#include <string>

#include <nlohmann/json.hpp>

#include "collective/comm.h"
#include "collective/params.h"
#include "launch/launch.h"
#include "report/report.h"

namespace rdmabench::collective {

// `extra` lands in RunInfo::extra (with ranks, nodes, launch, timeout_s, check added);
// RunInfo::clock is this process's measurement clock (measureClockFacts(): what --clock
// selected); `placement` is this rank's own placement facts (rank_placement.h placeRank).
// rankRunInfo: what every N-rank command has (pairs, congestion: check false); collectiveRunInfo
// adds what barrier / allreduce / ring have (op, check, duration_s, max_time_s, dtype).
report::RunInfo rankRunInfo(Communicator& c, const RankParams& p, const launch::RankInfo& info,
                            const nlohmann::json& extra, const PlacementFacts& placement);
report::RunInfo collectiveRunInfo(Communicator& c, const CollectiveParams& p,
                                  const launch::RankInfo& info, const nlohmann::json& extra,
                                  const PlacementFacts& placement);

// Records the measurements whose timed loop lost the CPU (docs/metrics.md "Descheduling") in
// `info.extra["descheduled"]` and appends to the placement warning "COUNT_TEXT lost the CPU
// (extra.descheduled): use -e ...". Nothing when `descheduled` is empty. Used by pairs and
// congestion, whose reports come after the run.
void noteDescheduled(report::RunInfo& info, const nlohmann::json& descheduled,
                     const std::string& countText);

}  // namespace rdmabench::collective
