#include "cli/coll_options.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cli/options.h"
#include "collective/allreduce.h"
#include "collective/congestion_plan.h"
#include "collective/sharp/sharp.h"
#include "common/error.h"
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
      "timeout",    "format",    "output",  "full",       "plot"};
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

}  // namespace

std::string defaultRunId(const std::string& description) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : description)
    h = (h ^ ch) * 1099511628211ull;
  return fmt::format("cmd-{:016x}", h);
}

void requireWorld(const std::string& test, const CollCommand& cmd, const launch::RankInfo& info) {
  if (info.source != "single" || info.worldSize != 1 || cmd.launch.np > 0) return;
  throw UsageError(fmt::format(
      "{}: no launcher found and no --np: this would run a world of 1 rank; give --np N (N ranks "
      "on this host), start it under srun or mpirun, or give --np 1 for one rank on purpose",
      test));
}

CollCommand parseCollectiveCommand(const std::string& test, const std::vector<std::string>& args) {
  CollCommand cmd;
  collective::CollectiveParams& p = cmd.params;
  p.test = test;
  std::string title = test == "barrier"     ? "Dissemination barrier latency (osu_barrier)"
                      : test == "allreduce" ? "Allreduce latency and bandwidth (osu_allreduce, "
                                              "IMB Allreduce, nccl-tests all_reduce_perf)"
                      : test == "ring"      ? "Ring ping-pong: every rank with its right, then "
                                              "left neighbour; flags slow links and hosts"
                      : test == "congestion"
                          ? "Congestion impact (GPCNeT): victims run a random-ring latency and "
                            "bandwidth test alone, then while aggressors run incast or all-to-all "
                            "traffic; reports congested / isolated p50 and p99"
                          : "All-pairs fabric map: latency and bandwidth of "
                            "every ordered pair, in rounds of disjoint pairs; "
                            "flags slow nodes and links";
  // pairs and congestion run fixed counts per measurement (-n, --bw-iters) and have their own
  // layouts (table, json, csv).
  const bool fixedCounts = test == "pairs" || test == "congestion";
  po::options_description general(
      fmt::format("Usage: rdmabench {} [options]\n{}.\n\nTest", test, title));
  general.add_options()("help,h", "show this help")(
      "transport,t", po::value<std::string>(),
      "socket | verbs | ofi (default: verbs when an RDMA device is usable, else socket)")(
      "iters,n", po::value<std::string>(),
      fixedCounts ? (test == "pairs" ? "latency iterations per ordered pair (default 1000)"
                                     : "victims' latency iterations per phase (default 1000)")
                  : "measured iterations per size (default: OSU's)")(
      "warmup", po::value<std::string>(),
      fixedCounts ? "latency warmup iterations; bandwidth warmup is min(N, 2) (default 100)"
                  : "warmup iterations per size (default: OSU's)")(
      "timeout", po::value<std::string>(),
      "longest wait without progress and for other ranks, seconds (default 10)");
  // No per-size timing for the fixed counts of pairs and congestion.
  if (!fixedCounts)
    general.add_options()(
        "duration,D", po::value<std::string>(),
        "seconds per size: iterations calibrated from the warmup (at least 10), instead of -n")(
        "max-time", po::value<std::string>(),
        "with the default -n, a size runs fewer iterations when its warmup says it would take "
        "longer than this, seconds (IMB's -time; default 10, 0 = off)");
  if (test == "barrier")
    general.add_options()("algo", po::value<std::string>(),
                          "dissemination | sharp (in-network, NVIDIA SHARP; default "
                          "dissemination)");
  if (test == "allreduce")
    general.add_options()("algo", po::value<std::string>(),
                          "tree | ring | rd | rabenseifner | auto | sharp (default tree; auto "
                          "never picks sharp)")(
        "dtype", po::value<std::string>(), "int32 | int64 | float32 | float64 (default float32)")(
        "op", po::value<std::string>(), "sum | min | max (default sum)")(
        "size,s", po::value<std::string>(),
        "message size, bytes (K/M suffixes); a comma list runs each in turn (8,16)")(
        "msg-sizes,m", po::value<std::string>(), "OSU-style MIN:MAX sweep (default 4:1M)")(
        "check,c", po::bool_switch(), "verify every result against the local computation");
  if (test == "ring")
    general.add_options()("size,s", po::value<std::string>(),
                          "one message size, bytes, 1..64M (K/M suffixes) (default 1024)")(
        "outlier-k", po::value<std::string>(),
        "outlier threshold: baseline + k x max(MAD, baseline/10) (default 5)")(
        "fail-on-outlier", po::bool_switch(), "exit non-zero when a link is an outlier");

  if (test == "pairs")
    general.add_options()("lat-size,s", po::value<std::string>(),
                          "latency ping-pong size, bytes, 1..64M (K/M suffixes) (default 8)")(
        "sizes", po::value<std::string>(), "same as --lat-size")(
        "bw-size", po::value<std::string>(), "bandwidth message size, bytes (default 1M)")(
        "window,w", po::value<std::string>(),
        "bandwidth messages in flight per iteration (default 16)")(
        "bw-iters", po::value<std::string>(),
        "measured bandwidth iterations per pair (default 10)")(
        "outlier-k", po::value<std::string>(),
        "outlier threshold: median + k x max(MAD, median/10), nodes first (default 5)")(
        "fail-on-outlier", po::bool_switch(), "exit 1 when a node or a link is an outlier")(
        "plot", po::value<std::string>(), "heat map of both matrices to FILE.png or FILE.svg");

  if (test == "congestion")
    general.add_options()(
        "victims", po::value<std::string>(),
        "fraction of the ranks that are victims, the rest aggressors (default "
        "0.2, as GPCNeT; victims = ceil(fraction x ranks) >= 2, aggressors >= 2)")(
        "pattern", po::value<std::string>(),
        "aggressor traffic: incast | alltoall (default incast)")(
        "seed", po::value<std::string>(),
        "seed of the victim/aggressor split and the random ring (default 1)")(
        "lat-size,s", po::value<std::string>(), "victims' latency message size (default 8)")(
        "bw-size", po::value<std::string>(),
        "victims' bandwidth message size (default 128K, GPCNeT's 131072 B)")(
        "bw-iters", po::value<std::string>(), "victims' bandwidth iterations (default 100)")(
        "window,w", po::value<std::string>(),
        "messages in flight per neighbour (victims' bandwidth) and per aggressor stream "
        "(default 8)")("agg-size", po::value<std::string>(),
                       "aggressor message size (default 128K)")(
        "phase-time", po::value<std::string>(),
        "longest the isolated or the congested phase may last, seconds (default 300)");

  po::options_description launchOpts(
      "Launch and rendezvous (default: PMIx server / mpirun / Slurm / PMI "
      "environment, else one rank)");
  launchOpts.add_options()("np", po::value<std::string>(), "fork N ranks on this host")(
      "rank", po::value<std::string>(), "this rank (with --world-size and --rendezvous)")(
      "world-size", po::value<std::string>(), "number of ranks")(
      "rendezvous", po::value<std::string>(),
      "auto (default: pmix under a PMIx server), pmix, tcp://HOST[:PORT] or HOST[:PORT] of rank "
      "0's store server, file:DIR (shared FS)")(
      "standalone-rendezvous", po::bool_switch(),
      "the server runs as `rdmabench rendezvous`; rank 0 does not host one")(
      "file-store", po::value<std::string>(), "rendezvous through files in DIR (shared FS)")(
      "run-id", po::value<std::string>(), "job identity (default: derived from the command)")(
      "token", po::value<std::string>(),
      "access token of the rendezvous store (default: $RDMABENCH_TOKEN, else under Slurm one "
      "derived from the job, with --np a random one; prefer the variable: options show in ps)")(
      "bind", po::value<std::string>(),
      "data-plane address of this rank (default: the "
      "address that reaches the rendezvous)")(
      "ifname", po::value<std::string>(),
      "interfaces whose IPv4 address the ranks use (data plane; rank 0's store under PMIx), as "
      "NCCL_SOCKET_IFNAME: eth0 / eth,ib (prefixes) / ^docker (not these) / =eth0 (exact) "
      "(default: $RDMABENCH_IFNAME, else the first up non-loopback interface)");

  po::options_description device("Device / transport");
  device.add_options()("device,d", po::value<std::string>(), "verbs device / ofi domain")(
      "provider", po::value<std::string>(), "libfabric provider (default tcp;ofi_rxm)")(
      "gid-index,x", po::value<std::string>(), "verbs GID index")(
      "ib-port", po::value<std::string>(), "verbs port (default 1)")(
      "use-event,e", po::value<std::string>()->implicit_value("on"),
      (std::string(kUseEventHelp) +
       " (default: on when more ranks run on this host than it has cores, else off)")
          .c_str())(
      "cpu", po::value<std::string>(),
      "bind the ranks of each host to these CPUs, one CPU per rank in local rank order "
      "(cpuset list: 0-3,8)")("numa", po::value<std::string>(),
                              "auto | N | off: bind every rank to the device's NUMA node (auto, "
                              "keeps a launcher's binding), to node N, or not (default auto)");

  po::options_description output("Output");
  output.add_options()("format,f", po::value<std::string>(),
                       fixedCounts ? "table | json | csv" : "table | json | csv | osu | imb")(
      "output,o", po::value<std::string>(), "write the report (rank 0) to FILE");
  if (!fixedCounts)
    output.add_options()("full", po::bool_switch(),
                         "OSU -f columns (min, max, iterations) in --format osu");

  po::options_description all;
  all.add(general).add(launchOpts).add(device).add(output);
  po::variables_map vm = parseOptions(test, all, {}, args);
  if (vm.count("help")) {
    cmd.help = true;
    cmd.helpGroups = OptionGroups{general, launchOpts, device, output};
    cmd.helpText = renderHelp(cmd.helpGroups);
    return cmd;
  }
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  auto has = [&](const char* k) { return vm.count(k) > 0; };
  if (has("transport")) {
    p.transport = str("transport");
    cmd.transportGiven = true;
  }
  const auto& backends = transport::backendNames();
  if (std::find(backends.begin(), backends.end(), p.transport) == backends.end())
    throw UsageError(
        fmt::format("--transport {}: unknown (valid: socket, verbs, ofi)", p.transport));
  if (has("iters")) p.iterations = parseUnsigned(str("iters"), "--iters", 1, 100'000'000);
  if (has("warmup"))
    p.warmup = static_cast<int64_t>(parseUnsigned(str("warmup"), "--warmup", 0, 100'000'000));
  if (has("duration")) {
    if (has("iters")) throw UsageError("--duration and --iters: give only one of them");
    p.durationSec = parseSeconds(str("duration"), "--duration", 0.01, 3600);
  }
  if (has("max-time")) p.maxTimeSec = parseSeconds(str("max-time"), "--max-time", 0, 3600);
  if (has("timeout"))
    p.timeoutMs = static_cast<int64_t>(parseSeconds(str("timeout"), "--timeout", 0.1, 3600) * 1000);
  if (test == "barrier") {
    p.algo = has("algo") ? str("algo") : "dissemination";
    if (p.algo != "dissemination" && p.algo != "sharp")
      throw UsageError(fmt::format("--algo {}: unknown (valid: dissemination, sharp)", p.algo));
  }
  if (test == "allreduce") {
    if (has("algo")) p.algo = str("algo");
    if (p.algo != "auto" && p.algo != "sharp") {
      const auto& algos = collective::allreduceAlgorithms();
      if (std::find(algos.begin(), algos.end(), p.algo) == algos.end())
        throw UsageError(fmt::format(
            "--algo {}: unknown (valid: tree, ring, rd, rabenseifner, auto, sharp)", p.algo));
    }
    if (has("dtype")) p.dtype = collective::parseDType(str("dtype"));
    if (has("op")) p.op = collective::parseOp(str("op"));
    const uint64_t es = collective::elementSize(p.dtype);
    if (has("size") && has("msg-sizes"))
      throw UsageError("--size and --msg-sizes: give only one of them");
    if (has("size")) {
      p.sizes = parseSizeList(str("size"), "--size");
    } else {
      SizeRange r = has("msg-sizes") ? parseSizeRange(str("msg-sizes"), "--msg-sizes", es, 1u << 20)
                                     : SizeRange{es, 1u << 20};
      p.sizes = sizeSweep(r.min, r.max);
    }
    for (uint64_t b : p.sizes)
      if (b > (1ull << 30))
        throw UsageError(fmt::format("--size {}: above the limit of 1G per rank", b));
    p.check = vm["check"].as<bool>();
  }
  if (p.algo == "sharp" && !collective::sharp::built())
    throw UsageError(fmt::format("--algo sharp: not built: {}", collective::sharp::probe().reason));
  if (test == "ring") {
    if (has("size")) p.ringBytes = parseSize(str("size"), "--size");
    if (p.ringBytes < 1 || p.ringBytes > (64u << 20))
      throw UsageError(fmt::format("--size {}: out of range 1..64M", p.ringBytes));
    if (has("outlier-k")) p.outlierK = parseNumber(str("outlier-k"), "--outlier-k", 0, 1000, "");
    cmd.failOnOutlier = vm["fail-on-outlier"].as<bool>();
  }
  if (test == "pairs") {
    p.maxTimeSec = 0;  // fixed counts (-n, --bw-iters), no per-size time cap
    if (has("lat-size") && has("sizes"))
      throw UsageError("--lat-size and --sizes: give only one of them");
    if (has("lat-size") || has("sizes")) {
      const char* opt = has("lat-size") ? "--lat-size" : "--sizes";
      const std::string v = str(has("lat-size") ? "lat-size" : "sizes");
      p.pairsLatBytes = parseSize(v, opt);
      if (p.pairsLatBytes < 1 || p.pairsLatBytes > (64u << 20))
        throw UsageError(fmt::format("{} {}: out of range 1..64M", opt, v));
    }
    if (has("bw-size")) {
      p.pairsBwBytes = parseSize(str("bw-size"), "--bw-size");
      if (p.pairsBwBytes < 1 || p.pairsBwBytes > (256u << 20))
        throw UsageError(fmt::format("--bw-size {}: out of range 1..256M", str("bw-size")));
    }
    if (has("window"))
      p.pairsWindow = static_cast<uint32_t>(parseUnsigned(str("window"), "--window", 1, 1024));
    if (has("bw-iters"))
      p.pairsBwIters = parseUnsigned(str("bw-iters"), "--bw-iters", 1, 1'000'000);
    if (has("outlier-k")) p.outlierK = parseNumber(str("outlier-k"), "--outlier-k", 0, 1000, "");
    cmd.failOnOutlier = vm["fail-on-outlier"].as<bool>();
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
    }
  }
  if (test == "congestion") {
    p.maxTimeSec = 0;
    p.pairsWindow = 8;
    auto size = [&](const char* name, uint64_t max, uint64_t& out) {
      if (!has(name)) return;
      const std::string opt = std::string("--") + name;
      out = parseSize(str(name), opt);
      if (out < 1 || out > max)
        throw UsageError(fmt::format("{} {}: out of range 1..{}", opt, str(name), formatSize(max)));
    };
    size("lat-size", 64u << 20, p.pairsLatBytes);
    size("bw-size", 64u << 20, p.congBwBytes);
    size("agg-size", 64u << 20, p.congAggBytes);
    if (has("window"))
      p.pairsWindow = static_cast<uint32_t>(parseUnsigned(str("window"), "--window", 1, 1024));
    if (has("bw-iters")) p.congBwIters = parseUnsigned(str("bw-iters"), "--bw-iters", 1, 1'000'000);
    if (has("seed")) p.congSeed = parseUnsigned(str("seed"), "--seed", 0, UINT64_MAX);
    if (has("pattern")) {
      p.congPattern = str("pattern");
      collective::parseCongestionPattern(p.congPattern);
    }
    if (has("victims")) {
      // A fraction of the ranks, strictly between 0 and 1.
      p.congVictims = parseNumber(str("victims"), "--victims", 0, 1, "");
      if (p.congVictims <= 0 || p.congVictims >= 1)
        throw UsageError(fmt::format("--victims {}: out of range (0, 1), a fraction of the ranks",
                                     str("victims")));
    }
    if (has("phase-time"))
      p.congPhaseSec = parseSeconds(str("phase-time"), "--phase-time", 1, 86400);
  }
  launch::LaunchOptions& l = cmd.launch;
  if (has("np")) l.np = static_cast<int>(parseUnsigned(str("np"), "--np", 1, 4096));
  if (has("rank")) l.rank = static_cast<int>(parseUnsigned(str("rank"), "--rank", 0, 1 << 24));
  if (has("world-size"))
    l.worldSize = static_cast<int>(parseUnsigned(str("world-size"), "--world-size", 1, 1 << 24));
  if (has("rendezvous")) l.rendezvous = str("rendezvous");
  l.standaloneServer = vm["standalone-rendezvous"].as<bool>();
  if (has("file-store")) l.fileStore = str("file-store");
  if (has("run-id")) l.runId = str("run-id");
  l.runDescription = measurementDescription(test, vm);
  l.defaultRunId = defaultRunId(l.runDescription);
  if (has("bind")) cmd.bind = str("bind");
  if (has("ifname")) {
    if (has("bind"))
      throw UsageError(
          fmt::format("--ifname {} and --bind {}: give only one", str("ifname"), str("bind")));
    cmd.ifname = str("ifname");
    if (cmd.ifname.empty())
      throw UsageError(
          "--ifname '': no interface name (NAME[,NAME...], ^ to exclude, = for exact "
          "names)");
  } else if (const char* e = std::getenv("RDMABENCH_IFNAME"); e != nullptr) {
    cmd.ifname = e;
  }
  if (has("token")) cmd.launch.token = str("token");
  if (has("cpu")) p.placement.cpus = str("cpu");
  if (has("numa")) p.placement.numa = str("numa");
  validatePlacement(p.placement);
  if (has("device")) p.device.device = str("device");
  if (has("provider")) p.device.provider = str("provider");
  if (has("gid-index"))
    p.device.gidIndex = static_cast<int>(parseUnsigned(str("gid-index"), "--gid-index", 0, 65535));
  if (has("ib-port"))
    p.device.ibPort = static_cast<int>(parseUnsigned(str("ib-port"), "--ib-port", 1, 255));
  cmd.useEvent = parseUseEvent(vm, nullptr);
  if (has("format")) cmd.format = str("format");
  if ((test == "pairs" || test == "congestion") && cmd.format != "table" && cmd.format != "json" &&
      cmd.format != "csv")
    throw UsageError(
        fmt::format("--format {}: no {} layout (valid: table, json, csv)", cmd.format, test));
  // With --np the rank count is known here: a split without 2 victims and 2 aggressors is
  // refused once, not by every rank.
  if (test == "congestion" && l.np > 0) collective::victimCount(l.np, p.congVictims);
  // A fabric map needs a pair at least: one rank would measure nothing and exit 0.
  if (test == "pairs" && l.np == 1)
    throw UsageError("--np 1: pairs measures every pair of ranks and needs at least 2");
  if (cmd.format == "perftest")
    throw UsageError(
        "--format perftest: perftest has no collective layout (valid: table, json, "
        "csv, osu, imb)");
  const auto& names = report::formatNames();
  if (std::find(names.begin(), names.end(), cmd.format) == names.end())
    throw UsageError(
        fmt::format("--format {}: unknown (valid: table, json, csv, osu, imb)", cmd.format));
  if (has("output")) cmd.outputPath = str("output");
  cmd.full = vm.count("full") && vm["full"].as<bool>();
  return cmd;
}

}  // namespace rdmabench::cli
