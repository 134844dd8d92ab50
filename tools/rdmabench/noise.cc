// `rdmabench noise`: OS noise per core, node and job, its sources, and its cost to a collective
// (docs/noise.md). Launch as the other N-rank commands (--np, Slurm, mpirun, PMIx); without a
// launcher and without --np, one rank per allowed CPU of this host.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "common/error.h"
#include "common/host_info.h"
#include "common/interrupt.h"
#include "common/measure_clock.h"
#include "common/output.h"
#include "common/placement.h"
#include "common/version.h"
#include "compare/plot.h"
#include "launch/fold.h"
#include "launch/launch.h"
#include "noise/options.h"
#include "noise/run.h"
#include "rendezvous/store.h"
#include "tools/rdmabench/commands.h"

namespace rdmabench {
namespace {

// The facts of this process a report carries (rank 0's).
void stampReport(noise::NoiseReport& report, const std::string& commandLine) {
  report.date = isoDateUtc();
  report.commandLine = commandLine;
  report.version = version::release();
  report.clock = measureClockFacts();
  if (!measureClockFacts().warning.empty())
    report.warnings.push_back("clock: " + measureClockFacts().warning);
}

// One rank, start to end: its exit status; prints its own one-line error.
int runNoiseProcess(const noise::NoiseCommand& cmd, launch::RankInfo info,
                    const std::string& commandLine, bool launched) {
  std::unique_ptr<rendezvous::TcpStoreServer> server;
  std::unique_ptr<rendezvous::Store> store;
  bool reported = false;
  std::optional<noise::NoiseReport> partial;  // rank 0, a failed gather: the ranks that reported
  try {
    info.ifname = cmd.ifname;
    store = launch::connectStore(info, cmd.timeoutMs, server);
    noise::NoiseRunOptions o;
    o.config = cmd.config;
    o.timeoutMs = cmd.timeoutMs;
    if (const char* root = std::getenv("RDMABENCH_NOISE_PROC_ROOT"); root && *root)
      o.procRoot = root;
    if (launched) o.ownPids.insert(static_cast<int>(getppid()));  // the --np launcher
    std::optional<noise::NoiseReport> report = noise::runNoiseRank(o, info, *store, &partial);
    std::vector<std::string> findings;
    if (report) {
      stampReport(*report, commandLine);
      ResultOutput output(cmd.outputPath);
      noise::writeNoise(output.stream(), cmd.format, *report);
      output.finish();
      reported = true;
      findings = noise::noiseFindings(*report);
    }
    store->leave(true, "");
    if (server) rendezvous::serveUntilAllLeft(*server, cmd.timeoutMs);
    if (report && !cmd.plotPath.empty()) {
      compare::PlotScript script;
      script.text = noise::noisePlotScript(*report, cmd.plotPath);
      compare::PlotOptions po;
      po.output = cmd.plotPath;
      compare::renderPlot(script, po);
    }
    if (!findings.empty()) {
      std::string summary = fmt::format("noise: {} outlier(s): {}", findings.size(), findings[0]);
      for (size_t i = 1; i < findings.size(); ++i)
        summary += "; " + findings[i];
      if (cmd.failOnOutlier) throw Error(summary);
      if (!cmd.quiet) std::cerr << "rdmabench: warning: " << summary << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::string msg = e.what();
    if (store) store->leave(false, msg);
    if (server) {
      try {
        rendezvous::serveUntilAllLeft(*server, std::min<int64_t>(cmd.timeoutMs, 3000));
      } catch (const std::exception&) {
        server->stop();
      }
    }
    msg = withLauncherDeath(launch::stripOwnRank(msg, info.rank));
    // Rank 0: the ranks that reported with the error, as the other commands write what they
    // measured (docs/cli.md, "Output files and failures"); with nothing measured, JSON on
    // stdout stays one valid document holding the error (a file keeps its previous content).
    if (info.rank == 0 && !reported && partial) {
      try {
        stampReport(*partial, commandLine);
        partial->error = msg;
        ResultOutput output(cmd.outputPath);
        noise::writeNoise(output.stream(), cmd.format, *partial);
        output.finishAfterFailure(true);  // the ranks that reported
      } catch (const std::exception& w) {
        std::cerr << "rdmabench: error: writing the report of the failed run: " << w.what() << "\n";
      }
    } else if (info.rank == 0 && !reported && cmd.format == "json" &&
               (cmd.outputPath.empty() || cmd.outputPath == "-")) {
      noise::writeNoiseError(std::cout, cmd.format, msg);
    }
    std::cout.flush();
    std::cerr << fmt::format("rdmabench: error: rank {} on {}: {}\n", info.rank, info.host, msg);
    return exitStatusFor(e);
  }
}

}  // namespace

cli::OptionGroups noiseOptions() {
  return noise::parseNoiseCommand({"--help"}).helpGroups;
}

int runNoiseCommand(const std::vector<std::string>& args, const std::string& commandLine) {
  noise::NoiseCommand cmd = noise::parseNoiseCommand(args);
  if (cmd.help) {
    std::cout << cmd.helpText;
    return 0;
  }
  launch::RankInfo info = launch::detect(cmd.launch, launch::processEnv());
  if (info.source == "pmix") launch::applyPmixIdentity(info, rendezvous::pmixInit());
  // No launcher and no --np: one rank per allowed CPU of this host.
  if (info.source == "single" && cmd.launch.np == 0 && !cmd.launch.worldSize)
    cmd.launch.np = static_cast<int>(std::max<size_t>(1, noise::allowedCpus().size()));
  if (cmd.launch.np > 0 || info.rank == 0) {
    checkWritable(cmd.outputPath, "--output");
    checkWritable(cmd.plotPath, "--plot");
  }
  if (!cmd.quiet && cmd.launch.np > static_cast<int>(noise::allowedCpus().size()))
    std::cerr << fmt::format(
        "rdmabench: warning: noise --np {} on {} allowed CPU(s): oversubscribed ranks measure "
        "each other\n",
        cmd.launch.np, noise::allowedCpus().size());
  // Before any rank forks: every rank reads the same calibrated clock.
  selectMeasureClock(cmd.clock);
  if (cmd.launch.np > 0) {
    launch::LocalRunLimits limits;
    limits.afterFirstExitMs = cmd.timeoutMs + 2000;
    limits.handshakeMs = cmd.timeoutMs;
    return launch::runLocal(
        cmd.launch.np, info,
        [&](const launch::RankInfo& ri) { return runNoiseProcess(cmd, ri, commandLine, true); },
        limits);
  }
  return runNoiseProcess(cmd, info, commandLine, false);
}

}  // namespace rdmabench
