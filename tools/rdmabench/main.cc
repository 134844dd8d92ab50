// rdmabench: one binary, one server, every transport. See docs/cli.md.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/options.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "engine/pair.h"
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
    "  rendezvous     standalone rendezvous server for N-rank runs\n"
    "  info           transports, devices, ports, GID tables and providers usable here\n"
    "  version        print the version\n"
    "\n"
    "Transports: socket (TCP), verbs (libibverbs RC QPs), ofi (libfabric, any provider).\n"
    "Example: rdmabench server   (node A);   rdmabench lat nodeA -t verbs -a   (node B)\n";

int runClientCommand(const std::string& test, const std::vector<std::string>& args,
                     const std::string& commandLine) {
  cli::ClientCommand cmd = cli::parseClientCommand(test, args);
  if (cmd.help) {
    std::cout << cmd.helpText;
    return 0;
  }
  cmd.client.commandLine = commandLine;
  if (!cmd.transportGiven) {
    std::string note;
    cmd.client.spec.transport = cli::defaultTransport(note);
    cmd.client.transportNote = note;
  }
  std::ofstream file;
  std::ostream* out = &std::cout;
  if (!cmd.output.path.empty()) {
    file.open(cmd.output.path);
    if (!file)
      throw UsageError(fmt::format("--output {}: cannot open for writing", cmd.output.path));
    out = &file;
  }
  report::ReportOptions ro;
  ro.gigabits = cmd.output.gigabits;
  ro.full = cmd.output.full;
  auto reporter = report::makeReporter(cmd.output.format, *out, ro);
  engine::runClient(cmd.client, *reporter);
  out->flush();
  return 0;
}

int runServerCommand(const std::vector<std::string>& args) {
  cli::ServerCommand cmd = cli::parseServerCommand(args);
  if (cmd.help) {
    std::cout << cmd.helpText;
    return 0;
  }
  engine::runServer(cmd.server);
  return 0;
}

}  // namespace
}  // namespace rdmabench

int main(int argc, char** argv) {
  using namespace rdmabench;
  installInterruptHandlers();
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string commandLine;
  for (int i = 0; i < argc; ++i)
    commandLine += (i ? " " : "") + std::string(argv[i]);
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
    if (command == "barrier" || command == "allreduce" || command == "ring")
      return runCollectiveCommand(command, args, commandLine);
    if (command == "rendezvous") return runRendezvousCommand(args);
    if (command == "version" || command == "--version") {
      std::cout << "rdmabench " << RDMABENCH_VERSION << "\n";
      return 0;
    }
    throw UsageError(
        fmt::format("unknown command '{}' (valid: lat, bw, server, barrier, allreduce, ring, "
                    "rendezvous, info, version)",
                    command));
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "rdmabench: error: " << e.what() << "\n";
    return exitCodeFor(e);
  }
}
