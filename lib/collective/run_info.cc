#include "collective/run_info.h"

#include <set>
#include <string>

#include <fmt/format.h>

#include "collective/rank_placement.h"
#include "collective/reduce.h"
#include "common/host_info.h"
#include "common/measure_clock.h"

namespace rdmabench::collective {

using nlohmann::json;

report::RunInfo rankRunInfo(Communicator& c, const RankParams& p, const launch::RankInfo& info,
                            const json& extra, const PlacementFacts& placement) {
  report::RunInfo ri;
  ri.placement = gatherPlacement(c, placement, p.timeoutMs);
  ri.test = p.test;
  ri.transport = p.transport;
  ri.localHost = c.hostOf(0);
  std::set<std::string> nodes;
  for (int r = 0; r < c.size(); ++r)
    nodes.insert(c.hostOf(r));
  std::string names;
  for (const auto& h : nodes)
    names += (names.empty() ? "" : ", ") + h;
  ri.remoteHost = fmt::format("{} ranks on {} node{} ({})", c.size(), nodes.size(),
                              nodes.size() == 1 ? "" : "s", names);
  ri.local.device = c.device().info();
  ri.commandLine = p.commandLine;
  ri.date = isoDateUtc();
  ri.extra = extra;
  // The clock this process selected (cli --clock, before any timed loop): rank 0's facts, as
  // lat/bw report the client's.
  ri.clock = measureClockFacts();
  ri.extra["ranks"] = c.size();
  ri.extra["nodes"] = nodes.size();
  ri.extra["launch"] = info.source;
  ri.extra["timeout_s"] = static_cast<double>(p.timeoutMs) / 1000;
  ri.extra["check"] = false;
  if (!p.transportNote.empty()) ri.extra["transport_note"] = p.transportNote;
  if (!p.progressNote.empty()) ri.extra["progress_note"] = p.progressNote;
  return ri;
}

report::RunInfo collectiveRunInfo(Communicator& c, const CollectiveParams& p,
                                  const launch::RankInfo& info, const json& extra,
                                  const PlacementFacts& placement) {
  report::RunInfo ri = rankRunInfo(c, p, info, extra, placement);
  ri.op = p.test == report::Test::kAllreduce
              ? fmt::format("{} {}", toString(p.dtype), toString(p.op))
              : "";
  ri.extra["check"] = p.check;
  if (p.durationSec > 0) ri.extra["duration_s"] = p.durationSec;
  if (p.maxTimeSec > 0 && p.iterations == 0 && p.durationSec <= 0)
    ri.extra["max_time_s"] = p.maxTimeSec;
  if (p.test == report::Test::kAllreduce) {
    static const char* mpi[] = {"MPI_INT", "MPI_LONG", "MPI_FLOAT", "MPI_DOUBLE"};
    ri.extra["dtype"] = toString(p.dtype);
    ri.extra["reduce_op"] = toString(p.op);
    ri.extra["mpi_datatype"] = mpi[static_cast<int>(p.dtype)];
  }
  return ri;
}

void noteDescheduled(report::RunInfo& info, const nlohmann::json& descheduled,
                     const std::string& countText) {
  if (descheduled.empty()) return;
  info.extra["descheduled"] = descheduled;
  if (!info.placement) info.placement.emplace();
  std::string& w = info.placement->warning;
  w += (w.empty() ? "" : "; ") +
       fmt::format(
           "{} lost the CPU (extra.descheduled): use -e / --use-event on, pin to idle cores "
           "(--cpu), or run fewer ranks per host",
           countText);
}

}  // namespace rdmabench::collective
