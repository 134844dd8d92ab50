#pragma once
// Command line of `rdmabench reg` (docs/reg.md, docs/cli.md), unit-tested
// (tests/unit/reg_test.cc). Every bad value is a one-line UsageError naming the option, the
// value and the limit (exit 2). Thread-safety: pure, except that the size limit reads
// /proc/meminfo.

#include <string>
#include <vector>

#include "cli/help_gen.h"
#include "reg/reg.h"
#include "transport/transport.h"

namespace rdmabench::reg {

struct RegCommand {
  RegParams params;
  std::string transport;            // -t; "" until chosen (cli::defaultTransport when not given)
  std::string transportNote;        // why the transport was chosen without -t
  transport::DeviceOptions device;  // -d, --ib-port, --provider
  // --mr-cache: leave libfabric's registration cache on. Off (default): FI_MR_CACHE_MAX_COUNT=0
  // unless the environment sets it, so every fi_mr_reg of the one buffer reaches the provider
  // instead of hitting the cache (measured on verbs;ofi_rxm: ~2 us at every size with it on).
  bool mrCache = false;
  std::string format = "table";  // -f table | json
  std::string outputPath;        // -o FILE
  bool help = false;
  std::string helpText;
  cli::OptionGroups helpGroups;
};

// `args` excludes the program and subcommand names. Chooses the transport when -t is absent
// (verbs with an active port, else socket) and refuses the options it does not read. The
// largest size may not exceed MemAvailable (/proc/meminfo). UsageError for anything bad.
RegCommand parseRegCommand(const std::vector<std::string>& args);

}  // namespace rdmabench::reg
