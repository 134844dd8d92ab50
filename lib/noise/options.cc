#include "noise/options.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "cli/coll_options.h"
#include "cli/options.h"
#include "common/error.h"
#include "common/measure_clock.h"
#include "common/text_escape.h"

namespace rdmabench::noise {

namespace po = boost::program_options;

namespace {

// Options that do not define the measurement (per-rank, launch plumbing, output): ranks started
// by hand on several hosts differ in these and must share one run id (docs/rendezvous.md).
bool definesMeasurement(const std::string& option) {
  static const std::set<std::string> kNot = {
      "help",       "np",     "rank",  "rendezvous",      "standalone-rendezvous",
      "file-store", "run-id", "token", "ifname",          "timeout",
      "format",     "output", "plot",  "fail-on-outlier", "quiet"};
  return kNot.count(option) == 0;
}

std::string measurementDescription(const po::variables_map& vm) {
  std::string d = "noise";
  for (const auto& [name, value] : vm) {
    if (!definesMeasurement(name)) continue;
    if (const bool* b = boost::any_cast<bool>(&value.value())) {
      if (*b) d += " --" + name;
    } else if (const std::string* s = boost::any_cast<std::string>(&value.value())) {
      d += " --" + name + "=" + *s;
    }
  }
  return d;
}

std::vector<std::string> splitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// The option groups of `noise`, in --help order: Measurement, Launch and rendezvous, Output.
cli::OptionGroups noiseOptionGroups() {
  po::options_description general(
      "Usage: rdmabench noise [options]\nOS noise: every rank spins on one core reading the "
      "clock; gaps above a threshold are detours (time the core was taken away). Reports, per "
      "core, node and job, detours/s, stolen time and detour lengths, names the noisiest cores "
      "and nodes and their sources (/proc), and predicts what the noise costs a collective "
      "(docs/noise.md).\n\nMeasurement");
  general.add_options()("help,h", "show this help")(
      "duration,D", po::value<std::string>(),
      fmt::format("seconds each rank runs the detour loop, {}..{} (default 10)", kMinDurationSec,
                  kMaxDurationSec)
          .c_str())(
      "threshold", po::value<std::string>(),
      fmt::format("a gap between two clock reads above this many us is a detour, {}..{} "
                  "(default: 5 x the loop's median step, at least 1 us)",
                  kMinThresholdUs, kMaxThresholdUs)
          .c_str())(
      "sample", po::value<std::string>(),
      fmt::format("seconds between /proc samples of each node's reader (start and end are always "
                  "taken), 0..{}; 0 = start and end only (default 5)",
                  kMaxSampleSec)
          .c_str())(
      "fwq", po::value<std::string>(),
      fmt::format("after the detour loop, run fixed work quanta of US us (LLNL FWQ) for "
                  "--duration and report the spread of their times, {}..{}",
                  kMinFwqUs, kMaxFwqUs)
          .c_str())(
      "predict-time", po::value<std::string>(),
      fmt::format("noise-free time T of the collective the cost model prices, us; comma list of "
                  "up to {}, each {}..{} (default 20)",
                  kMaxPredictTimes, kMinPredictUs, kMaxPredictUs)
          .c_str())("predict-ranks", po::value<std::string>(),
                    fmt::format("also price a collective of these rank counts (comma list of up "
                                "to {}, each 1..{}); the job's own count is always priced",
                                kMaxPredictRanks, kMaxPredictRanksValue)
                        .c_str())(
      "outlier-k", po::value<std::string>(),
      "outlier threshold on stolen %: median + k x max(MAD, median/10, 0.05) (default 5)")(
      "fail-on-outlier", po::bool_switch(), "exit 1 when a core or a node is an outlier")(
      "no-pin", po::bool_switch(),
      "do not pin: by default each rank is bound to one core (local rank i to the i-th allowed "
      "CPU), a launcher's one-CPU binding is kept")(
      "clock", po::value<std::string>(),
      "auto | tsc | monotonic: the measurement clock (default "
      "auto)")("timeout", po::value<std::string>(),
               "longest wait for other ranks, seconds (default 10)");
  po::options_description launchOpts = cli::rankLaunchOptions(
      "Launch and rendezvous (default: PMIx server / mpirun / Slurm / PMI environment, else "
      "--np = one rank per allowed CPU of this host)");
  launchOpts.add_options()(
      "ifname", po::value<std::string>(),
      "interfaces whose IPv4 address rank 0 publishes for its store under PMIx, as "
      "NCCL_SOCKET_IFNAME (default: $RDMABENCH_IFNAME)");
  po::options_description output("Output");
  output.add_options()("format,f", po::value<std::string>(), "table | json | csv (default table)")(
      "output,o", po::value<std::string>(), "write the report (rank 0) to FILE, atomically")(
      "plot", po::value<std::string>(),
      "nodes x cores heat map of stolen time and a histogram of detour lengths to FILE.png or "
      "FILE.svg")("quiet", po::bool_switch(),
                  "no warning lines on stderr (errors are always printed)");
  return cli::OptionGroups{general, launchOpts, output};
}

// --duration, --threshold, --sample, --fwq, --predict-time, --predict-ranks, --outlier-k,
// --fail-on-outlier, --no-pin, --clock.
void parseMeasurement(const po::variables_map& vm, NoiseCommand& cmd) {
  NoiseConfig& c = cmd.config;
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  auto has = [&](const char* k) { return vm.count(k) > 0; };
  if (has("duration"))
    c.durationSec =
        cli::parseSeconds(str("duration"), "--duration", kMinDurationSec, kMaxDurationSec);
  if (has("threshold"))
    c.thresholdUs =
        cli::parseNumber(str("threshold"), "--threshold", kMinThresholdUs, kMaxThresholdUs, "us");
  if (has("sample")) {
    c.sampleSec = cli::parseSeconds(str("sample"), "--sample", 0, kMaxSampleSec);
    if (c.sampleSec > 0 && c.sampleSec < 0.1)
      throw UsageError(
          fmt::format("--sample {}: out of range 0 (start and end only) or 0.1..{} seconds",
                      str("sample"), kMaxSampleSec));
  }
  if (has("fwq")) c.fwqUs = cli::parseNumber(str("fwq"), "--fwq", kMinFwqUs, kMaxFwqUs, "us");
  if (has("predict-time")) {
    c.predictTimesUs.clear();
    const auto items = splitComma(str("predict-time"));
    if (items.size() > kMaxPredictTimes)
      throw UsageError(fmt::format("--predict-time {}: {} values, at most {}", str("predict-time"),
                                   items.size(), kMaxPredictTimes));
    for (const auto& it : items)
      c.predictTimesUs.push_back(
          cli::parseNumber(it, "--predict-time", kMinPredictUs, kMaxPredictUs, "us"));
  }
  if (has("predict-ranks")) {
    const auto items = splitComma(str("predict-ranks"));
    if (items.size() > kMaxPredictRanks)
      throw UsageError(fmt::format("--predict-ranks {}: {} values, at most {}",
                                   str("predict-ranks"), items.size(), kMaxPredictRanks));
    for (const auto& it : items)
      c.predictRanks.push_back(
          static_cast<int>(cli::parseUnsigned(it, "--predict-ranks", 1, kMaxPredictRanksValue)));
  }
  if (has("outlier-k")) c.outlierK = cli::parseNumber(str("outlier-k"), "--outlier-k", 0, 1000, "");
  cmd.failOnOutlier = vm["fail-on-outlier"].as<bool>();
  c.pin = !vm["no-pin"].as<bool>();
  if (has("clock")) {
    cmd.clock = str("clock");
    checkClockChoice(cmd.clock);
  }
}

// --format, --output, --plot.
void parseOutput(const po::variables_map& vm, NoiseCommand& cmd) {
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  auto has = [&](const char* k) { return vm.count(k) > 0; };
  if (has("output")) cmd.outputPath = cli::parseOutputPath(str("output"));
  // `-o x.json` without -f: JSON, not a text table in a .json file.
  cmd.format = cli::formatForOutput(has("format") ? str("format") : std::string(), cmd.outputPath);
  const auto& names = noiseFormatNames();
  if (std::find(names.begin(), names.end(), cmd.format) == names.end())
    throw UsageError(
        fmt::format("--format {}: no noise layout (valid: table, json, csv)", cmd.format));
  if (has("plot")) {
    cmd.plotPath = str("plot");
    std::string lower = cmd.plotPath;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    auto endsWith = [&](const std::string& e) {
      return lower.size() > e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0;
    };
    if (!endsWith(".png") && !endsWith(".svg"))
      throw UsageError(fmt::format("--plot {}: must end in .png or .svg", cmd.plotPath));
    (void)gnuplotOutputPath(cmd.plotPath, "--plot");  // UsageError for a name gnuplot cannot hold
  }
  cli::checkDistinctOutputs(cmd.outputPath, cmd.plotPath);
  cmd.quiet = vm["quiet"].as<bool>();
}

}  // namespace

NoiseCommand parseNoiseCommand(const std::vector<std::string>& args) {
  NoiseCommand cmd;
  cli::OptionGroups groups = noiseOptionGroups();
  po::options_description all;
  for (const auto& g : groups)
    all.add(g);
  po::variables_map vm = cli::parseOptions("noise", all, {}, args);
  if (vm.count("help")) {
    cmd.help = true;
    cmd.helpGroups = std::move(groups);
    cmd.helpText = cli::renderHelp(cmd.helpGroups);
    return cmd;
  }
  parseMeasurement(vm, cmd);
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  auto has = [&](const char* k) { return vm.count(k) > 0; };
  if (has("timeout"))
    cmd.timeoutMs =
        static_cast<int64_t>(cli::parseSeconds(str("timeout"), "--timeout", 0.1, 3600) * 1000);
  launch::LaunchOptions& l = cmd.launch;
  cli::parseRankLaunch(vm, l);
  l.runDescription = measurementDescription(vm);
  l.defaultRunId = cli::defaultRunId(l.runDescription);
  if (has("ifname")) {
    cmd.ifname = str("ifname");
    if (cmd.ifname.empty())
      throw UsageError("--ifname '': no interface name (NAME[,NAME...], ^ to exclude, = exact)");
  } else if (const char* e = std::getenv("RDMABENCH_IFNAME"); e != nullptr) {
    cmd.ifname = e;
  }
  parseOutput(vm, cmd);
  return cmd;
}

}  // namespace rdmabench::noise
