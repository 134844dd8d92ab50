// `rdmabench barrier | allreduce | ring | pairs | congestion | rendezvous`: N ranks without MPI
// (docs/collectives.md, docs/rendezvous.md).
#include <boost/program_options.hpp>

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <new>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/coll_options.h"
#include "cli/help_gen.h"
#include "cli/options.h"
#include "cli/run_note.h"
#include "collective/allreduce.h"
#include "collective/bench.h"
#include "collective/congestion.h"
#include "collective/congestion_report.h"
#include "collective/pairs.h"
#include "collective/pairs_findings.h"
#include "collective/pairs_report.h"
#include "collective/pairs_spec.h"
#include "collective/sharp/sharp.h"
#include "common/clock.h"
#include "common/desched.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/measure_clock.h"
#include "common/output.h"
#include "common/placement.h"
#include "common/token.h"
#include "common/units.h"
#include "compare/plot.h"
#include "launch/fold.h"
#include "launch/ifname.h"
#include "launch/launch.h"
#include "launch/limits.h"
#include "rendezvous/store.h"
#include "report/csv_writer.h"
#include "report/format_util.h"
#include "report/progress.h"
#include "report/report.h"
#include "report/row_counter.h"
#include "tools/rdmabench/commands.h"

namespace rdmabench {
namespace {

namespace po = boost::program_options;

// Whether this process's stdout and stderr are one terminal, found before --np forks the ranks
// (a rank's stderr is the launcher's pipe): rank 0 then leaves the `# error:` line out of a
// text report on stdout, since its stderr line says the same on that terminal.
bool oneTerminal = false;

// A document that holds only the error, for a run that measured nothing (JSON {"tool","test",
// "error"}, CSV an "error" column, a table its `# error:` line, none when `error` is empty).
void writeErrorOnly(std::ostream& out, const std::string& format, const std::string& test,
                    const std::string& error) {
  if (format == "json") {
    const nlohmann::ordered_json doc{{"tool", "rdmabench"}, {"test", test}, {"error", error}};
    out << report::detail::dumpJson(doc) << "\n";
  } else if (format == "csv") {
    report::CsvWriter csv(out);
    csv.row({"error"});
    csv.row({error});
  } else if (!error.empty()) {
    std::string line = error;
    for (char& c : line)
      if (c == '\n' || c == '\r') c = ' ';
    out << "# error: " << line << "\n";
  }
}

// Rank 0 of a pairs or congestion run that failed: the document with the error, as lat / bw and
// the other collectives write theirs (docs/cli.md, "Output files and failures"): what the
// finished rounds / phases measured (partial.failed) and the error; with nothing measured, a
// document holding only the error, on stdout only (an -o file keeps its previous content). The
// `# error:` line of a table is left out when stderr says it on the same terminal. Never throws:
// the run's own error is the one to report.
template <class Result, class Write>
void writeFailedRun(const cli::CollCommand& cmd, Result& partial, const std::string& error,
                    const char* test, Write writer) noexcept {
  try {
    ResultOutput output(cmd.outputPath);
    const bool text = cmd.format != "json" && cmd.format != "csv";
    partial.error = text && oneTerminal && output.isStdout() ? std::string() : error;
    if (partial.failed)
      writer(output.stream(), cmd.format, partial);
    else if (output.isStdout())
      writeErrorOnly(output.stream(), cmd.format, test, partial.error);
    output.finishAfterFailure(partial.failed);
  } catch (const std::exception& e) {
    std::cerr << "rdmabench: error: writing the report of the failed run: " << e.what() << "\n";
  }
}

// `pairs` on one rank after the store is up: measure, then rank 0 writes the report, the heat
// map and the outlier verdict. Exceptions go to runRank's handler (rank 0 first writes what was
// measured with the error).
int runPairsRank(const cli::CollCommand& cmd, const collective::PairsParams& p,
                 const launch::RankInfo& info, rendezvous::Store& store,
                 std::unique_ptr<rendezvous::TcpStoreServer>& server) {
  collective::PairsResult r, partial;
  try {
    r = collective::runPairs(p, info, store, info.rank == 0 ? &partial : nullptr);
  } catch (const std::exception& e) {
    if (info.rank == 0) writeFailedRun(cmd, partial, e.what(), "pairs", collective::writePairs);
    throw;
  }
  collective::PairsVerdictLine verdict;
  if (info.rank == 0) {
    ResultOutput output(cmd.outputPath);
    collective::writePairs(output.stream(), cmd.format, r);
    output.finish();
    verdict = collective::pairsVerdictLine(r);
  }
  store.leave(true, "");
  if (server) rendezvous::serveUntilAllLeft(*server, cmd.common().timeoutMs);
  if (info.rank == 0 && !cmd.plotPath.empty()) {
    compare::PlotScript script;
    script.text = collective::pairsHeatMapScript(r, cmd.plotPath);
    compare::PlotOptions po;
    po.output = cmd.plotPath;
    compare::renderPlot(script, po);
  }
  // A map it could not judge (findings on descheduled measurements only) fails an acceptance
  // run too: the line says why there is no verdict.
  if (verdict.result != collective::PairsVerdictLine::kPass) {
    if (cmd.failOnOutlier) throw Error(verdict.text);
    if (!cmd.quiet) std::cerr << "rdmabench: warning: " << verdict.text << "\n";
  }
  return 0;
}

// `congestion` on one rank after the store is up: measure, then rank 0 writes the report.
int runCongestionRank(const cli::CollCommand& cmd, const collective::CongestionParams& p,
                      const launch::RankInfo& info, rendezvous::Store& store,
                      std::unique_ptr<rendezvous::TcpStoreServer>& server) {
  collective::CongestionResult r, partial;
  try {
    r = collective::runCongestion(p, info, store, info.rank == 0 ? &partial : nullptr);
  } catch (const std::exception& e) {
    if (info.rank == 0)
      writeFailedRun(cmd, partial, e.what(), "congestion", collective::writeCongestion);
    throw;
  }
  if (info.rank == 0) {
    ResultOutput output(cmd.outputPath);
    collective::writeCongestion(output.stream(), cmd.format, r);
    output.finish();
  }
  store.leave(true, "");
  if (server) rendezvous::serveUntilAllLeft(*server, cmd.common().timeoutMs);
  return 0;
}

// One rank, start to end. Returns its exit status; prints its own one-line error.
int runRank(const cli::CollCommand& cmd, launch::RankInfo info) {
  const int64_t startNs = nowNs();
  std::unique_ptr<rendezvous::TcpStoreServer> server;
  std::unique_ptr<rendezvous::Store> store;
  std::unique_ptr<ResultOutput> output;
  std::unique_ptr<report::Reporter> writer;
  std::unique_ptr<report::RowCounter> reporter;  // counts the rows given to `writer`
  try {
    info.ifname = cmd.ifname;
    store = launch::connectStore(info, cmd.common().timeoutMs, server);
    cli::CollCommand mine = cmd;  // this rank's copy of the parameters
    collective::RankParams& p = mine.common();
    // Busy polling with more ranks than cores on one host starves the rank that has work.
    collective::ProgressChoice progress =
        collective::chooseProgress(cmd.progress, p.placement, info);
    p.device.progress = progress.mode;
    p.progressNote = std::move(progress.note);
    p.yieldCpuShare = progress.cpuShare;
    if (!cmd.bind.empty()) {
      p.device.localHost = cmd.bind;
    } else if (!cmd.ifname.empty()) {
      p.device.localHost = launch::selectAddress(launch::localInterfaces(), cmd.ifname);
    } else if (auto* tcp = dynamic_cast<rendezvous::TcpStoreClient*>(store.get())) {
      p.device.localHost = tcp->localAddress();
    }
    if (p.test == report::Test::kPairs)
      return runPairsRank(cmd, mine.pairsParams(), info, *store, server);
    if (p.test == report::Test::kCongestion)
      return runCongestionRank(cmd, mine.congestionParams(), info, *store, server);
    if (info.rank == 0) {
      output = std::make_unique<ResultOutput>(cmd.outputPath);
      report::ReportOptions ro;
      ro.full = cmd.full;
      writer = report::makeReporter(cmd.format, output->stream(), ro);
      reporter = std::make_unique<report::RowCounter>(*writer);
    }
    collective::CollectiveOutcome o =
        collective::runCollective(mine.collectiveParams(), info, *store, reporter.get());
    if (reporter) reporter->end();
    if (output) output->finish();
    store->leave(true, "");
    // Rank 0 hosts the rendezvous: it serves the other ranks' leaves from this thread (asking
    // allLeft() while the server thread serves was a data race).
    if (server) rendezvous::serveUntilAllLeft(*server, cmd.common().timeoutMs);
    if (info.rank == 0 && o.wrong > 0)
      throw Error(fmt::format("allreduce: {} wrong element(s) in the results (#wrong)", o.wrong));
    if (info.rank == 0 && !o.outlierSummary.empty()) {
      if (cmd.failOnOutlier) throw Error(o.outlierSummary);
      if (!cmd.quiet) std::cerr << "rdmabench: warning: " << o.outlierSummary << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::string msg = e.what();
    // Allocations the communicator does not name itself (its message buffer names its size).
    if (dynamic_cast<const std::bad_alloc*>(&e))
      msg = "out of memory (std::bad_alloc): an allocation failed (memory limit? `ulimit -v`)";
    // The text formats' `# error:` line, unless stderr says it on the same terminal (json and
    // csv keep their error member / column: it is part of the document).
    const bool textFormat = cmd.format != "json" && cmd.format != "csv";
    // A failure before the first row (a usage error such as --cpu 99, a device that does not
    // open) leaves an -o FILE as it was, as for lat / bw (docs/cli.md).
    const bool measured = reporter && reporter->rows() > 0;
    if (reporter && output->wantsErrorDocument(measured))
      reporter->abort(textFormat && oneTerminal && output->isStdout() ? "" : msg);
    if (output) output->finishAfterFailure(measured);  // the rows so far and the error, atomically
    // The other ranks relay it as "rank N on host H failed: MSG": without this rank's own
    // "rank N: " at its start (it said "rank 1 on host vm failed: rank 1: no progress ...").
    if (store) store->leave(false, launch::stripOwnRank(msg, info.rank));
    std::cout.flush();
    // After the teardown: a dead launcher is named, not lost. The line says "rank N on HOST"
    // already: a "rank N: " inside the message would keep identical errors from folding.
    msg = withLauncherDeath(launch::stripOwnRank(msg, info.rank));
    std::cerr << fmt::format("rdmabench: error: rank {} on {}: {}\n", info.rank, info.host, msg);
    // Rank 0 hosts the store: its error is out; now it serves a little longer, so ranks still
    // waiting on it learn which rank failed and why (and leave) instead of only seeing the store's
    // connection close, and ranks not started yet find the store and the reason instead of
    // "Connection refused" until their --timeout: until every rank came, up to --timeout after this
    // rank's start (at least 3 s: a rank that failed by timing out itself does not wait that long
    // again).
    if (server) {
      try {
        const int64_t ranForMs = (nowNs() - startNs) / 1'000'000;
        rendezvous::serveUntilRunComplete(
            *server, std::max<int64_t>(3000, cmd.common().timeoutMs - ranForMs));
      } catch (const std::exception&) {
        server->stop();  // the original error is the one to report
      }
    }
    return exitStatusFor(e);
  }
}

}  // namespace

int runCollectiveCommand(const std::string& test, const std::vector<std::string>& args,
                         const std::string& commandLine) {
  cli::CollCommand cmd = cli::parseCollectiveCommand(test, args);
  if (cmd.help) {
    std::cout << cmd.helpText;
    return 0;
  }
  cmd.common().commandLine = commandLine;
  oneTerminal = report::stdoutSharesStderrTerminal();
  launch::RankInfo info = launch::detect(cmd.launch, launch::processEnv());
  if (info.source == "pmix") launch::applyPmixIdentity(info, rendezvous::pmixInit());
  cli::requireWorld(test, cmd, info);
  // The rule of lat/bw: verbs where a device is usable, else socket, said in the header.
  if (!cmd.transportGiven) {
    cmd.common().transport = cli::defaultTransport(cmd.common().transportNote);
    cli::checkTransportOptions(cmd.transportOptions, cmd.common().transport,
                               &cmd.common().transportNote);
    // pairs' lat / bw options against the chosen transport (with -t: at parse time).
    if (test == "pairs") collective::validatePairsSpecs(cmd.pairsParams());
  }
  // Rank 0 writes the report and the plot after the measurement: a path it cannot write fails
  // now, before any rank starts (the launcher for --np, rank 0 itself otherwise).
  if (cmd.launch.np > 0 || info.rank == 0) {
    for (const std::string& note : cmd.notes)
      if (!cmd.quiet) std::cerr << "rdmabench: warning: " << note << "\n";
    // Ranks far beyond the CPUs (barrier --np 1000 on 2 CPUs): said before the long wait, but
    // after the refusal of a run that cannot start (one root cause, one line).
    const bool np = cmd.launch.np > 0;
    if (np)
      launch::ensureDescriptors(
          launch::storeServerDescriptors(static_cast<uint64_t>(cmd.launch.np)),
          fmt::format("--np {}", cmd.launch.np));
    const std::string crowded = cli::oversubscriptionWarning(
        np ? fmt::format("--np {}", cmd.launch.np)
           : fmt::format("{} ranks on this host", info.localRanks),
        np ? cmd.launch.np : info.localRanks,
        np ? allowedCpuCount() : static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN))),
        cmd.progress == transport::ProgressMode::kEvent,
        static_cast<double>(cmd.common().timeoutMs) / 1000);
    if (!crowded.empty() && !cmd.quiet) std::cerr << "rdmabench: warning: " << crowded << "\n";
    checkWritable(cmd.outputPath, "--output");
    checkWritable(cmd.plotPath, "--plot");
  }
  // The measurement clock of every timed loop, before any timed loop and before --np forks the
  // ranks (they inherit the calibration); a rank started by a launcher or by hand selects its
  // own here. The header reports rank 0's choice (collective/run_info.cc).
  selectMeasureClock(cmd.clock);
  if (cmd.launch.np > 0) {
    launch::LocalRunLimits limits;
    // A healthy rank leaves its last barrier within --timeout of the first one to exit.
    limits.afterFirstExitMs = cmd.common().timeoutMs + 2000;
    limits.handshakeMs = cmd.common().timeoutMs;
    loadTopologyOnce();  // once here, inherited by every forked rank (common/placement.h)
    return launch::runLocal(
        cmd.launch.np, info, [&](const launch::RankInfo& ri) { return runRank(cmd, ri); }, limits);
  }
  return runRank(cmd, info);
}

cli::OptionGroups rendezvousOptions() {
  const rendezvous::StoreLimits defaults;
  po::options_description desc(
      "Usage: rdmabench rendezvous [options]\n"
      "Standalone rendezvous store server (ranks use --rendezvous HOST:PORT "
      "--standalone-rendezvous).\nA run's keys are freed when all its ranks have left; its run id "
      "can then be used again.\n\nOptions");
  desc.add_options()("help,h", "show this help")("port,p", po::value<std::string>(),
                                                 "listen port (default 18516)")(
      "bind", po::value<std::string>(), "listen address (default: all)")(
      "run-id", po::value<std::string>(), "accept only this run (default: any, kept apart)")(
      "max-value", po::value<std::string>(),
      fmt::format("largest value a rank may store (default {}; K/M suffixes)",
                  formatSize(defaults.maxValueBytes))
          .c_str())("conn-quota", po::value<std::string>(),
                    fmt::format("bytes one connection may hold: its keys, values and buffers "
                                "(default {})",
                                formatSize(defaults.connQuotaBytes))
                        .c_str())("total-quota", po::value<std::string>(),
                                  fmt::format("bytes the whole store may hold (default {})",
                                              formatSize(defaults.totalQuotaBytes))
                                      .c_str())(
      "max-wait", po::value<std::string>(),
      "longest a get may wait for its key, seconds (default 3600)")(
      "idle-timeout", po::value<std::string>(),
      "close a joined connection silent for this long, seconds (default 0 = never; ranks are "
      "silent while they measure)")(
      "token", po::value<std::string>(),
      "require this access token in every rank's hello (default: $RDMABENCH_TOKEN, else under "
      "Slurm the job's secret; required otherwise: --token '' accepts anyone)")(
      "quiet", po::bool_switch(), "no log lines");
  return {desc};
}

int runRendezvousCommand(const std::vector<std::string>& args) {
  const cli::OptionGroups groups = rendezvousOptions();
  po::variables_map vm = cli::parseOptions("rendezvous", groups[0], {}, args);
  if (vm.count("help")) {
    std::cout << cli::renderHelp(groups);
    return 0;
  }
  uint16_t port = launch::kDefaultRendezvousPort;
  if (vm.count("port"))
    port =
        static_cast<uint16_t>(cli::parseUnsigned(vm["port"].as<std::string>(), "--port", 0, 65535));
  rendezvous::StoreLimits limits;
  auto size = [&](const char* name, uint64_t min, uint64_t max, size_t& out) {
    if (!vm.count(name)) return;
    std::string opt = std::string("--") + name;
    uint64_t v = parseSize(vm[name].as<std::string>(), opt);
    if (v < min || v > max)
      throw UsageError(fmt::format("{} {}: out of range {}..{}", opt, vm[name].as<std::string>(),
                                   formatSize(min), formatSize(max)));
    out = static_cast<size_t>(v);
  };
  // Values travel in one frame (<= 1 MiB with the key record).
  size("max-value", 1, rendezvous::kDefaultMaxFrameBytes - 4 - rendezvous::kMaxStoreKeyBytes,
       limits.maxValueBytes);
  size("conn-quota", 4096, uint64_t{1} << 40, limits.connQuotaBytes);
  size("total-quota", 4096, uint64_t{1} << 40, limits.totalQuotaBytes);
  if (vm.count("max-wait"))
    limits.maxGetWaitMs = static_cast<int64_t>(
        cli::parseSeconds(vm["max-wait"].as<std::string>(), "--max-wait", 0.1, 86400) * 1000);
  if (vm.count("idle-timeout"))
    limits.idleMs = static_cast<int64_t>(
        cli::parseSeconds(vm["idle-timeout"].as<std::string>(), "--idle-timeout", 0, 86400) * 1000);
  const std::optional<std::string> tokenOption =
      vm.count("token") ? std::optional<std::string>(vm["token"].as<std::string>()) : std::nullopt;
  const std::string token = resolveToken(tokenOption, true);
  // A tokenless store admits anyone who reaches the port (docs/rendezvous.md, "Access token"):
  // only on request.
  if (token.empty() && !tokenOption)
    throw UsageError(fmt::format(
        "--token: none given, and a store without one lets anyone who reaches the port join a "
        "run, read every rank's address and inject host names and results; set {} (the ranks "
        "need the same), start it inside the Slurm job (it then uses the job's secret), or give "
        "--token '' to accept anyone",
        kTokenEnvVar));
  rendezvous::TcpStoreServer server(vm.count("bind") ? vm["bind"].as<std::string>() : "", port,
                                    vm.count("run-id") ? vm["run-id"].as<std::string>() : "",
                                    limits, token);
  server.setVerbose(!vm["quiet"].as<bool>());
  if (!vm["quiet"].as<bool>())
    std::cerr << fmt::format("rdmabench rendezvous: listening on port {}\n", server.port());
  while (!interrupted())
    server.serve(100);
  return 0;
}

}  // namespace rdmabench
