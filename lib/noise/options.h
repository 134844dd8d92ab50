#pragma once
// Command line of `rdmabench noise` (docs/noise.md, docs/cli.md), unit-tested
// (tests/unit/noise_options_test.cc). Every bad value is a one-line UsageError naming the option,
// the value and the accepted range (exit 2). The launch options are those of the other N-rank
// commands (--np, --rank, --world-size, --rendezvous, ...; docs/rendezvous.md).
// Thread-safety: pure.

#include <string>
#include <vector>

#include "cli/help_gen.h"
#include "launch/launch.h"
#include "noise/report.h"

namespace rdmabench::noise {

struct NoiseCommand {
  NoiseConfig config;
  launch::LaunchOptions launch;
  std::string format = "table";  // table | json | csv
  std::string outputPath;        // -o FILE (rank 0 writes it atomically); "" = stdout
  std::string plotPath;          // --plot FILE.png|FILE.svg
  bool quiet = false;            // --quiet: no warning lines on stderr
  std::string clock = "auto";    // --clock auto | tsc | monotonic
  bool failOnOutlier = false;    // --fail-on-outlier: exit 1 when a core or node is an outlier
  int64_t timeoutMs = 10'000;    // --timeout, ms
  std::string ifname;            // --ifname / $RDMABENCH_IFNAME (rank 0's store under PMIx)
  bool help = false;
  std::string helpText;
  cli::OptionGroups helpGroups;
};

// `args` excludes the program and subcommand names. UsageError for anything bad.
NoiseCommand parseNoiseCommand(const std::vector<std::string>& args);

// Limits (also in the help text and docs/noise.md).
inline constexpr double kMinDurationSec = 0.1, kMaxDurationSec = 86400;
inline constexpr double kMinThresholdUs = 0.05, kMaxThresholdUs = 1e6;
inline constexpr double kMaxSampleSec = 3600;
inline constexpr double kMinFwqUs = 1, kMaxFwqUs = 1e6;
inline constexpr double kMinPredictUs = 0.1, kMaxPredictUs = 1e7;
inline constexpr size_t kMaxPredictTimes = 4, kMaxPredictRanks = 8;
inline constexpr int kMaxPredictRanksValue = 100'000'000;

}  // namespace rdmabench::noise
