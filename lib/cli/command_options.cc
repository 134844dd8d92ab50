#include "cli/command_options.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/options.h"
#include "common/error.h"
#include "common/text_escape.h"

namespace rdmabench::cli {

namespace po = boost::program_options;

po::variables_map parseCommandOptions(const char* command, OptionGroups& groups,
                                      const std::vector<std::string>& args, HelpRequest& help) {
  po::options_description all;
  for (const auto& g : groups)
    all.add(g);
  po::variables_map vm = parseOptions(command, all, {}, args);
  if (vm.count("help")) {
    help.help = true;
    help.groups = std::move(groups);
    help.text = renderHelp(help.groups);
  }
  return vm;
}

std::string chooseTransport(const po::variables_map& vm, std::string& note) {
  const std::vector<TransportOption> given = givenTransportOptions(vm);
  if (!vm.count("transport")) {
    const std::string t = defaultTransport(note);
    checkTransportOptions(given, t, &note);
    return t;
  }
  const std::string t = vm["transport"].as<std::string>();
  if (t != "verbs" && t != "ofi" && t != "socket")
    throw UsageError(
        fmt::format("-t/--transport {}: unknown (valid: verbs, ofi, socket)", escapeForLog(t, 40)));
  checkTransportOptions(given, t, nullptr);
  return t;
}

void parseFormatAndOutput(const po::variables_map& vm, const char* command,
                          const std::vector<std::string>& valid, std::string& format,
                          std::string& outputPath) {
  const bool given = vm.count("format") > 0;
  if (given) format = vm["format"].as<std::string>();
  if (vm.count("output")) {
    outputPath = parseOutputPath(vm["output"].as<std::string>());
    const std::string picked = formatForOutput(given ? format : "", outputPath);
    if (!given && std::find(valid.begin(), valid.end(), picked) == valid.end())
      throw UsageError(
          fmt::format("-o/--output {}: {} writes {}, not {} (give -f, or another name)",
                      escapeForLog(outputPath, 80), command, fmt::join(valid, " or "), picked));
    if (given || picked != "table") format = picked;
  }
  if (std::find(valid.begin(), valid.end(), format) == valid.end())
    throw UsageError(fmt::format("--format {}: {} supports {}", escapeForLog(format, 40), command,
                                 fmt::join(valid, " or ")));
}

}  // namespace rdmabench::cli
