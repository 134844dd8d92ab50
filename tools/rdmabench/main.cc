// rdmabench: one binary, one server, every transport. See docs/cli.md.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/coll_options.h"
#include "cli/help_gen.h"
#include "cli/loopback_progress.h"
#include "cli/options.h"
#include "cli/run_note.h"
#include "common/desched.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/measure_clock.h"
#include "common/output.h"
#include "common/placement.h"
#include "common/version.h"
#include "engine/pair.h"
#include "report/ab_report.h"
#include "report/progress.h"
#include "report/report.h"
#include "report/row_counter.h"
#include "tools/rdmabench/commands.h"

namespace rdmabench {
namespace {

constexpr const char* kUsageTail =
    "  help [CMD]     this list, or CMD's options (the same as rdmabench CMD --help)\n"
    "\n"
    "Transports: socket (TCP), verbs (libibverbs RC QPs), ofi (libfabric, any provider).\n"
    "Example: rdmabench server   (node A);   rdmabench lat nodeA -t verbs -a   (node B)\n";

std::string usageText() {
  return cli::renderUsage(commandDocs(), kUsageTail);
}

std::vector<std::string> commandNames() {
  std::vector<std::string> names;
  for (const auto& c : commandDocs())
    names.push_back(c.name);
  return names;
}

// `rdmabench help [CMD | --man | --markdown | --bash-completion]`. The three generators print
// what cmake/Docs.cmake installs and tools/gen-docs.sh splices into docs/cli.md.
int runHelpCommand(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cout << usageText();
    return 0;
  }
  if (args.size() > 1)
    throw UsageError(
        fmt::format("help: one command at most (got '{}' and '{}')", args[0], args[1]));
  const std::string& what = args[0];
  if (what == "--man") {
    std::cout << cli::renderMan(commandDocs(), version::release());
    return 0;
  }
  if (what == "--markdown") {
    std::cout << cli::renderMarkdown(commandDocs());
    return 0;
  }
  if (what == "--bash-completion") {
    std::cout << cli::renderBashCompletion(commandDocs());
    return 0;
  }
  for (const auto& c : commandDocs()) {
    if (c.name != what) continue;
    if (c.options)
      std::cout << cli::renderHelp(c.options());
    else
      std::cout << "Usage: rdmabench " << c.name << "\n" << c.summary << "\n";
    return 0;
  }
  throw UsageError(
      fmt::format("help: unknown command '{}'{}", what, cli::didYouMean(what, commandNames())));
}

// Runs the same test once per variant against the same server and prints one A/B document.
// Variants interleave per size (variant A size s, variant B size s, then the next size; one
// session each), so drift of the host or the fabric over the sweep does not enter the ratio. A
// variant that fails is reported in place and skips its later sizes; the exit status is then 1.
// Ctrl-C prints what was measured with the error, then exits 4.
// `oneStream`: the table goes to the terminal stderr shares, which then does not repeat what the
// table says (a variant's FAILED line, the `# error:` line of an interrupted run).
// `measured`: set when any variant reported a row (a document without one is a failure before
// measuring: an -o FILE keeps its previous result).
int runAbComparison(const cli::ClientCommand& cmd, std::ostream& out, bool oneStream,
                    bool& measured) {
  std::vector<report::RunCapture> runs;
  for (const auto& v : cmd.variants) {
    report::RunCapture capture;
    capture.label = v.label;
    // Known before any session: the title never comes out empty when every variant fails.
    capture.info.test = engine::reportTest(cmd.client.spec);
    capture.info.op = engine::toString(cmd.client.spec.op);
    capture.info.transport = v.transport;
    runs.push_back(std::move(capture));
  }
  std::vector<bool> begun(runs.size(), false);
  bool failed = false;
  try {
    for (uint64_t bytes : cmd.client.spec.sizes) {
      for (size_t i = 0; i < cmd.variants.size(); ++i) {
        report::RunCapture& run = runs[i];
        if (!run.error.empty()) continue;
        const cli::Variant& v = cmd.variants[i];
        engine::ClientOptions o = cmd.client;
        o.spec.transport = v.transport;
        o.spec.sizes = {bytes};
        o.localDevice.provider = v.provider;
        o.spec.serverDevice.provider = v.provider;
        report::RunCapture one;
        report::CaptureReporter reporter(one);
        try {
          o.spec.validate();  // this variant's transport: the command line checked the first's
          engine::runClient(o, reporter);
        } catch (const InterruptedError& e) {
          run.error = e.what();
          throw;
        } catch (const std::exception& e) {
          run.error = e.what();
          if (!oneStream) std::cerr << "rdmabench: error: " << v.label << ": " << e.what() << "\n";
          failed = true;
        }
        if (!begun[i] && !one.info.date.empty()) {
          run.info = one.info;
          begun[i] = true;
        }
        run.rows.insert(run.rows.end(), one.rows.begin(), one.rows.end());
        measured = measured || !one.rows.empty();
      }
    }
  } catch (const InterruptedError& e) {
    report::printAb(out, cmd.output.format, runs, oneStream ? "" : e.what());
    throw;
  }
  report::printAb(out, cmd.output.format, runs);
  out.flush();
  return failed ? 1 : 0;
}

// A usage error of lat / bw with -f json or -f csv to stdout: the error document (an empty run,
// the error member / column) on stdout as for a failed run, so a parser of stdout gets one.
void printUsageErrorDocument(const cli::OutputOptions& output, const std::string& message) {
  if (output.format != "json" && output.format != "csv") return;
  if (!output.path.empty() && output.path != "-") return;  // -o FILE: left untouched
  report::makeReporter(output.format, std::cout)->abort(message);
  std::cout.flush();
}

int runClientCommand(const std::string& test, const std::vector<std::string>& args,
                     const std::string& commandLine) {
  cli::ClientCommand cmd;
  try {
    cmd = cli::parseClientCommand(test, args);
  } catch (const cli::ClientUsageError& e) {
    printUsageErrorDocument(e.output, e.what());
    throw;
  }
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
    try {
      cli::checkAutoTransport(cmd, cmd.client.spec.transport, note);
    } catch (const UsageError& e) {
      printUsageErrorDocument(cmd.output, e.what());
      throw;
    }
    // Built but unusable (no device here) is the normal laptop case and goes into the run
    // header only; a binary built without verbs is a packaging problem worth saying out loud.
    if (!verbsBuilt)
      std::cerr << "rdmabench: note: the verbs transport is not built into this binary "
                   "(libibverbs/librdmacm development files were missing at build time); "
                   "using -t socket\n";
  }
  // Loopback: the client and its forked server both busy-poll; on one allowed CPU, or CPUs
  // other tasks keep busy, each would time the other's spinning (lat -s 8: ms instead of us).
  // Sleep on events or yield instead, and say so in the header (cli/loopback_progress.h).
  if (cmd.client.host.empty() && !cmd.progressGiven) {
    const int allowed = allowedCpuCount();
    const int online = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
    if (auto choice = cli::loopbackProgress(false, allowed, online,
                                            allowed >= 2 ? cli::otherRunnableTasks() : -1)) {
      cmd.client.localDevice.progress = cmd.client.spec.serverDevice.progress = choice->mode;
      cmd.client.progressNote = choice->note;
    }
  }
  // Before any timed loop (and before the loopback server forks: it inherits the choice).
  selectMeasureClock(cmd.clock);
  cmd.client.placeThread = [placement = cmd.placement](const std::string& device) {
    return applyPlacement(placement, device);
  };
  // A run that will move 100 GB or more says so first (cli/run_note.h), on stderr.
  if (const std::string note = cli::largeRunNote(cmd.client.spec, cmd.client.maxTimeSec);
      !quiet && !note.empty())
    std::cerr << note << '\n';
  ResultOutput output(cmd.output.path);
  std::ostream* out = &output.stream();
  if (cmd.variants.size() > 1) {
    int rc = 0;
    bool measured = false;
    try {
      rc = runAbComparison(
          cmd, *out,
          cmd.output.format == "table" && output.isStdout() && report::stdoutSharesStderrTerminal(),
          measured);
    } catch (const std::exception&) {
      output.finishAfterFailure(measured);  // the document printed with its error
      throw;
    }
    if (!measured) {
      output.finishAfterFailure(false);  // every variant failed before its first row
      return rc;
    }
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
  // A text report on the terminal that stderr shares ends without its `# error:` line: the
  // stderr line says it there (docs/cli.md); a file, a pipe, json and csv keep it.
  const bool oneStream = output.isStdout() && !machine && report::stdoutSharesStderrTerminal();
  auto shown = report::withProgress(*reporter, progress, oneStream);
  report::RowCounter counted(*shown);
  try {
    engine::runClient(cmd.client, counted);
  } catch (const std::exception& e) {
    // A complete document carrying the error: on stdout always; in a file only once a size was
    // measured, so a run that measured nothing (a refused connect, Ctrl-C or a dead server
    // during the first size) leaves a previous result in place.
    const bool measured = counted.rows() > 0;
    if (output.wantsErrorDocument(measured)) counted.abort(e.what());
    output.finishAfterFailure(measured);
    throw;
  }
  output.finish();
  return 0;
}

int runServerCommand(const std::vector<std::string>& args) {
  cli::ServerCommand cmd = cli::parseServerCommand(args);
  if (cmd.help) {
    std::cout << cmd.helpText;
    return 0;
  }
  // Before any session forks (they inherit it): bw's target times its interval on it.
  selectMeasureClock(cmd.clock);
  try {
    engine::runServer(cmd.server);
  } catch (const InterruptedError&) {
    // Ctrl-C / SIGTERM on a server is how it is stopped: a session in progress has already
    // been told and torn down; exit cleanly.
    std::cerr << fmt::format("rdmabench server: stopped ({})\n", interruptName());
  }
  return 0;
}

// The command's own function; its exit status.
int runCommand(const std::string& command, const std::vector<std::string>& args,
               const std::string& commandLine) {
  if (command == "lat" || command == "bw") return runClientCommand(command, args, commandLine);
  if (command == "server") return runServerCommand(args);
  if (command == "info") return runInfoCommand(args);
  if (command == "compare") return runCompareCommand(args);
  if (command == "plot") return runPlotCommand(args);
  if (command == "barrier" || command == "allreduce" || command == "ring" || command == "pairs" ||
      command == "congestion")
    return runCollectiveCommand(command, args, commandLine);
  if (command == "noise") return runNoiseCommand(args, commandLine);
  if (command == "check") return runCheckCommand(args, commandLine);
  if (command == "reg") return runRegCommand(args, commandLine);
  if (command == "connect") return runConnectCommand(args, commandLine);
  if (command == "rendezvous") return runRendezvousCommand(args);
  if (command == "help") return runHelpCommand(args);
  if (command == "version" || command == "--version" || command == "-V")
    return runVersionCommand(args);
  std::string hint = cli::didYouMean(command, commandNames());
  if (hint.empty()) hint = fmt::format(" (valid: {})", fmt::join(commandNames(), ", "));
  throw UsageError(fmt::format("unknown command '{}'{}", command, hint));
}

}  // namespace

std::vector<cli::CommandDoc> commandDocs() {
  auto client = [](const char* test) {
    return [test] { return cli::parseClientCommand(test, {"--help"}).helpGroups; };
  };
  auto coll = [](const char* test) {
    return [test] { return cli::parseCollectiveCommand(test, {"--help"}).helpGroups; };
  };
  return {
      {"lat", "[HOST]", "ping-pong latency against `rdmabench server` on HOST (loopback if none)",
       client("lat")},
      {"bw", "[HOST]", "windowed bandwidth / message rate (uni- or bidirectional)", client("bw")},
      {"server", "", "serve tests on control port 18515; clients choose everything",
       [] { return cli::parseServerCommand({"--help"}).helpGroups; }},
      {"barrier", "", "dissemination barrier across N ranks (--np, Slurm, mpirun, --rank)",
       coll("barrier")},
      {"allreduce", "", "allreduce: tree, ring, recursive doubling, Rabenseifner or auto",
       coll("allreduce")},
      {"ring", "", "every rank ping-pongs with its neighbours; flags slow links and hosts",
       coll("ring")},
      {"pairs", "", "all-pairs fabric map: latency and bandwidth matrix, slow nodes and links",
       coll("pairs")},
      {"congestion", "",
       "GPCNeT's congestion impact: victims' latency/bandwidth alone vs under incast",
       coll("congestion")},
      {"noise", "",
       "OS noise: detours per core and node, their sources, their cost to a collective",
       noiseOptions},
      {"check", "",
       "node health gate: ports, counters, loopback lat/bw, noise vs the node's baseline",
       checkOptions},
      {"connect", "", "connection setup rate, as cmtime: create, connect, first message, destroy",
       connectOptions},
      {"reg", "", "memory registration cost: ibv_reg_mr / fi_mr_reg per size, us and GB/s",
       regOptions},
      {"rendezvous", "", "standalone rendezvous server for N-rank runs", rendezvousOptions},
      {"compare", "FILE..",
       "line up rdmabench / OSU / IMB / perftest results: MPI overhead per size", compareOptions},
      {"plot", "FILE..", "latency or bandwidth vs size, PNG or SVG through gnuplot (-o OUT)",
       plotCommandOptions},
      {"info", "", "transports, devices, ports, GID tables and providers usable here", infoOptions},
      {"version", "", "print the version (also -V, --version, as perftest's -V)", nullptr},
  };
}

}  // namespace rdmabench

// Before any shared library's constructor (the executable's DT_PREINIT_ARRAY runs first): a
// Ctrl-C from exec on is handled by ours (common/interrupt.h captureStartSignals).
static void preinitSignals(int, char**, char**) {
  rdmabench::captureStartSignals();
}
__attribute__((section(".preinit_array"),
               used)) static void (*const kPreinit)(int, char**, char**) = preinitSignals;

int main(int argc, char** argv) {
  using namespace rdmabench;
  // First, before anything slow (probing devices, connecting): a Ctrl-C from here on is
  // handled (teardown, exit status 4) instead of killing the process.
  installInterruptHandlers();
  dropLibraryCrashHandlers();
  // A closed stdin/stdout/stderr (`rdmabench lat >&-`) would be reused by the first socket, and
  // the report written into the peer's connection: each closed one is held by /dev/null, opened
  // the wrong way round, so a report written there still fails with EBADF as on the closed
  // descriptor (a lost report is an error, not an exit 0).
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      const int held = ::open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
      if (held >= 0 && held != fd) ::close(held);  // not the lowest free one: leave it
    }
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string commandLine;
  for (int i = 0; i < argc; ++i) {
    // Appended piecewise: `"" + std::string(...)` made GCC 12 at -O3 raise a -Wrestrict false
    // positive (memcpy "overlap" in the inlined operator+).
    if (i) commandLine += ' ';
    commandLine += argv[i];
  }
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::cout << usageText();
    return args.empty() ? 2 : 0;
  }
  std::string command = args[0];
  args.erase(args.begin());
  // A lat / bw process, each server session, check's measurement and connect's two sides (one
  // peer each; reg opens the domain only, and is kept alike) talk to one peer, but ofi_rxm
  // sizes its core CQ for FI_UNIVERSE_SIZE peers (default 256): 256 x (128 + 128) entries exceed
  // soft-RoCE's max_cqe of 32767 and fi_enable fails (the README's `--compare
  // 'verbs,ofi:verbs;ofi_rxm'`). 64 peers fit every device; set before libfabric reads it, unless
  // the user set it.
  if (command == "lat" || command == "bw" || command == "server" || command == "check" ||
      command == "connect" || command == "reg")
    ::setenv("FI_UNIVERSE_SIZE", "64", 0);
  try {
    const int rc = runCommand(command, args, commandLine);
    // What went to std::cout (info, version, help; a report goes through ResultOutput, which
    // checks its own writes): EBADF, EPIPE, ENOSPC on it is a lost report.
    std::cout.flush();
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout) || std::cout.bad())
      throw SystemError("writing to stdout", errno != 0 ? errno : EIO);
    return rc;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "rdmabench: error: " << e.what() << "\n";
    return exitStatusFor(e);
  }
}
