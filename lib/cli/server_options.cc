// `rdmabench server`: its option descriptions and their parse into a ServerCommand.
#include <boost/program_options.hpp>

#include <optional>

#include <fmt/format.h>

#include "cli/help_gen.h"
#include "cli/options.h"
#include "common/error.h"
#include "common/measure_clock.h"
#include "common/token.h"
#include "common/units.h"

namespace rdmabench::cli {

namespace po = boost::program_options;

ServerCommand parseServerCommand(const std::vector<std::string>& args) {
  ServerCommand cmd;
  po::options_description desc(
      "Usage: rdmabench server [options]\n"
      "Serves lat / bw tests one after another; clients choose everything.\n\nOptions");
  desc.add_options()("help,h", "show this help")("port,p", po::value<std::string>(),
                                                 "control port, 0 = ephemeral (default 18515)")(
      "bind", po::value<std::string>(), "listen address (default: all)")(
      "once", po::bool_switch(),
      "exit after one test: the first client whose test starts; connections that end "
      "before (port probes, a hello and a hang-up, a malformed request) do not count")(
      "max-bytes", po::value<std::string>(),
      "largest buffer memory a client may make the "
      "server allocate (default 1G)")("quiet", po::bool_switch(),
                                      "no per-session log lines on stderr")(
      "token", po::value<std::string>(),
      "require this access token in every client's hello (default: $RDMABENCH_TOKEN; none = "
      "anyone who reaches the port may run tests)")(
      "max-timeout", po::value<std::string>(),
      "cap on the --timeout a client may ask for, seconds (default 60)")(
      "max-connections", po::value<std::string>(),
      "sessions admitted at once (hello passed); more are told \"server busy\"; "
      "connections before their hello have their own budget (default 64)")(
      "clock", po::value<std::string>(),
      "measurement clock of the server's side of bw (peer_BW) auto | tsc | monotonic (default "
      "auto: the TSC when invariant)");
  po::positional_options_description pos;
  po::variables_map vm = parseOptions("server", desc, pos, args);
  if (vm.count("help")) {
    cmd.help = true;
    cmd.helpGroups = OptionGroups{desc};
    cmd.helpText = renderHelp(cmd.helpGroups);
    return cmd;
  }
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  if (vm.count("port"))
    cmd.server.port = static_cast<uint16_t>(parseUnsigned(str("port"), "--port", 0, 65535));
  if (vm.count("bind")) cmd.server.bind = str("bind");
  cmd.server.once = vm["once"].as<bool>();
  if (vm.count("max-bytes")) {
    cmd.server.maxBytes = parseSize(str("max-bytes"), "--max-bytes");
    if (cmd.server.maxBytes < 4096)
      throw UsageError(
          fmt::format("--max-bytes {}: below the minimum of 4096 bytes", cmd.server.maxBytes));
  }
  cmd.server.verbose = !vm["quiet"].as<bool>();
  cmd.server.token = resolveToken(
      vm.count("token") ? std::optional<std::string>(str("token")) : std::nullopt, false);
  if (vm.count("max-timeout"))
    cmd.server.maxTimeoutMs =
        static_cast<int64_t>(parseSeconds(str("max-timeout"), "--max-timeout", 0.1, 3600) * 1000);
  if (vm.count("max-connections"))
    cmd.server.maxConnections =
        static_cast<uint32_t>(parseUnsigned(str("max-connections"), "--max-connections", 1, 4096));
  if (vm.count("clock")) {
    cmd.clock = str("clock");
    checkClockChoice(cmd.clock);
  }
  return cmd;
}

}  // namespace rdmabench::cli
