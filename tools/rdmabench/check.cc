// `rdmabench check`: the node health gate (docs/check.md). Exit 0 healthy, 1 unhealthy (the
// first line is the drain reason), 2 usage, 3 could not run, 4 interrupted.
#include <iostream>

#include <fmt/format.h>

#include "check/history.h"
#include "check/options.h"
#include "check/report.h"
#include "check/run.h"
#include "common/error.h"
#include "common/measure_clock.h"
#include "common/output.h"
#include "tools/rdmabench/commands.h"

namespace rdmabench {

namespace {

constexpr int kCouldNotRun = 3;

void writeReport(const check::CheckCommand& cmd, const check::CheckResult& r) {
  ResultOutput output(cmd.outputPath);
  if (cmd.format == "json")
    output.stream() << check::toJson(r).dump(2) << "\n";
  else
    check::writeText(output.stream(), r);
  output.finish();
  // The drain reason where a caller reading the first line of stdout does not find it.
  const std::string reason = r.reasonLine();
  if (!reason.empty() && (cmd.format == "json" || !output.isStdout())) std::cerr << reason << "\n";
}

int couldNotRun(const check::CheckCommand& cmd, const std::string& message) {
  if (cmd.format == "json" && (cmd.outputPath.empty() || cmd.outputPath == "-"))
    std::cout << check::errorJson(message, kCouldNotRun).dump(2) << "\n";
  std::cout.flush();
  std::cerr << "rdmabench check: could not run: " << message << "\n";
  return kCouldNotRun;
}

}  // namespace

cli::OptionGroups checkOptions() {
  return check::parseCheckCommand({"--help"}).helpGroups;
}

int runCheckCommand(const std::vector<std::string>& args, const std::string& commandLine) {
  const check::CheckCommand cmd = check::parseCheckCommand(args);  // UsageError: exit 2
  if (cmd.help) {
    std::cout << cmd.helpText;
    return 0;
  }
  checkWritable(cmd.outputPath, "--output");
  selectMeasureClock("auto");  // before the measurement forks: both sides read the same clock
  check::CheckResult r;
  try {
    r = check::runCheck(cmd, commandLine);
  } catch (const UsageError&) {
    throw;
  } catch (const InterruptedError&) {
    throw;
  } catch (const std::exception& e) {
    return couldNotRun(cmd, e.what());
  }
  std::string recordError;
  if (!cmd.recordDir.empty()) {
    try {
      check::recordRun(cmd, r);
    } catch (const std::exception& e) {
      recordError = e.what();
    }
  }
  writeReport(cmd, r);
  if (!recordError.empty()) {
    std::cerr << "rdmabench check: could not record the run: " << recordError << "\n";
    return kCouldNotRun;
  }
  return r.healthy() ? 0 : 1;
}

}  // namespace rdmabench
