#include "check/options.h"

#include <boost/program_options.hpp>

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command_options.h"
#include "cli/options.h"
#include "common/error.h"
#include "common/text_escape.h"
#include "common/token.h"

namespace rdmabench::check {

namespace po = boost::program_options;

bool CheckCommand::skips(const std::string& step) const {
  return std::find(skip.begin(), skip.end(), step) != skip.end();
}

namespace {

cli::OptionGroups checkOptionGroups() {
  po::options_description general(
      "Usage: rdmabench check [options]\nNode health gate for Slurm's HealthCheckProgram, NHC "
      "and prologs: inventory of the RDMA devices, ports and netdevs (sysfs), their counters "
      "over the test window, a latency and bandwidth run with --check on each port (loopback, or "
      "against `rdmabench server` on --peer), "
      "and a short OS noise run, within --budget. Exit 0 healthy, 1 unhealthy (the first line "
      "is the drain reason), 2 usage, 3 could not run (docs/check.md).\n\nSteps");
  general.add_options()("help,h", "show this help")(
      "budget", po::value<std::string>(),
      fmt::format("seconds the whole check may take, {}..{} (default {}); each step has a share "
                  "and the report lists what was skipped for lack of time",
                  kMinBudgetSec, kMaxBudgetSec, kDefaultBudgetSec)
          .c_str())("device,d", po::value<std::vector<std::string>>(),
                    "check this RDMA device only (repeatable; default: every device)")(
      "skip", po::value<std::vector<std::string>>(),
      "leave out a step, a loop or a transport: measure | noise | lat | bw | verbs | ofi (lat, "
      "bw: one loop of the measurement; verbs, ofi: its runs; repeatable)")(
      "provider", po::value<std::vector<std::string>>(),
      "libfabric provider measured after verbs on each port, on the domain named like the "
      "device (repeatable; default verbs;ofi_rxm; absent here: a note)")(
      "peer", po::value<std::string>(),
      "measure each active port against `rdmabench server` on HOST, across the fabric "
      "(default: a loopback server on this node)")("port,p", po::value<std::string>(),
                                                   "the peer's control port (default 18515)")(
      "token", po::value<std::string>(),
      "access token the peer's server requires (default: $RDMABENCH_TOKEN)")(
      "require-rdma", po::bool_switch(),
      "no RDMA device (or none of -d) is unhealthy (default: healthy, with a note)");
  po::options_description judge("Judging");
  judge.add_options()(
      "expect", po::value<std::vector<std::string>>(),
      "a plain limit on every measured port, repeatable: lat_p50|lat_p99 OP VALUE ns|us|ms|s, "
      "bw OP VALUE MB/s|GB/s|Mb/s|Gb/s|%link, OP <=, <, >=, > (e.g. 'lat_p99<=3us', "
      "'bw>=90%link'; the link rate comes from sysfs)")(
      "counter-limit", po::value<std::vector<std::string>>(),
      "NAME=N: the error counter NAME (as the report names it, e.g. hw_counters/rcvd_seq_err) may "
      "rise by up to N in the window (repeatable; default 0: any rise fails)")(
      "record", po::value<std::string>(),
      "append this run to the node's history DIR/NODE.json (atomic, under a lock)")(
      "baseline", po::value<std::string>(),
      "judge every figure against the node's history in DIR: worse than the median by more "
      "than max(k x MAD, margin) fails")("mad-k", po::value<std::string>(),
                                         "k of the baseline rule, 0..100 (default 3)")(
      "margin", po::value<std::string>(),
      "minimum relative margin of the baseline rule, % of the median, 0..1000 (default 10)")(
      "min-runs", po::value<std::string>(),
      fmt::format("healthy runs the history needs before it judges, 2..{} (default 5)", kMaxMinRuns)
          .c_str())("window", po::value<std::string>(),
                    "newest healthy runs of the history the baseline uses, 2..1000 (default 30)")(
      "node", po::value<std::string>(), "the node's name in the history (default: the host name)");
  po::options_description output("Output");
  output.add_options()("format,f", po::value<std::string>(), "table | json (default table)")(
      "output,o", po::value<std::string>(), "write the report to FILE, atomically")(
      "quiet", po::bool_switch(), "no note lines on stderr (errors are always printed)");
  return cli::OptionGroups{general, judge, output};
}

void parseJudging(const po::variables_map& vm, CheckCommand& cmd) {
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  auto has = [&](const char* k) { return vm.count(k) > 0; };
  if (has("expect"))
    for (const auto& e : vm["expect"].as<std::vector<std::string>>())
      cmd.expects.push_back(parseExpectation(e));
  if (has("counter-limit"))
    for (const auto& c : vm["counter-limit"].as<std::vector<std::string>>()) {
      const size_t eq = c.find('=');
      if (eq == std::string::npos || eq == 0 || c.find('/') == std::string::npos)
        throw UsageError(
            fmt::format("--counter-limit {}: expected NAME=N with NAME as the report names it "
                        "(e.g. hw_counters/rcvd_seq_err=10)",
                        c));
      cmd.counterLimits[c.substr(0, eq)] =
          cli::parseUnsigned(c.substr(eq + 1), "--counter-limit " + c.substr(0, eq), 0, UINT64_MAX);
    }
  if (has("record")) cmd.recordDir = str("record");
  if (has("baseline")) cmd.baselineDir = str("baseline");
  if ((has("record") && cmd.recordDir.empty()) || (has("baseline") && cmd.baselineDir.empty()))
    throw UsageError("--record/--baseline '': no directory");
  if (has("mad-k")) cmd.rule.k = cli::parseNumber(str("mad-k"), "--mad-k", 0, 100, "");
  if (has("margin")) cmd.rule.marginPct = cli::parseNumber(str("margin"), "--margin", 0, 1000, "%");
  if (has("min-runs"))
    cmd.rule.minRuns = cli::parseUnsigned(str("min-runs"), "--min-runs", 2, kMaxMinRuns);
  if (has("window")) cmd.window = cli::parseUnsigned(str("window"), "--window", 2, 1000);
  if (cmd.window < cmd.rule.minRuns)
    throw UsageError(fmt::format("--window {}: smaller than --min-runs {}: nothing would be judged",
                                 cmd.window, cmd.rule.minRuns));
  if (has("node")) cmd.node = str("node");
}

// --peer, --port, --token.
void parsePeer(const po::variables_map& vm, CheckCommand& cmd) {
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  for (const char* k : {"port", "token"})
    if (vm.count(k) && !vm.count("peer"))
      throw UsageError(fmt::format("--{}: only with --peer (the loopback server needs none)", k));
  if (vm.count("peer")) {
    cmd.peer = str("peer");
    if (cmd.peer.empty())
      throw UsageError(
          "--peer '': empty host name (an unset shell variable?); omit --peer for "
          "the loopback measurement");
    if (vm.count("port"))
      cmd.peerPort = static_cast<uint16_t>(cli::parseUnsigned(str("port"), "--port", 1, 65535));
    cli::splitHostPort(cmd.peer, cmd.peerPort, vm.count("port") > 0);
    cmd.token = resolveToken(
        vm.count("token") ? std::optional<std::string>(str("token")) : std::nullopt, false);
  }
}

}  // namespace

CheckCommand parseCheckCommand(const std::vector<std::string>& args) {
  CheckCommand cmd;
  po::variables_map vm = cli::parseCommandOptions("check", checkOptionGroups(), args, cmd);
  if (cmd.help) return cmd;
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  if (vm.count("budget"))
    cmd.budgetSec = cli::parseSeconds(str("budget"), "--budget", kMinBudgetSec, kMaxBudgetSec);
  if (vm.count("device")) cmd.devices = vm["device"].as<std::vector<std::string>>();
  if (vm.count("skip"))
    for (const auto& s : vm["skip"].as<std::vector<std::string>>()) {
      static const std::vector<std::string> kSteps{"measure", "noise", "lat", "bw", "verbs", "ofi"};
      if (std::find(kSteps.begin(), kSteps.end(), s) == kSteps.end())
        throw UsageError(fmt::format("--skip {}: no such step (valid: {})", escapeForLog(s, 40),
                                     fmt::join(kSteps, ", ")));
      cmd.skip.push_back(s);
    }
  if (((cmd.skips("lat") && cmd.skips("bw")) || (cmd.skips("verbs") && cmd.skips("ofi"))) &&
      !cmd.skips("measure"))
    cmd.skip.push_back("measure");
  cmd.requireRdma = vm["require-rdma"].as<bool>();
  parsePeer(vm, cmd);
  if (vm.count("provider")) {
    cmd.providers = vm["provider"].as<std::vector<std::string>>();
    for (const std::string& p : cmd.providers)
      if (p.empty() || p.size() > 64 || p.find_first_of(" ,\t") != std::string::npos)
        throw UsageError(
            fmt::format("--provider '{}': expected one libfabric provider string "
                        "such as verbs;ofi_rxm (repeat the option for more)",
                        escapeForLog(p, 80)));
  }
  parseJudging(vm, cmd);
  cli::parseFormatAndOutput(vm, "check", {"table", "json"}, cmd.format, cmd.outputPath);
  cmd.quiet = vm["quiet"].as<bool>();
  return cmd;
}

}  // namespace rdmabench::check
