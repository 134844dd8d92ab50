#pragma once
// Command line of `rdmabench connect` (docs/connect.md, docs/cli.md), unit-tested
// (tests/unit/connect_test.cc). Every bad value is a one-line UsageError naming the option, the
// value and the limit (exit 2). Thread-safety: pure (the transport choice without -t probes the
// RDMA devices).

#include <string>
#include <vector>

#include "cli/help_gen.h"
#include "connect/connect.h"

namespace rdmabench::connect {

struct ConnectCommand {
  ConnectParams params;          // transport, device options, connections, timeout
  std::string transportNote;     // why the transport was chosen without -t ("" = -t given)
  std::string format = "table";  // -f table | json
  std::string outputPath;        // -o FILE
  bool help = false;
  std::string helpText;
  cli::OptionGroups helpGroups;
};

// `args` excludes the program and subcommand names. Without -t: verbs when a device has an
// active port, else socket; options the transport does not read are refused. UsageError for
// anything bad.
ConnectCommand parseConnectCommand(const std::vector<std::string>& args);

}  // namespace rdmabench::connect
