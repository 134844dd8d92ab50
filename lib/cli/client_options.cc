// `rdmabench lat` / `rdmabench bw`: the option descriptions (help, docs/cli.md) and their parse
// into a ClientCommand, one function per option group, in the order the checks always ran.
#include <boost/program_options.hpp>

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "cli/bw_method.h"
#include "cli/help_gen.h"
#include "cli/options.h"
#include "common/error.h"
#include "common/measure_clock.h"
#include "common/text_escape.h"
#include "common/token.h"
#include "common/units.h"
#include "report/report.h"

namespace rdmabench::cli {

namespace po = boost::program_options;

namespace {

std::vector<std::string> formatsList() {
  return report::formatNames();
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v)
    s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string joinedBars(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v)
    s += (s.empty() ? "" : " | ") + x;
  return s;
}

}  // namespace

namespace {

void addTestOptions(po::options_description& general, bool bw) {
  general.add_options()("help,h", "show this help")("transport,t", po::value<std::string>(),
                                                    "socket | verbs | ofi (default: verbs when an "
                                                    "active RDMA port exists, else socket)")(
      "op", po::value<std::string>(), kOpHelp)(
      "size,s", po::value<std::string>(),
      "message size, bytes (K/M/G, KiB/MiB/GiB = powers of two, B = bytes; KB/MB/GB are refused as "
      "ambiguous); a comma list runs each in turn (0,1,1K)")(
      "all,a", po::bool_switch(),
      bw ? "all powers of two from 1 B up to 4M" : "all powers of two up to 4M (send from 0 B)")(
      "msg-sizes,m", po::value<std::string>(), "OSU-style MIN:MAX sweep (powers of two)")(
      "iters,n", po::value<std::string>(),
      "measured iterations per size (default: OSU's, by size; -f perftest: perftest's, 1000, "
      "ib_write_bw 5000 messages, in windows in window mode)")(
      "warmup", po::value<std::string>(), "warmup iterations per size (default: OSU's)")(
      "duration,D", po::value<std::string>(), "seconds per size, by the clock, instead of --iters")(
      "max-time", po::value<std::string>(),
      "longest a size may take with the automatic counts, seconds (IMB -time; default 10, 0 = "
      "off)")("check", po::bool_switch(), "verify payload data")(
      "timeout", po::value<std::string>(),
      "longest wait without progress, seconds "
      "(default 10)")("connect-timeout", po::value<std::string>(),
                      "seconds to reach the server (default 5)")(
      "port,p", po::value<std::string>(), "server control port (default 18515)")(
      "token", po::value<std::string>(),
      "access token the server requires (default: $RDMABENCH_TOKEN; prefer the variable, "
      "command lines are visible in ps)");
  if (bw)
    general.add_options()(
        "mode", po::value<std::string>(),
        (std::string(kModeHelp) + "; -f perftest does not change it (default window)").c_str())(
        "window,w", po::value<std::string>(), "window mode: messages per window (default 64)")(
        "bidir,b", po::bool_switch(), "bidirectional (osu_bibw)")(
        "qp,q", po::value<std::string>(), "connections in parallel (default 1)")(
        "cq-mod", po::value<std::string>(), kCqModHelp)("post-list,l", po::value<std::string>(),
                                                        kPostListHelp);
}

void addDeviceOptions(po::options_description& device) {
  device.add_options()("device,d", po::value<std::string>(),
                       "verbs device (default: first with an active port)")(
      "remote-device", po::value<std::string>(), "the server's verbs device / ofi domain")(
      "ib-port", po::value<std::string>(), "verbs port number (default 1)")(
      "gid-index,x", po::value<std::string>(), "GID index or auto (default auto)")(
      "inline", po::value<std::string>(), "inline bytes or auto (default auto)")(
      "tx-depth", po::value<std::string>(), "send queue depth")(
      "rx-depth", po::value<std::string>(), "receive queue depth")(
      "mtu", po::value<std::string>(), "path MTU bytes 256..4096 (default: active MTU)")(
      "use-event,e", po::value<std::string>()->implicit_value("on"),
      (std::string(kUseEventHelp) + " (default off)").c_str())("rdma-cm,R", po::bool_switch(),
                                                               "connect QPs with librdmacm")(
      "provider", po::value<std::vector<std::string>>()->composing(),
      "libfabric provider string (default tcp;ofi_rxm); give it twice or more for an A/B "
      "comparison of providers")("compare", po::value<std::string>(),
                                 "A/B over transports, e.g. verbs,ofi:tcp;ofi_rxm,socket")(
      "domain", po::value<std::string>(), "libfabric domain (default: first)")(
      "ep", po::value<std::string>(), "libfabric endpoint type rdm | msg (default rdm)");
}

void addOutputOptions(po::options_description& output) {
  output.add_options()("format,f", po::value<std::string>(),
                       (joinedBars(formatsList()) + " (default table)").c_str())(
      "output,o", po::value<std::string>(), "write the report to FILE")(
      "gbits", po::bool_switch(), "also show Gb/s (10^9 bit/s)")(
      "full", po::bool_switch(), "OSU -f columns (min, max, iterations) in --format osu")(
      "quiet", po::bool_switch(),
      "no progress line (shown only on a terminal) or large-run note on stderr");
}

void addMeasureOptions(po::options_description& measure) {
  measure.add_options()("clock", po::value<std::string>(),
                        "measurement clock auto | tsc | monotonic (default auto: the TSC when "
                        "invariant)")("cpu", po::value<std::string>(),
                                      "bind the benchmark thread to CPUs LIST (0-3,8)")(
      "numa", po::value<std::string>(),
      "auto | off | N: bind to the device's NUMA node, not at all, or node N (default auto)");
}

// HOST, -t, --op, -p.
void parseTarget(const po::variables_map& vm, ClientCommand& cmd) {
  engine::TestSpec& spec = cmd.client.spec;
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  // `lat "$NODE"` with NODE unset: a loopback run would be reported as the fabric's figures.
  if (vm.count("host") && (cmd.client.host = str("host")).empty())
    throw UsageError(
        "HOST '': empty host name (an unset shell variable?); omit HOST for a loopback run");
  if (vm.count("transport")) {
    spec.transport = str("transport");
    cmd.transportGiven = true;
    // Before the options checked against it (checkTransportOptions).
    const auto& backends = transport::backendNames();
    if (std::find(backends.begin(), backends.end(), spec.transport) == backends.end())
      throw UsageError(fmt::format("--transport {}: unknown (valid: socket, verbs, ofi)",
                                   escapeForLog(spec.transport, 40)));
  }
  if (vm.count("op")) spec.op = engine::parseOp(str("op"));
  if (vm.count("port"))
    cmd.client.port = static_cast<uint16_t>(parseUnsigned(str("port"), "--port", 1, 65535));
  splitHostPort(cmd.client.host, cmd.client.port, vm.count("port") > 0);
}

// -s / -a / -m: the sizes of the sweep.
void parseSizes(const po::variables_map& vm, engine::TestSpec& spec) {
  const bool bw = spec.bandwidth();
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  int sizeModes = vm.count("size") + (vm["all"].as<bool>() ? 1 : 0) + vm.count("msg-sizes");
  if (sizeModes > 1) throw UsageError("--size, --all and --msg-sizes: give only one of them");
  const uint64_t minDefault = (bw || spec.oneSided()) ? 1 : 0;
  if (vm.count("size")) {
    // A comma list (0,1,220,1023) runs each size in turn, in the order given.
    spec.sizes = parseSizeList(str("size"), "--size", engine::kMaxMessageBytes, "2 GiB - 1");
  } else if (vm["all"].as<bool>()) {
    spec.sizes = sizeSweep(minDefault, 4u << 20);
  } else if (vm.count("msg-sizes")) {
    SizeRange r = parseSizeRange(str("msg-sizes"), "--msg-sizes", minDefault, 4u << 20);
    checkSizeRangeLimit(r, str("msg-sizes"), "-m/--msg-sizes", engine::kMaxMessageBytes,
                        "2 GiB - 1");
    spec.sizes = sizeSweep(r.min, r.max);
  } else {
    spec.sizes = bw ? sizeSweep(1, 1u << 20) : sizeSweep(minDefault, 64u << 10);
  }
}

// -n, --warmup, -D, --max-time, --check, --token, --timeout, --connect-timeout.
void parseRunControl(const po::variables_map& vm, ClientCommand& cmd) {
  engine::TestSpec& spec = cmd.client.spec;
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  if (vm.count("iters"))
    spec.iterations = parseUnsigned(str("iters"), "--iters", 1, engine::kMaxIterations);
  if (vm.count("warmup"))
    spec.warmup =
        static_cast<int64_t>(parseUnsigned(str("warmup"), "--warmup", 0, engine::kMaxIterations));
  if (vm.count("duration")) {
    if (vm.count("iters")) throw UsageError("--duration and --iters: give only one of them");
    spec.durationSec = parseSeconds(str("duration"), "--duration", 0.01, 3600);
  }
  if (vm.count("max-time"))
    cmd.client.maxTimeSec = parseSeconds(str("max-time"), "--max-time", 0, 3600);
  spec.check = vm["check"].as<bool>();
  cmd.client.token = resolveToken(
      vm.count("token") ? std::optional<std::string>(str("token")) : std::nullopt, false);
  if (vm.count("timeout"))
    spec.timeoutMs =
        static_cast<int64_t>(parseSeconds(str("timeout"), "--timeout", 0.1, 3600) * 1000);
  if (vm.count("connect-timeout"))
    cmd.client.connectTimeoutMs = static_cast<int64_t>(
        parseSeconds(str("connect-timeout"), "--connect-timeout", 0.1, 3600) * 1000);
}

// bw only: -w, -b, --mode, -q, --cq-mod, -l.
void parseBandwidth(const po::variables_map& vm, engine::TestSpec& spec) {
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  {
    if (vm.count("window"))
      spec.window =
          static_cast<uint32_t>(parseUnsigned(str("window"), "--window", 1, engine::kMaxWindow));
    spec.bidirectional = vm["bidir"].as<bool>();
    parseModeOption(vm, spec);
    if (vm.count("qp"))
      spec.queuePairs =
          static_cast<uint32_t>(parseUnsigned(str("qp"), "--qp", 1, engine::kMaxQueuePairs));
    parsePostOptions(vm, spec);
  }
}

// Device / transport options: this side's device, the server's (sent with the description),
// the A/B variants.
void parseDevice(const po::variables_map& vm, ClientCommand& cmd) {
  engine::TestSpec& spec = cmd.client.spec;
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  transport::DeviceOptions& d = cmd.client.localDevice;
  if (vm.count("device")) d.device = str("device");
  if (vm.count("ib-port"))
    d.ibPort = static_cast<int>(parseUnsigned(str("ib-port"), "--ib-port", 1, 255));
  if (vm.count("gid-index") && str("gid-index") != "auto")
    d.gidIndex = static_cast<int>(parseUnsigned(str("gid-index"), "--gid-index", 0, 65535));
  if (vm.count("inline") && str("inline") != "auto")
    d.inlineBytes = static_cast<int64_t>(parseUnsigned(str("inline"), "--inline", 0, 1 << 20));
  if (vm.count("tx-depth")) d.txDepth = parseTxDepth(vm);
  if (vm.count("rx-depth"))
    d.rxDepth = static_cast<uint32_t>(parseUnsigned(str("rx-depth"), "--rx-depth", 1, 1 << 20));
  if (vm.count("mtu")) {
    uint64_t mtu = parseUnsigned(str("mtu"), "--mtu", 256, 4096);
    if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096)
      throw UsageError(fmt::format("--mtu {}: must be one of 256, 512, 1024, 2048, 4096", mtu));
    d.mtu = static_cast<uint32_t>(mtu);
  }
  const bool hadHost = !cmd.client.host.empty();
  const std::optional<transport::ProgressMode> asked = parseUseEvent(vm, &cmd.client.host);
  cmd.progressGiven = asked.has_value();
  d.progress = asked.value_or(transport::ProgressMode::kBusyPoll);
  // `lat -e nodeA:18651`: the HOST taken from -e may carry the port, as a positional one may.
  if (!hadHost && !cmd.client.host.empty()) {
    cmd.client.hostHint = fmt::format(
        "HOST '{0}' is the word after -e, which takes only on, off or yield: `-e off`, `-e on` "
        "or `-e yield` for the mode, `{0} -e` for a host",
        escapeForLog(cmd.client.host, 80));
    splitHostPort(cmd.client.host, cmd.client.port, vm.count("port") > 0);
  }
  d.rdmaCm = vm["rdma-cm"].as<bool>();
  std::vector<std::string> providers;
  if (vm.count("provider")) providers = vm["provider"].as<std::vector<std::string>>();
  if (providers.size() == 1) d.provider = providers[0];
  if (providers.size() > 1) {
    if (vm.count("compare")) throw UsageError("--compare and several --provider: give one of them");
    if (cmd.transportGiven && spec.transport != "ofi")
      throw UsageError(fmt::format("--provider: only for -t ofi, not -t {}", spec.transport));
    spec.transport = "ofi";
    cmd.transportGiven = true;
    for (const auto& p : providers)
      cmd.variants.push_back({"ofi", p, "ofi:" + p});
  }
  if (vm.count("compare")) {
    cmd.variants = parseCompareList(str("compare"));
    spec.transport = cmd.variants.front().transport;
    cmd.transportGiven = true;
  }
  if (vm.count("ep")) {
    d.endpointType = str("ep");
    if (d.endpointType != "rdm" && d.endpointType != "msg")
      throw UsageError(fmt::format("--ep {}: must be rdm or msg", d.endpointType));
  }
  if (vm.count("domain")) d.device = str("domain");
  // With -t: an option the transport does not read is refused now; without -t, once the
  // transport is chosen (checkAutoTransport). --compare's variants differ by design.
  if (!vm.count("compare")) {
    if (cmd.transportGiven)
      checkTransportOptions(givenTransportOptions(vm), spec.transport, nullptr);
    else
      cmd.transportOptions = givenTransportOptions(vm);
  }
  // The server side shares everything but the device name and GID index (each side picks its
  // own) unless --remote-device names it.
  spec.serverDevice = d;
  spec.txDepth = d.txDepth;  // stream mode's posts in flight (TestSpec::txDepth)
  spec.serverDevice.device = vm.count("remote-device") ? str("remote-device") : std::string();
  if (spec.serverDevice.device.empty() && vm.count("domain") && cmd.client.host.empty())
    spec.serverDevice.device = d.device;
  spec.serverDevice.gidIndex = -1;
  applyStreamCqModeration(vm, spec);
  if (cmd.client.host.empty()) {
    // Loopback: both sides use the same device and GID.
    spec.serverDevice.device = d.device;
    spec.serverDevice.gidIndex = d.gidIndex;
  }
}

// --gbits and --full where the report has no place for them are refused rather than ignored
// (docs/cli.md): lat has no bandwidth; osu_bw and IMB print MB/s only; the A/B table compares
// MB/s; OSU's -f columns (min, max, iterations) are latency columns. bw's JSON and CSV always
// carry gbit_per_s, so --gbits is accepted there.
void checkReportOptions(const ClientCommand& cmd) {
  const std::string& f = cmd.output.format;
  if (cmd.output.gigabits) {
    if (!cmd.client.spec.bandwidth())
      throw UsageError(
          "--gbits: lat reports latency only; Gb/s is a bw figure (bw --gbits with --format "
          "table or perftest)");
    if (cmd.variants.size() > 1)
      throw UsageError(
          "--gbits: the A/B table (--compare, several --provider) compares MB/s only; its "
          "--format json carries each run's gbit_per_s");
    if (f == "osu" || f == "imb")
      throw UsageError(fmt::format(
          "--gbits with --format {}: {}'s layout has MB/s only; Gb/s is in --format table and "
          "perftest (json and csv always carry gbit_per_s)",
          f, f == "osu" ? "osu_bw" : "IMB"));
  }
  if (cmd.output.full && cmd.client.spec.bandwidth())
    throw UsageError(
        "--full with bw: OSU's -f columns (min, max latency, iterations) belong to latency "
        "tests; osu_bw has none (lat -f osu --full prints them)");
}

// -f, -o, --clock, --cpu, --numa, --gbits, --full, --quiet.
void parseOutput(const po::variables_map& vm, ClientCommand& cmd) {
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  if (vm.count("format")) {
    const auto& names = report::formatNames();
    if (std::find(names.begin(), names.end(), str("format")) == names.end())
      throw UsageError(
          fmt::format("--format {}: unknown (valid: {})", str("format"), joined(names)));
  }
  if (vm.count("output")) cmd.output.path = parseOutputPath(str("output"));
  // `-o x.json` without -f: JSON, not a text table in a .json file.
  cmd.output.format =
      formatForOutput(vm.count("format") ? str("format") : std::string(), cmd.output.path);
  if (vm.count("clock")) {
    cmd.clock = str("clock");
    checkClockChoice(cmd.clock);
  }
  if (vm.count("cpu")) cmd.placement.cpus = str("cpu");
  if (vm.count("numa")) cmd.placement.numa = str("numa");
  validatePlacement(cmd.placement);
  cmd.output.gigabits = vm["gbits"].as<bool>();
  cmd.output.full = vm["full"].as<bool>();
  checkFullFormat(cmd.output.full, cmd.output.format);
  checkReportOptions(cmd);
  cmd.output.quiet = vm["quiet"].as<bool>();
}

}  // namespace

ClientCommand parseClientCommand(const std::string& test, const std::vector<std::string>& args) {
  ClientCommand cmd;
  engine::TestSpec& spec = cmd.client.spec;
  spec.test = engine::parseTestKind(test);
  const bool bw = spec.bandwidth();

  po::options_description general(
      fmt::format("Usage: rdmabench {} [HOST] [options]\n"
                  "{} against `rdmabench server` on HOST, or on loopback when HOST is omitted.\n\n"
                  "Test",
                  test,
                  bw ? "Windowed bandwidth / message rate (osu_bw, ib_*_bw)"
                     : "Ping-pong latency (osu_latency, ib_*_lat)"),
      110);
  addTestOptions(general, bw);
  po::options_description device("Device / transport", 110);
  addDeviceOptions(device);
  po::options_description output("Output", 110);
  addOutputOptions(output);
  po::options_description measure("Clock / placement", 110);
  addMeasureOptions(measure);

  po::options_description hidden;
  hidden.add_options()("host", po::value<std::string>());
  po::options_description all;
  all.add(general).add(device).add(measure).add(output).add(hidden);
  po::positional_options_description pos;
  pos.add("host", 1);

  po::variables_map vm = parseOptions(test, all, pos, args);
  if (vm.count("help")) {
    cmd.help = true;
    cmd.helpGroups = OptionGroups{general, device, measure, output};
    cmd.helpText = renderHelp(cmd.helpGroups);
    return cmd;
  }
  try {
    parseTarget(vm, cmd);
    parseSizes(vm, spec);
    parseRunControl(vm, cmd);
    if (bw) parseBandwidth(vm, spec);
    parseDevice(vm, cmd);
    parseOutput(vm, cmd);
    // -f perftest without -n / -D: perftest's counts (1000; ib_write_bw 5000 messages), not OSU's.
    if (cmd.output.format == "perftest" && !vm.count("iters") && !vm.count("duration"))
      spec.iterations = engine::perftestDefaultIterations(spec);

    const auto& backends = transport::backendNames();
    if (std::find(backends.begin(), backends.end(), spec.transport) == backends.end())
      throw UsageError(
          fmt::format("--transport {}: unknown (valid: socket, verbs, ofi)", spec.transport));
    spec.validate();
  } catch (const UsageError& e) {
    // The options parsed: the output they name is known (a -f it does not know stays "table").
    OutputOptions out;
    const auto& names = report::formatNames();
    if (vm.count("format") &&
        std::find(names.begin(), names.end(), vm["format"].as<std::string>()) != names.end())
      out.format = vm["format"].as<std::string>();
    if (vm.count("output")) out.path = vm["output"].as<std::string>();
    throw ClientUsageError(e.what(), out);
  }
  return cmd;
}
}  // namespace rdmabench::cli
