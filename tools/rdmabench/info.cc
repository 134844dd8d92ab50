// `rdmabench info`: which transports are built and usable here, with devices, ports, GID
// tables and libfabric providers as each backend reports them.
#include <boost/program_options.hpp>

#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/help_gen.h"
#include "cli/options.h"
#include "collective/sharp/sharp.h"
#include "common/error.h"
#include "tools/rdmabench/commands.h"
#include "transport/probe.h"
#include "transport/transport.h"

namespace rdmabench {
namespace {

// Renders a backend's details JSON as indented "key: value" lines.
void printDetails(const nlohmann::json& j, int indent) {
  std::string pad(static_cast<size_t>(indent), ' ');
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it->is_structured()) {
        std::cout << pad << it.key() << ":\n";
        printDetails(*it, indent + 2);
      } else {
        std::cout << pad << it.key() << ": "
                  << (it->is_string() ? it->get<std::string>() : it->dump()) << "\n";
      }
    }
  } else if (j.is_array()) {
    for (const auto& e : j) {
      if (e.is_structured()) {
        std::cout << pad << "-\n";
        printDetails(e, indent + 2);
      } else {
        std::cout << pad << "- " << (e.is_string() ? e.get<std::string>() : e.dump()) << "\n";
      }
    }
  } else if (!j.is_null()) {
    std::cout << pad << j.dump() << "\n";
  }
}

}  // namespace

cli::OptionGroups infoOptions() {
  namespace po = boost::program_options;
  po::options_description desc(
      "Usage: rdmabench info [options]\n"
      "Lists every transport: built, usable here, and why not; devices, ports,\n"
      "GID tables (verbs) and providers/domains (libfabric); then the SHARP\n"
      "collective backend (library, caps_query facts, or why not usable); last, a\n"
      "summary: the usable transports and the one commands use without -t.\n\nOptions");
  desc.add_options()("help,h", "show this help")("format,f", po::value<std::string>(),
                                                 "table | json (default table)");
  return {desc};
}

int runInfoCommand(const std::vector<std::string>& args) {
  const cli::OptionGroups groups = infoOptions();
  const auto vm = cli::parseOptions("info", groups[0], {}, args);
  if (vm.count("help")) {
    std::cout << cli::renderHelp(groups);
    return 0;
  }
  bool json = false;
  if (vm.count("format")) {
    const std::string f = vm["format"].as<std::string>();
    if (f != "json" && f != "table")
      throw UsageError(fmt::format("--format {}: info supports table or json", f));
    json = f == "json";
  }
  nlohmann::json all = nlohmann::json::array();
  std::vector<std::string> usable, unusable, notBuilt;  // transports, for the summary
  for (const auto& name : transport::backendNames()) {
    transport::BackendStatus s = transport::probeBackend(name);
    (!s.built ? notBuilt : s.usable ? usable : unusable).push_back(s.name);
    if (json) {
      all.push_back({{"transport", s.name},
                     {"built", s.built},
                     {"usable", s.usable},
                     {"reason", s.reason},
                     {"details", s.details}});
      continue;
    }
    std::cout << fmt::format("{:<7} {:<10} {}\n", s.name,
                             !s.built ? "not built" : (s.usable ? "usable" : "unusable"), s.reason);
    if (!s.details.is_null() && !s.details.empty()) printDetails(s.details, 2);
  }
  // SHARP is a collective backend, not a transport: one line of its own.
  collective::sharp::Status sh = collective::sharp::probe();
  if (json) {
    all.push_back({{"collective", "sharp"},
                   {"built", sh.built},
                   {"usable", sh.usable},
                   {"reason", sh.reason},
                   {"details", sh.details}});
  } else {
    std::cout << fmt::format("{:<7} {:<10} {}\n", "sharp",
                             !sh.built ? "not built" : (sh.usable ? "usable" : "unusable"),
                             sh.reason);
    if (!sh.details.is_null() && !sh.details.empty()) printDetails(sh.details, 2);
  }
  // The summary: what a newcomer looks for first, after the details.
  std::string note;
  const std::string chosen = cli::defaultTransport(note);
  if (json) {
    all.push_back({{"summary",
                    {{"usable", usable},
                     {"unusable", unusable},
                     {"not_built", notBuilt},
                     {"default_transport", chosen},
                     {"default_note", note}}}});
    std::cout << all.dump(2) << "\n";
    return 0;
  }
  auto names = [](const std::vector<std::string>& v) {
    return v.empty() ? std::string("none") : fmt::format("{}", fmt::join(v, ", "));
  };
  std::cout << fmt::format("\nsummary: usable here: {}; unusable: {}; not built: {}\n",
                           names(usable), names(unusable), names(notBuilt));
  // defaultTransport's note reads "auto: CHOSEN (WHY)": the reason alone here.
  const std::string head = fmt::format("auto: {} (", chosen);
  std::string why = note;
  if (why.rfind(head, 0) == 0 && why.size() > head.size() && why.back() == ')')
    why = why.substr(head.size(), why.size() - head.size() - 1);
  std::cout << fmt::format("without -t, lat, bw and the collectives use {}: {}\n", chosen, why);
  return 0;
}

}  // namespace rdmabench
