#pragma once
// The report of `rdmabench noise` (docs/noise.md): per rank (node, core), per node and across
// the job; the noisiest cores and nodes (noise/outliers.h); their sources (noise/attribution.h);
// the cost to a collective (noise/model.h). Formats: table, json (valid JSON also for a failed
// run: writeNoiseError), csv (one row per rank).
// Thread-safety: pure functions over values.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/measure_clock.h"
#include "noise/attribution.h"
#include "noise/detour.h"
#include "noise/model.h"
#include "noise/outliers.h"

namespace rdmabench::noise {

// What the command line asked for (cli parsing: noise/options.h).
struct NoiseConfig {
  double durationSec = 10;                 // --duration, seconds per rank
  double thresholdUs = 0;                  // --threshold; 0 = auto (detour.h)
  double sampleSec = 5;                    // --sample; 0 = start and end only
  double fwqUs = 0;                        // --fwq US; 0 = detour loop
  std::vector<double> predictTimesUs{20};  // --predict-time, T of the model, us
  std::vector<int> predictRanks;           // --predict-ranks, besides the job's N
  double outlierK = 5;                     // --outlier-k
  bool pin = true;                         // --no-pin clears it
};

// One rank's result (what it sends to rank 0 through the store, one value: at most 5 histograms
// of <= 385 bins of ~22 bytes each, well inside the store's 64 KiB value limit).
struct RankResult {
  int rank = 0;
  std::string host;
  int cpu = -1;  // the core it ran on (sched_getcpu after pinning)
  int pid = 0;
  std::string pinning;  // "pinned by rdmabench", "launcher binding", "not pinned"
  double medianStepNs = 0;
  int64_t thresholdNs = 0;
  uint64_t iterations = 0;
  DetourStats stats;
  uint64_t stored = 0;  // detours kept for percentiles and the model (<= stats.count)
  bool interrupted = false;
  LogHistogram lengths;              // detour lengths, ns
  std::vector<LogHistogram> delays;  // per predict time: delays D of the model, ns
  std::optional<FwqStats> fwq;       // --fwq
  nlohmann::json toJson() const;
  // ProtocolError naming `what` for a malformed or out-of-range document (it crossed the store).
  static RankResult fromJson(const nlohmann::json& j, const std::string& what, size_t predictTimes);
};

// What one node's reader saw (attribution.h), for the ranks' cores of that node.
struct NodeAttribution {
  std::string host;
  double seconds = 0;
  int samples = 0;
  double readerMsPerSample = 0;  // cost of one /proc sample (the reader is rdmabench's own noise)
  std::vector<std::string> unseen;
  std::vector<CpuSources> cpus;
  nlohmann::json toJson() const;
  static NodeAttribution fromJson(const nlohmann::json& j, const std::string& what);
};

struct NodeSummary {
  std::string host;
  int ranks = 0;
  double perSecond = 0;  // mean over its ranks
  double stolenPct = 0;  // mean over its ranks
  double maxStolenPct = 0;
  double maxUs = 0;
  double p50Us = 0, p99Us = 0, p999Us = 0;  // of its ranks' detours pooled
};

struct NoiseReport {
  NoiseConfig config;
  std::string date, commandLine, version;
  std::optional<ClockFacts> clock;  // the measurement clock; empty = not recorded
  int worldSize = 0;
  std::vector<RankResult> ranks;   // by rank
  std::vector<NodeSummary> nodes;  // in order of first rank
  NodeSummary job;                 // across the job (host "job")
  OutlierRule coreRule;            // over ranks' stolen %
  OutlierRule nodeRule;            // over nodes' mean stolen %
  std::vector<NodeAttribution> attribution;
  std::vector<Prediction> predictions;  // per (ranks, T)
  std::vector<std::string> warnings;    // oversubscription, interruption, truncation, clock
  // A run that failed while rank 0 gathered (runNoiseRank's `partial`): `ranks` holds the ranks
  // whose results arrived, and `error`, once the caller sets it, why the run failed.
  bool failed = false;
  std::string error;
};

// Rank 0: the report from every rank's result and every node's attribution. Pure.
NoiseReport buildReport(const NoiseConfig& config, std::vector<RankResult> ranks,
                        std::vector<NodeAttribution> attribution);

// The sources of `rank`'s core (empty when its node's reader did not see it).
const CpuSources* sourcesOf(const NoiseReport& r, const RankResult& rank);

// One line per outlier core and node: "node n1 cpu 3 (rank 3): 2.10% stolen, 101 detours/s vs
// baseline 0.05% (threshold 0.30%); top source: injector (pid 812): 2.0% of cpu 3".
std::vector<std::string> noiseFindings(const NoiseReport& r);

// "table", "json" or "csv".
const std::vector<std::string>& noiseFormatNames();
// The report in `format`; a failed one (r.failed) carries r.error: the JSON "error" member (null
// otherwise), for table and csv a `# measured:` line and the "# error: ..." line.
void writeNoise(std::ostream& out, const std::string& format, const NoiseReport& r);
// A document for a run that failed before its report: JSON {"test": "noise", "error": ...};
// table and csv a "# error: ..." line.
void writeNoiseError(std::ostream& out, const std::string& format, const std::string& error);

// gnuplot script of the nodes x cores heat map of stolen % and the histogram of detour lengths
// (two plots side by side) to `path` (.png or .svg).
std::string noisePlotScript(const NoiseReport& r, const std::string& path);

}  // namespace rdmabench::noise
