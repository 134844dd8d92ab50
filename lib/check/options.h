#pragma once
// Command line of `rdmabench check` (docs/check.md, docs/cli.md), unit-tested
// (tests/unit/check_test.cc). Every bad value is a one-line UsageError naming the option, the
// value and the accepted range (exit 2). Thread-safety: pure.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "check/expect.h"
#include "check/rule.h"
#include "cli/help_gen.h"

namespace rdmabench::check {

inline constexpr double kMinBudgetSec = 5, kMaxBudgetSec = 3600, kDefaultBudgetSec = 45;
inline constexpr size_t kMaxMinRuns = 1000;

struct CheckCommand {
  double budgetSec = kDefaultBudgetSec;  // --budget
  std::vector<std::string> devices;      // -d/--device (repeatable); empty = every device
  std::vector<std::string> skip;         // --skip measure|noise|lat|bw|ofi (repeatable)
  // --provider (repeatable): the libfabric providers measured after verbs on each port, on the
  // domain named like the device; not present here = a note, not a failure.
  std::vector<std::string> providers{"verbs;ofi_rxm"};
  std::string recordDir;             // --record DIR
  std::string baselineDir;           // --baseline DIR
  RuleParams rule;                   // --mad-k, --margin, --min-runs
  size_t window = 30;                // --window: newest healthy runs the baseline uses
  std::vector<Expectation> expects;  // --expect (repeatable)
  // --counter-limit NAME=N (repeatable): the error counter NAME ("hw_counters/rcvd_seq_err") may
  // rise by up to N in the window before it fails; every other error counter: 0.
  std::map<std::string, uint64_t> counterLimits;
  // --peer HOST[:PORT]: measure each ACTIVE port against `rdmabench server` on HOST (the data
  // crosses the fabric, so the port counters see loss and the baseline sees the link) instead
  // of the loopback server; "" = loopback. peerPort: --port or HOST:PORT (default 18515).
  std::string peer;
  uint16_t peerPort = 18515;
  std::string token;             // --token / $RDMABENCH_TOKEN: the peer server's access token
  bool requireRdma = false;      // --require-rdma
  std::string node;              // --node (default: the host name)
  std::string format = "table";  // -f table | json
  std::string outputPath;        // -o FILE
  bool quiet = false;
  bool help = false;
  std::string helpText;
  cli::OptionGroups helpGroups;

  bool skips(const std::string& step) const;
};

// `args` excludes the program and subcommand names. UsageError for anything bad.
CheckCommand parseCheckCommand(const std::vector<std::string>& args);

}  // namespace rdmabench::check
