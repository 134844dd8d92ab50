// `rdmabench connect`: the connection setup rate (docs/connect.md), cmtime's steps. Exit 0, 2
// usage, 3 could not run (a step failed or timed out: one line naming the step, the connection
// and the side), 4 interrupted.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/host_info.h"
#include "common/output.h"
#include "common/version.h"
#include "connect/connect.h"
#include "connect/options.h"
#include "tools/rdmabench/commands.h"

namespace rdmabench {

namespace {

using nlohmann::json;

json toJson(const connect::ConnectCommand& cmd, const connect::ConnectResult& r,
            const std::string& commandLine) {
  const connect::ConnectParams& p = cmd.params;
  json run = {{"test", "connect"},
              {"tool_version", version::release()},
              {"git_describe", version::gitDescribe()},
              {"date", isoDateUtc()},
              {"host", hostName()},
              {"command_line", commandLine},
              {"transport", p.transport},
              {"device", r.device},
              {"method", connect::connectMethod(p.transport, p.device)},
              {"connections", r.connections},
              {"timeout_s", static_cast<double>(p.timeoutMs) / 1e3}};
  if (!cmd.transportNote.empty()) run["note"] = cmd.transportNote;
  json steps = json::array();
  for (const connect::StepFigures& s : r.steps)
    steps.push_back({{"step", s.name},
                     {"total_ms", s.totalMs},
                     {"min_us", s.perConnection.min},
                     {"avg_us", s.perConnection.mean},
                     {"p50_us", s.perConnection.p50},
                     {"p99_us", s.perConnection.p99},
                     {"max_us", s.perConnection.max}});
  return {{"run", run}, {"steps", steps}, {"setup_per_s", r.setupPerSec()}};
}

// cmtime's columns: step, total ms, max ms, min us, us / conn.
void writeTable(std::ostream& o, const connect::ConnectCommand& cmd,
                const connect::ConnectResult& r) {
  const connect::ConnectParams& p = cmd.params;
  o << fmt::format("# rdmabench {} connect: {} connections, {} on {}, both sides in this process\n",
                   version::describe(version::release(), version::gitDescribe()), r.connections,
                   p.transport, r.device);
  o << "# method: " << connect::connectMethod(p.transport, p.device) << "\n";
  if (!cmd.transportNote.empty()) o << "# note: " << cmd.transportNote << "\n";
  o << fmt::format("{:<14} {:>12} {:>10} {:>10} {:>12}\n", "step", "total ms", "max ms", "min us",
                   "us / conn");
  for (const connect::StepFigures& s : r.steps)
    o << fmt::format("{:<14} {:>12.2f} {:>10.2f} {:>10.2f} {:>12.2f}\n", s.name, s.totalMs,
                     s.perConnection.max / 1e3, s.perConnection.min,
                     s.totalMs * 1e3 / static_cast<double>(r.connections));
  o << fmt::format("# setup rate (create + connect): {:.0f} connections/s\n", r.setupPerSec());
}

}  // namespace

cli::OptionGroups connectOptions() {
  return connect::parseConnectCommand({"--help"}).helpGroups;
}

int runConnectCommand(const std::vector<std::string>& args, const std::string& commandLine) {
  const connect::ConnectCommand cmd = connect::parseConnectCommand(args);  // UsageError: exit 2
  if (cmd.help) {
    std::cout << cmd.helpText;
    return 0;
  }
  checkWritable(cmd.outputPath, "--output");
  connect::ConnectResult r;
  try {
    r = connect::measureConnections(cmd.params);
  } catch (const UsageError&) {
    throw;
  } catch (const InterruptedError&) {
    throw;
  } catch (const std::exception& e) {
    std::cerr << "rdmabench connect: could not run: " << e.what() << "\n";
    return 3;
  }
  ResultOutput output(cmd.outputPath);
  if (cmd.format == "json")
    output.stream() << toJson(cmd, r, commandLine).dump(2) << "\n";
  else
    writeTable(output.stream(), cmd, r);
  output.finish();
  return 0;
}

}  // namespace rdmabench
