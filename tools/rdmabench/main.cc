// rdmabench: one binary, one server, every transport. See docs/cli.md.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/options.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/measure_clock.h"
#include "common/output.h"
#include "common/placement.h"
#include "engine/pair.h"
#include "report/ab_report.h"
#include "report/progress.h"
#include "report/report.h"
#include "tools/rdmabench/commands.h"

namespace rdmabench {
namespace {

constexpr const char* kUsage =
    "Usage: rdmabench <command> [options]   (rdmabench <command> --help for its options)\n"
    "\n"
    "Commands:\n"
    "  lat [HOST]     ping-pong latency against `rdmabench server` on HOST (loopback if none)\n"
    "  bw [HOST]      windowed bandwidth / message rate (uni- or bidirectional)\n"
    "  server         serve tests on control port 18515; clients choose everything\n"
    "  barrier        dissemination barrier across N ranks (--np, Slurm, mpirun, --rank)\n"
    "  allreduce      allreduce: tree, ring, recursive doubling, Rabenseifner or auto\n"
    "  ring           every rank ping-pongs with its neighbours; flags slow links and hosts\n"
    "  pairs          all-pairs fabric map: latency and bandwidth matrix, slow nodes and links\n"
    "  congestion     GPCNeT's congestion impact: victims' latency/bandwidth alone vs under "
    "incast\n"
    "  rendezvous     standalone rendezvous server for N-rank runs\n"
    "  compare FILE.. line up rdmabench / OSU / IMB / perftest results: MPI overhead per size\n"
    "  plot FILE..    latency or bandwidth vs size, PNG or SVG through gnuplot (-o OUT)\n"
    "  info           transports, devices, ports, GID tables and providers usable here\n"
    "  version        print the version\n"
    "\n"
    "Transports: socket (TCP), verbs (libibverbs RC QPs), ofi (libfabric, any provider).\n"
    "Example: rdmabench server   (node A);   rdmabench lat nodeA -t verbs -a   (node B)\n";

// Runs the same test once per variant (each against the same server, size by size) and prints
// one A/B document. A failing variant is reported in place; the exit status is then 1.
int runAbComparison(const cli::ClientCommand& cmd, std::ostream& out) {
  std::vector<report::RunCapture> runs;
  bool failed = false;
  for (const auto& v : cmd.variants) {
    engine::ClientOptions o = cmd.client;
    o.spec.transport = v.transport;
    o.localDevice.provider = v.provider;
    o.spec.serverDevice.provider = v.provider;
    report::RunCapture capture;
    capture.label = v.label;
    report::CaptureReporter reporter(capture);
    try {
      engine::runClient(o, reporter);
    } catch (const InterruptedError&) {
      throw;
    } catch (const std::exception& e) {
      capture.error = e.what();
      std::cerr << "rdmabench: error: " << v.label << ": " << e.what() << "\n";
      failed = true;
    }
    runs.push_back(std::move(capture));
  }
  report::printAb(out, cmd.output.format, runs);
  out.flush();
  return failed ? 1 : 0;
}

int runClientCommand(const std::string& test, const std::vector<std::string>& args,
                     const std::string& commandLine) {
  cli::ClientCommand cmd = cli::parseClientCommand(test, args);
  if (cmd.help) {
    std::cout << cmd.helpText;
    return 0;
  }
  const bool quiet = cmd.output.quiet;
  cmd.client.commandLine = commandLine;
  if (!cmd.transportGiven) {
    std::string note;
    bool verbsBuilt = true;
    cmd.client.spec.transport = cli::defaultTransport(note, &verbsBuilt);
    cmd.client.transportNote = note;
    // Built but unusable (no device here) is the normal laptop case and goes into the run
    // header only; a binary built without verbs is a packaging problem worth saying out loud.
    if (!verbsBuilt)
      std::cerr << "rdmabench: note: the verbs transport is not built into this binary "
                   "(libibverbs/librdmacm development files were missing at build time); "
                   "using -t socket\n";
  }
  // Before any timed loop (and before the loopback server forks: it inherits the choice).
  selectMeasureClock(cmd.clock);
  cmd.client.placeThread = [placement = cmd.placement](const std::string& device) {
    return applyPlacement(placement, device).toJson();
  };
  ResultOutput output(cmd.output.path);
  std::ostream* out = &output.stream();
  if (cmd.variants.size() > 1) {
    int rc = runAbComparison(cmd, *out);
    output.finish();
    return rc;
  }
  report::ReportOptions ro;
  ro.gigabits = cmd.output.gigabits;
  ro.full = cmd.output.full;
  auto reporter = report::makeReporter(cmd.output.format, *out, ro);
  // Progress line: only on a terminal, and not when JSON/CSV goes to stdout.
  const bool machine = cmd.output.format == "json" || cmd.output.format == "csv";
  report::ProgressLine progress(
      std::cerr, !quiet && report::stderrIsTerminal() && !(machine && output.isStdout()),
      cmd.client.spec.sizes);
  cmd.client.onSizeStart = [&](size_t i, size_t n, uint64_t b) { progress.sizeStart(i, n, b); };
  auto shown = report::withProgress(*reporter, progress);
  engine::runClient(cmd.client, *shown);
  output.finish();
  return 0;
}

int runServerCommand(const std::vector<std::string>& args) {
  cli::ServerCommand cmd = cli::parseServerCommand(args);
  if (cmd.help) {
    std::cout << cmd.helpText;
    return 0;
  }
  try {
    engine::runServer(cmd.server);
  } catch (const InterruptedError&) {
    // Ctrl-C / SIGTERM on a server is how it is stopped: a session in progress has already
    // been told and torn down; exit cleanly.
    std::cerr << fmt::format("rdmabench server: stopped ({})\n", interruptName());
  }
  return 0;
}

}  // namespace
}  // namespace rdmabench

int main(int argc, char** argv) {
  using namespace rdmabench;
  // First, before anything slow (probing devices, connecting): a Ctrl-C from here on is
  // handled (teardown, exit status 4) instead of killing the process.
  installInterruptHandlers();
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string commandLine;
  for (int i = 0; i < argc; ++i) {
    // Appended piecewise: `"" + std::string(...)` made GCC 12 at -O3 raise a -Wrestrict false
    // positive (memcpy "overlap" in the inlined operator+).
    if (i) commandLine += ' ';
    commandLine += argv[i];
  }
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "lat" || command == "bw") return runClientCommand(command, args, commandLine);
    if (command == "server") return runServerCommand(args);
    if (command == "info") return runInfoCommand(args);
    if (command == "compare") return runCompareCommand(args);
    if (command == "plot") return runPlotCommand(args);
    if (command == "barrier" || command == "allreduce" || command == "ring" || command == "pairs" ||
        command == "congestion")
      return runCollectiveCommand(command, args, commandLine);
    if (command == "rendezvous") return runRendezvousCommand(args);
    if (command == "version" || command == "--version") return runVersionCommand(args);
    throw UsageError(fmt::format(
        "unknown command '{}' (valid: lat, bw, server, barrier, allreduce, ring, pairs, "
        "congestion, rendezvous, compare, plot, info, version)",
        command));
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "rdmabench: error: " << e.what() << "\n";
    return exitCodeFor(e);
  }
}
