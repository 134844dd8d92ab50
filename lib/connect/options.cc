#include "connect/options.h"

#include <boost/program_options.hpp>

#include <fmt/format.h>

#include "cli/command_options.h"
#include "cli/options.h"
#include "common/error.h"
#include "common/text_escape.h"

namespace rdmabench::connect {

namespace po = boost::program_options;

namespace {

cli::OptionGroups connectOptionGroups() {
  po::options_description general(
      "Usage: rdmabench connect [options]\nConnection setup rate, as rdma-core's cmtime: N "
      "connections created, connected, given a first message each way and destroyed, each step "
      "for all N before the next, timed per connection and in total (docs/connect.md). Both "
      "sides in this process, a thread each with its own device.\n\nMeasurement");
  general.add_options()("help,h", "show this help")(
      "transport,t", po::value<std::string>(),
      "verbs | ofi | socket (default: verbs when a device has an active port, else socket)")(
      "device,d", po::value<std::string>(), "RDMA device (verbs) or libfabric domain (ofi)")(
      "ib-port", po::value<std::string>(), "verbs port number (default 1)")(
      "gid-index,x", po::value<std::string>(), "verbs GID index (default: auto)")(
      "rdma-cm,R", po::bool_switch(), "verbs: connect through rdma_cm (needs --bind)")(
      "provider", po::value<std::string>(), "libfabric provider, e.g. verbs;ofi_rxm (ofi)")(
      "ep", po::value<std::string>(), "libfabric endpoint type rdm | msg (default rdm)")(
      "bind", po::value<std::string>(),
      "IP address both sides use (socket, rdma_cm; default 127.0.0.1)")(
      "connections,n", po::value<std::string>(),
      fmt::format("connections, 1..{} (default 100)", kMaxConnections).c_str())(
      "timeout", po::value<std::string>(),
      "seconds each connect and each first message may take, 0.1..3600 (default 30)");
  po::options_description output("Output");
  output.add_options()("format,f", po::value<std::string>(), "table | json (default table)")(
      "output,o", po::value<std::string>(), "write the report to FILE, atomically");
  return cli::OptionGroups{general, output};
}

}  // namespace

ConnectCommand parseConnectCommand(const std::vector<std::string>& args) {
  ConnectCommand cmd;
  po::variables_map vm = cli::parseCommandOptions("connect", connectOptionGroups(), args, cmd);
  if (cmd.help) return cmd;
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  ConnectParams& p = cmd.params;
  transport::DeviceOptions& d = p.device;
  if (vm.count("connections"))
    p.connections = cli::parseUnsigned(str("connections"), "-n/--connections", 1, kMaxConnections);
  if (vm.count("timeout"))
    p.timeoutMs =
        static_cast<int64_t>(cli::parseSeconds(str("timeout"), "--timeout", 0.1, 3600) * 1000);
  if (vm.count("device")) d.device = str("device");
  if (vm.count("ib-port"))
    d.ibPort = static_cast<int>(cli::parseUnsigned(str("ib-port"), "--ib-port", 1, 255));
  if (vm.count("gid-index"))
    d.gidIndex = static_cast<int>(cli::parseUnsigned(str("gid-index"), "--gid-index", 0, 65535));
  d.rdmaCm = vm["rdma-cm"].as<bool>();
  if (vm.count("provider")) d.provider = str("provider");
  if (vm.count("ep")) {
    d.endpointType = str("ep");
    if (d.endpointType != "rdm" && d.endpointType != "msg")
      throw UsageError(
          fmt::format("--ep {}: unknown (valid: rdm, msg)", escapeForLog(d.endpointType, 40)));
  }
  d.localHost = d.peerHost = vm.count("bind") ? str("bind") : "127.0.0.1";
  if (d.localHost.empty()) throw UsageError("--bind '': empty address");
  p.transport = cli::chooseTransport(vm, cmd.transportNote);
  if (d.rdmaCm && !vm.count("bind"))
    throw UsageError(
        "-R/--rdma-cm: needs --bind ADDR, the IP address of the RDMA device's netdev (rdma_cm "
        "resolves the device from it)");
  cli::parseFormatAndOutput(vm, "connect", {"table", "json"}, cmd.format, cmd.outputPath);
  return cmd;
}

}  // namespace rdmabench::connect
