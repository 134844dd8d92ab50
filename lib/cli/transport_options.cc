// The options only some transports read (-d, -x, --ib-port, --provider, ...): which were given,
// and the refusal of those the chosen transport would silently ignore. Shared by lat / bw
// (client_options.cc) and the N-rank commands (coll_options.cc); declared in cli/options.h.
#include <boost/program_options.hpp>

#include <fmt/format.h>

#include "cli/options.h"
#include "common/error.h"
#include "common/text_escape.h"

namespace rdmabench::cli {

namespace po = boost::program_options;

namespace {

// The options some transport does not read: the name, its short letter (or 0) and the
// transports that read it. Given to another transport they would be silently ignored, so
// checkTransportOptions refuses them (`-t socket -d mlx5_0`, `--mtu 1024 -t ofi`).
struct TransportOnlyOption {
  const char* name;
  char letter;
  bool verbs, ofi;
};
constexpr TransportOnlyOption kTransportOnlyOptions[] = {
    {"device", 'd', true, true},  {"remote-device", 0, true, true},
    {"ib-port", 0, true, false},  {"gid-index", 'x', true, false},
    {"mtu", 0, true, false},      {"rdma-cm", 'R', true, false},
    {"provider", 0, false, true}, {"domain", 0, false, true},
    {"ep", 0, false, true},
};

}  // namespace

std::vector<TransportOption> givenTransportOptions(const po::variables_map& vm) {
  std::vector<TransportOption> given;
  for (const auto& o : kTransportOnlyOptions) {
    if (vm.count(o.name) == 0 || vm[o.name].defaulted()) continue;
    const auto& v = vm[o.name].value();
    std::string value;
    if (const auto* text = boost::any_cast<std::string>(&v)) value = " " + *text;
    if (const auto* list = boost::any_cast<std::vector<std::string>>(&v); list && !list->empty())
      value = " " + list->front();
    if (const auto* flag = boost::any_cast<bool>(&v); flag && !*flag) continue;
    std::string spelling =
        o.letter ? fmt::format("-{}/--{}", o.letter, o.name) : fmt::format("--{}", o.name);
    given.push_back({spelling + escapeForLog(value, 80), o.verbs, o.ofi});
  }
  return given;
}

void checkTransportOptions(const std::vector<TransportOption>& given, const std::string& transport,
                           const std::string* autoNote) {
  for (const auto& o : given) {
    if ((transport == "verbs" && o.verbs) || (transport == "ofi" && o.ofi)) continue;
    const std::string readers = o.verbs && o.ofi ? "-t verbs or -t ofi"
                                : o.verbs        ? "-t verbs"
                                                 : "-t ofi";
    if (autoNote == nullptr)
      throw UsageError(fmt::format("{}: only for {}; -t {} does not use it", o.spelling, readers,
                                   escapeForLog(transport, 40)));
    throw UsageError(fmt::format(
        "{}: only for {}, not for the transport chosen without -t ({}); give {} to measure with "
        "it, or drop the option",
        o.spelling, readers, autoNote->empty() ? transport : *autoNote,
        o.verbs ? "-t verbs" : "-t ofi"));
  }
}

void checkAutoTransport(const ClientCommand& cmd, const std::string& transport,
                        const std::string& note) {
  checkTransportOptions(cmd.transportOptions, transport, &note);
}

}  // namespace rdmabench::cli
