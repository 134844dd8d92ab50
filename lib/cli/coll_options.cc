#include "cli/coll_options.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cli/bw_method.h"
#include "cli/options.h"
#include "collective/allreduce.h"
#include "collective/congestion_plan.h"
#include "collective/pairs_spec.h"
#include "collective/sharp/sharp.h"
#include "common/error.h"
#include "common/measure_clock.h"
#include "common/text_escape.h"
#include "common/units.h"
#include "report/report.h"
#include "transport/transport.h"

namespace rdmabench::cli {

namespace po = boost::program_options;

namespace {

// Options that do not define the measurement: per-rank or per-host choices (which rank, address,
// interface, CPUs, device port), launch plumbing and output. Ranks started by hand on several
// hosts differ in these and must still share one run id (docs/rendezvous.md "Run id").
bool definesMeasurement(const std::string& option) {
  static const std::set<std::string> kNot = {
      "help",       "np",        "rank",    "rendezvous", "standalone-rendezvous",
      "file-store", "run-id",    "token",   "bind",       "ifname",
      "device",     "gid-index", "ib-port", "cpu",        "numa",
      "timeout",    "format",    "output",  "full",       "plot",
      "quiet"};
  return kNot.count(option) == 0;
}

// "TEST --opt=value ..." over the measurement-defining options (sorted, so `-n 5` and
// `--iters=5` agree; switches only when on).
std::string measurementDescription(const std::string& test, const po::variables_map& vm) {
  std::string d = test;
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

// The parsed command line, read by name.
struct Values {
  const po::variables_map& vm;
  bool has(const char* k) const { return vm.count(k) > 0; }
  std::string str(const char* k) const { return vm[k].as<std::string>(); }
  bool on(const char* k) const { return vm.count(k) && vm[k].as<bool>(); }
};

// --transport, --iters, --warmup, --timeout, --clock: every command.
void parseCommon(const Values& v, collective::RankParams& p, CollCommand& cmd) {
  if (v.has("transport")) {
    p.transport = v.str("transport");
    cmd.transportGiven = true;
  }
  const auto& backends = transport::backendNames();
  if (std::find(backends.begin(), backends.end(), p.transport) == backends.end())
    throw UsageError(
        fmt::format("--transport {}: unknown (valid: socket, verbs, ofi)", p.transport));
  if (v.has("iters")) p.iterations = parseUnsigned(v.str("iters"), "--iters", 1, 100'000'000);
  if (v.has("warmup"))
    p.warmup = static_cast<int64_t>(parseUnsigned(v.str("warmup"), "--warmup", 0, 100'000'000));
  if (v.has("duration") && v.has("iters"))
    throw UsageError("--duration and --iters: give only one of them");
  if (v.has("timeout"))
    p.timeoutMs =
        static_cast<int64_t>(parseSeconds(v.str("timeout"), "--timeout", 0.1, 3600) * 1000);
  if (v.has("clock")) {
    cmd.clock = v.str("clock");
    checkClockChoice(cmd.clock);
  }
}

// -D, --max-time: barrier, allreduce, ring.
void parseTiming(const Values& v, collective::CollectiveParams& p) {
  if (v.has("duration")) p.durationSec = parseSeconds(v.str("duration"), "--duration", 0.01, 3600);
  if (v.has("max-time")) p.maxTimeSec = parseSeconds(v.str("max-time"), "--max-time", 0, 3600);
}

void parseBarrier(const Values& v, collective::CollectiveParams& p) {
  p.algo = v.has("algo") ? v.str("algo") : "dissemination";
  if (p.algo != "dissemination" && p.algo != "sharp")
    throw UsageError(fmt::format("--algo {}: unknown (valid: dissemination, sharp)", p.algo));
}

// osu_allreduce's rule: count = size / element size, and a size below one element is skipped.
// The rows are labelled with the bytes reduced (count x element size), never with more: a size
// that is not a whole number of elements is rounded down, said in a warning (`notes`).
void roundToElements(collective::CollectiveParams& p, const char* option,
                     std::vector<std::string>& notes) {
  const uint64_t es = collective::elementSize(p.dtype);
  const char* type = collective::toString(p.dtype);
  std::vector<uint64_t> kept;
  std::string rounded, skipped;
  for (uint64_t b : p.sizes) {
    const uint64_t r = b / es * es;
    if (r == 0) {
      skipped += fmt::format("{}{}", skipped.empty() ? "" : ",", b);
      continue;
    }
    if (r != b) rounded += fmt::format("{}{} -> {}", rounded.empty() ? "" : ", ", b, r);
    if (std::find(kept.begin(), kept.end(), r) == kept.end()) kept.push_back(r);
  }
  if (kept.empty())
    throw UsageError(fmt::format("{} {}: below one {} element ({} B): nothing to reduce", option,
                                 skipped, type, es));
  if (!skipped.empty())
    notes.push_back(
        fmt::format("{} {}: below one {} element ({} B): skipped, as osu_allreduce "
                    "does",
                    option, skipped, type, es));
  if (!rounded.empty())
    notes.push_back(
        fmt::format("{}: not a whole number of {} elements ({} B): rounded down to "
                    "{} (count = size / {}, as osu_allreduce)",
                    option, type, es, rounded, es));
  p.sizes = std::move(kept);
}

void parseAllreduce(const Values& v, collective::CollectiveParams& p, CollCommand& cmd) {
  // Default auto: the cost model's pick per size (rd at small sizes, as MPI libraries choose),
  // not the library's tree (params.h), which needs 2 lg p dependent messages at 8 B.
  p.algo = v.has("algo") ? v.str("algo") : "auto";
  if (p.algo != "auto" && p.algo != "sharp") {
    const auto& algos = collective::allreduceAlgorithms();
    if (std::find(algos.begin(), algos.end(), p.algo) == algos.end())
      throw UsageError(fmt::format(
          "--algo {}: unknown (valid: tree, ring, rd, rabenseifner, auto, sharp)", p.algo));
  }
  if (v.has("dtype")) p.dtype = collective::parseDType(v.str("dtype"));
  if (v.has("op")) p.op = collective::parseOp(v.str("op"));
  const uint64_t es = collective::elementSize(p.dtype);
  if (v.has("size") && v.has("msg-sizes"))
    throw UsageError("--size and --msg-sizes: give only one of them");
  if (v.has("size")) {
    p.sizes = parseSizeList(v.str("size"), "--size", 1ull << 30, "1G per rank");
  } else {
    SizeRange r = v.has("msg-sizes")
                      ? parseSizeRange(v.str("msg-sizes"), "--msg-sizes", es, 1u << 20)
                      : SizeRange{es, 1u << 20};
    if (v.has("msg-sizes"))
      checkSizeRangeLimit(r, v.str("msg-sizes"), "-m/--msg-sizes", 1ull << 30, "1G per rank");
    p.sizes = sizeSweep(r.min, r.max);
  }
  roundToElements(p, v.has("size") ? "--size" : "--msg-sizes", cmd.notes);
  for (uint64_t b : p.sizes)
    if (b > (1ull << 30))
      throw UsageError(fmt::format("--size {}: above the limit of 1G per rank", b));
  p.check = v.on("check");
}

void parseRing(const Values& v, collective::CollectiveParams& p, CollCommand& cmd) {
  if (v.has("size")) p.ringBytes = parseSize(v.str("size"), "--size");
  if (p.ringBytes < 1 || p.ringBytes > (64u << 20))
    throw UsageError(fmt::format("--size {}: out of range 1..64M",
                                 v.has("size") ? v.str("size") : std::to_string(p.ringBytes)));
  if (v.has("outlier-k")) p.outlierK = parseNumber(v.str("outlier-k"), "--outlier-k", 0, 1000, "");
  cmd.failOnOutlier = v.on("fail-on-outlier");
}

// barrier, allreduce, ring.
collective::CollectiveParams parseCollective(const std::string& test, const Values& v,
                                             CollCommand& cmd) {
  collective::CollectiveParams p;
  p.test = report::testFromName(test).value();  // barrier, allreduce or ring: never empty
  parseCommon(v, p, cmd);
  parseTiming(v, p);
  if (test == "barrier") parseBarrier(v, p);
  if (test == "allreduce") parseAllreduce(v, p, cmd);
  if (p.algo == "sharp" && !collective::sharp::built())
    throw UsageError(fmt::format("--algo sharp: not built: {}", collective::sharp::probe().reason));
  if (test == "ring") parseRing(v, p, cmd);
  return p;
}

// A size option `name` (K/M suffixes) in 1..max into `out`; unchanged when not given.
void parseBoundedSize(const Values& v, const char* name, uint64_t max, uint64_t& out) {
  if (!v.has(name)) return;
  const std::string opt = std::string("--") + name;
  out = parseSize(v.str(name), opt);
  if (out < 1 || out > max)
    throw UsageError(fmt::format("{} {}: out of range 1..{}", opt, v.str(name), formatSize(max)));
}

// --plot FILE.png|FILE.svg (pairs).
std::string parsePlotPath(const std::string& path) {
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  auto endsWith = [&](const std::string& e) {
    return lower.size() > e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0;
  };
  if (!endsWith(".png") && !endsWith(".svg"))
    throw UsageError(fmt::format("--plot {}: must end in .png or .svg", path));
  (void)gnuplotOutputPath(path, "--plot");  // UsageError for a name gnuplot cannot hold
  return path;
}

// --op, --mode, --cq-mod, -l, --tx-depth: lat / bw's options, parsed by their code
// (cli/bw_method.h) into pairs' bandwidth description and checked by TestSpec::validate
// (collective/pairs_spec.h). Without -t the transport is chosen later and runPairs checks again.
void parsePairsEngine(const Values& v, collective::PairsParams& p, const CollCommand& cmd) {
  engine::TestSpec s = collective::pairsBandwidthSpec(p);
  if (v.has("op")) s.op = engine::parseOp(v.str("op"));
  parseModeOption(v.vm, s);
  parsePostOptions(v.vm, s);
  s.txDepth = parseTxDepth(v.vm);
  applyStreamCqModeration(v.vm, s);
  p.op = s.op;
  p.mode = s.mode;
  p.cqModeration = s.cqModeration;
  p.postList = s.postList;
  p.txDepth = p.device.txDepth = s.txDepth;
  if (cmd.transportGiven) collective::validatePairsSpecs(p);
}

collective::PairsParams parsePairs(const Values& v, CollCommand& cmd) {
  collective::PairsParams p;
  parseCommon(v, p, cmd);
  if (v.has("lat-size") && v.has("sizes"))
    throw UsageError("--lat-size and --sizes: give only one of them");
  if (v.has("lat-size") || v.has("sizes")) {
    const char* opt = v.has("lat-size") ? "--lat-size" : "--sizes";
    const std::string value = v.str(v.has("lat-size") ? "lat-size" : "sizes");
    p.latBytes = parseSize(value, opt);
    if (p.latBytes < 1 || p.latBytes > (64u << 20))
      throw UsageError(fmt::format("{} {}: out of range 1..64M", opt, value));
  }
  if (v.has("bw-size")) {
    p.bwBytes = parseSize(v.str("bw-size"), "--bw-size");
    if (p.bwBytes < 1 || p.bwBytes > (256u << 20))
      throw UsageError(fmt::format("--bw-size {}: out of range 1..256M", v.str("bw-size")));
  }
  if (v.has("window"))
    p.window = static_cast<uint32_t>(parseUnsigned(v.str("window"), "--window", 1, 1024));
  if (v.has("bw-iters")) p.bwIters = parseUnsigned(v.str("bw-iters"), "--bw-iters", 1, 1'000'000);
  if (v.has("outlier-k")) p.outlierK = parseNumber(v.str("outlier-k"), "--outlier-k", 0, 1000, "");
  cmd.failOnOutlier = v.on("fail-on-outlier");
  if (v.has("max-lat"))
    p.bounds.maxLatUs = parseNumber(v.str("max-lat"), "--max-lat", 0.001, 1e9, "microseconds");
  if (v.has("min-bw"))
    p.bounds.minBwMBs = parseNumber(v.str("min-bw"), "--min-bw", 0.001, 1e9, "MB/s");
  if (v.has("plot")) cmd.plotPath = parsePlotPath(v.str("plot"));
  parsePairsEngine(v, p, cmd);
  return p;
}

collective::CongestionParams parseCongestion(const Values& v, CollCommand& cmd) {
  collective::CongestionParams p;
  parseCommon(v, p, cmd);
  parseBoundedSize(v, "lat-size", 64u << 20, p.latBytes);
  parseBoundedSize(v, "bw-size", 64u << 20, p.bwBytes);
  parseBoundedSize(v, "agg-size", 64u << 20, p.aggBytes);
  if (v.has("window"))
    p.window = static_cast<uint32_t>(parseUnsigned(v.str("window"), "--window", 1, 1024));
  if (v.has("bw-iters")) p.bwIters = parseUnsigned(v.str("bw-iters"), "--bw-iters", 1, 1'000'000);
  if (v.has("seed")) p.seed = parseUnsigned(v.str("seed"), "--seed", 0, UINT64_MAX);
  if (v.has("pattern")) p.pattern = collective::parseCongestionPattern(v.str("pattern"));
  if (v.has("victims")) {
    // A fraction of the ranks, strictly between 0 and 1.
    p.victims = parseNumber(v.str("victims"), "--victims", 0, 1, "");
    if (p.victims <= 0 || p.victims >= 1)
      throw UsageError(fmt::format("--victims {}: out of range (0, 1), a fraction of the ranks",
                                   v.str("victims")));
  }
  if (v.has("phase-time")) p.phaseSec = parseSeconds(v.str("phase-time"), "--phase-time", 1, 86400);
  return p;
}

// --np, --rank, --world-size, --rendezvous, ..., --bind, --ifname, --token.
void parseLaunch(const std::string& test, const Values& v, CollCommand& cmd) {
  launch::LaunchOptions& l = cmd.launch;
  parseRankLaunch(v.vm, l);
  l.runDescription = measurementDescription(test, v.vm);
  l.defaultRunId = defaultRunId(l.runDescription);
  if (v.has("bind")) cmd.bind = v.str("bind");
  if (v.has("ifname")) {
    if (v.has("bind"))
      throw UsageError(
          fmt::format("--ifname {} and --bind {}: give only one", v.str("ifname"), v.str("bind")));
    cmd.ifname = v.str("ifname");
    if (cmd.ifname.empty())
      throw UsageError(
          "--ifname '': no interface name (NAME[,NAME...], ^ to exclude, = for exact "
          "names)");
  } else if (const char* e = std::getenv("RDMABENCH_IFNAME"); e != nullptr) {
    cmd.ifname = e;
  }
}

// --cpu, --numa, --device, --provider, --gid-index, --ib-port, --use-event.
void parseDevice(const Values& v, CollCommand& cmd) {
  collective::RankParams& p = cmd.common();
  if (v.has("cpu")) p.placement.cpus = v.str("cpu");
  if (v.has("numa")) p.placement.numa = v.str("numa");
  validatePlacement(p.placement);
  if (v.has("device")) p.device.device = v.str("device");
  if (v.has("provider")) p.device.provider = v.str("provider");
  if (v.has("gid-index"))
    p.device.gidIndex =
        static_cast<int>(parseUnsigned(v.str("gid-index"), "--gid-index", 0, 65535));
  if (v.has("ib-port"))
    p.device.ibPort = static_cast<int>(parseUnsigned(v.str("ib-port"), "--ib-port", 1, 255));
  cmd.progress = parseUseEvent(v.vm, nullptr);
  // An option the transport does not read is refused rather than ignored: now with -t, once
  // the transport is chosen without it (tools/rdmabench/collectives.cc).
  if (cmd.transportGiven)
    checkTransportOptions(givenTransportOptions(v.vm), p.transport, nullptr);
  else
    cmd.transportOptions = givenTransportOptions(v.vm);
}

// --format, --output, --full, and the checks that need the rank count of --np.
void parseOutput(const std::string& test, const Values& v, CollCommand& cmd) {
  if (v.has("output")) cmd.outputPath = parseOutputPath(v.str("output"));
  // `-o x.json` without -f: JSON, not a text table in a .json file.
  cmd.format = formatForOutput(v.has("format") ? v.str("format") : std::string(), cmd.outputPath);
  if (fixedCounts(test) && cmd.format != "table" && cmd.format != "json" && cmd.format != "csv")
    throw UsageError(
        fmt::format("--format {}: no {} layout (valid: table, json, csv)", cmd.format, test));
  // With --np the rank count is known here: a split without 2 victims and 2 aggressors is
  // refused once, not by every rank.
  if (test == "congestion" && cmd.launch.np > 0)
    collective::victimCount(cmd.launch.np, cmd.congestionParams().victims);
  // A fabric map needs a pair at least: one rank would measure nothing and exit 0.
  if (test == "pairs" && cmd.launch.np == 1)
    throw UsageError("--np 1: pairs measures every pair of ranks and needs at least 2");
  if (test == "ring" && cmd.launch.np == 1)
    throw UsageError(
        "--np 1: ring measures each rank's ping-pong with its neighbour and needs "
        "at least 2 ranks");
  if (cmd.format == "perftest")
    throw UsageError(
        "--format perftest: perftest has no collective layout (valid: table, json, "
        "csv, osu, imb)");
  const auto& names = report::formatNames();
  if (std::find(names.begin(), names.end(), cmd.format) == names.end())
    throw UsageError(
        fmt::format("--format {}: unknown (valid: table, json, csv, osu, imb)", cmd.format));
  cmd.full = v.on("full");
  cmd.quiet = v.on("quiet");
  checkFullFormat(cmd.full, cmd.format);
  // OSU has no ring test: its osu layout is one line per link, with no -f columns to add.
  if (cmd.full && test == "ring")
    throw UsageError(
        "--full with ring: OSU's -f columns (min, max latency, iterations) are for barrier and "
        "allreduce; ring's osu layout (one line per link) has none");
  checkDistinctOutputs(cmd.outputPath, cmd.plotPath);
}

}  // namespace

std::string defaultRunId(const std::string& description) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : description)
    h = (h ^ ch) * 1099511628211ull;
  return fmt::format("cmd-{:016x}", h);
}

void requireWorld(const std::string& test, const CollCommand& cmd, const launch::RankInfo& info) {
  // A launcher's world of 1 (srun -n 1): ring and pairs would print an empty table.
  if ((test == "ring" || test == "pairs") && cmd.launch.np == 0 && info.worldSize == 1 &&
      info.source != "single")
    throw UsageError(fmt::format("{}: a world of 1 rank ({}): {} needs at least 2 ranks", test,
                                 info.source, test));
  if (info.source != "single" || info.worldSize != 1 || cmd.launch.np > 0) return;
  throw UsageError(fmt::format(
      "{}: no launcher found and no --np: this would run a world of 1 rank; give --np N (N ranks "
      "on this host), start it under srun or mpirun, or give --np 1 for one rank on purpose",
      test));
}

CollCommand parseCollectiveCommand(const std::string& test, const std::vector<std::string>& args) {
  CollCommand cmd;
  OptionGroups groups = collectiveOptionGroups(test);
  po::options_description all;
  for (const auto& g : groups)
    all.add(g);
  po::variables_map vm = parseOptions(test, all, {}, args);
  if (vm.count("help")) {
    cmd.help = true;
    cmd.helpGroups = std::move(groups);
    cmd.helpText = renderHelp(cmd.helpGroups);
    return cmd;
  }
  const Values v{vm};
  if (test == "pairs")
    cmd.params = parsePairs(v, cmd);
  else if (test == "congestion")
    cmd.params = parseCongestion(v, cmd);
  else
    cmd.params = parseCollective(test, v, cmd);
  parseLaunch(test, v, cmd);
  parseDevice(v, cmd);
  parseOutput(test, v, cmd);
  return cmd;
}

void parseRankLaunch(const po::variables_map& vm, launch::LaunchOptions& l) {
  const Values v{vm};
  if (v.has("np")) l.np = static_cast<int>(parseUnsigned(v.str("np"), "--np", 1, 4096));
  if (v.has("rank")) l.rank = static_cast<int>(parseUnsigned(v.str("rank"), "--rank", 0, 1 << 24));
  if (v.has("world-size"))
    l.worldSize = static_cast<int>(parseUnsigned(v.str("world-size"), "--world-size", 1, 1 << 24));
  if (v.has("rendezvous")) l.rendezvous = v.str("rendezvous");
  l.standaloneServer = v.on("standalone-rendezvous");
  if (v.has("file-store")) l.fileStore = v.str("file-store");
  if (v.has("run-id")) l.runId = v.str("run-id");
  if (v.has("token")) l.token = v.str("token");
}

}  // namespace rdmabench::cli
