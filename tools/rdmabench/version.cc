// `rdmabench version` / `rdmabench --version` (docs/cli.md): release version, git describe,
// control-protocol version and the backends built in with their library versions.
#include <cctype>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collective/sharp/sharp.h"
#include "common/error.h"
#include "common/version.h"
#include "rendezvous/protocol.h"
#include "tools/rdmabench/commands.h"

#ifdef RDMABENCH_HAVE_PMIX
#include <pmix.h>
#endif

// Library versions pkg-config reported at configure time (CMakeLists.txt sets them on this
// file only): libibverbs has no call that returns its version.
#ifndef RDMABENCH_LIBIBVERBS_VERSION
#define RDMABENCH_LIBIBVERBS_VERSION "?"
#endif
#ifndef RDMABENCH_LIBRDMACM_VERSION
#define RDMABENCH_LIBRDMACM_VERSION "?"
#endif
#ifndef RDMABENCH_LIBFABRIC_BUILD_VERSION
#define RDMABENCH_LIBFABRIC_BUILD_VERSION "?"
#endif

namespace rdmabench {
namespace {

struct Backend {
  std::string name;
  bool built = false;
  std::string libraries;  // "libfabric 1.17 (fi_version(); built against 1.17.0)"
};

std::vector<Backend> backends() {
  std::vector<Backend> b;
  b.push_back({"socket", true, "kernel TCP (no library)"});
#ifdef RDMABENCH_HAVE_VERBS
  b.push_back({"verbs", true,
               fmt::format("libibverbs {}, librdmacm {} (pkg-config at build time)",
                           RDMABENCH_LIBIBVERBS_VERSION, RDMABENCH_LIBRDMACM_VERSION)});
#else
  b.push_back(
      {"verbs", false,
       "compiled out (RDMABENCH_WITH_VERBS=OFF, or no libibverbs/librdmacm at build time)"});
#endif
#ifdef RDMABENCH_HAVE_OFI
  // Not fi_version(): libfabric is opened when an ofi run needs it (its PSM libraries spend
  // 0.2 s calibrating at load; transport/ofi/ofi_library.h); `info` loads it and says.
  b.push_back({"ofi", true,
               fmt::format("libfabric (built against {}; opened at run time by ofi runs: "
                           "`rdmabench info` shows the version found)",
                           RDMABENCH_LIBFABRIC_BUILD_VERSION)});
#else
  b.push_back(
      {"ofi", false, "compiled out (RDMABENCH_WITH_OFI=OFF, or no libfabric at build time)"});
#endif
#ifdef RDMABENCH_HAVE_PMIX
  b.push_back({"pmix", true, fmt::format("{} (PMIx_Get_version())", PMIx_Get_version())});
#else
  b.push_back(
      {"pmix", false, "compiled out (RDMABENCH_WITH_PMIX=OFF, or no libpmix at build time)"});
#endif
  if (collective::sharp::built())
    b.push_back({"sharp", true, "libsharp_coll, loaded at run time (`rdmabench info` probes it)"});
  else
    b.push_back({"sharp", false, "stub (RDMABENCH_WITH_SHARP=OFF, or no SHARP SDK at build time)"});
  return b;
}

std::string upper(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

int runVersionCommand(const std::vector<std::string>& args) {
  bool json = false;
  for (size_t i = 0; i < args.size(); ++i) {
    // -f / --format like every other command: "-f json", "--format=json", "-fjson".
    std::string value;
    bool isFormat = false;
    if ((args[i] == "--format" || args[i] == "-f") && i + 1 < args.size()) {
      value = args[++i];
      isFormat = true;
    } else if (args[i].rfind("--format=", 0) == 0 ||
               (args[i].rfind("-f", 0) == 0 && args[i].size() > 2 && args[i][2] != '-')) {
      value = args[i].substr(args[i][1] == '-' ? 9 : 2);
      isFormat = true;
    }
    if (isFormat && (value == "json" || value == "text")) {
      json = value == "json";
      continue;
    }
    if (isFormat) throw UsageError(fmt::format("--format {}: unknown (valid: text, json)", value));
    if (args[i] == "-h" || args[i] == "--help") {
      std::cout << "Usage: rdmabench version [-f|--format text|json]\n"
                   "  release version, git describe of the build's checkout, control-protocol\n"
                   "  version, backends built in and their library versions\n";
      return 0;
    }
    throw UsageError(
        fmt::format("version: unknown argument '{}' (valid: -f|--format text|json)", args[i]));
  }
  const std::string git = version::gitDescribe();
  const std::vector<Backend> all = backends();
  if (json) {
    nlohmann::ordered_json doc;
    doc["tool"] = "rdmabench";
    doc["version"] = version::release();
    doc["git_describe"] = git.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(git);
    doc["protocol_version"] = rendezvous::kProtocolVersion;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Backend& b : all)
      list.push_back({{"name", b.name}, {"built", b.built}, {"libraries", b.libraries}});
    doc["backends"] = std::move(list);
    // The CMake options of the build, as the backends built in reveal them.
    nlohmann::ordered_json options = nlohmann::ordered_json::object();
    for (const Backend& b : all)
      if (b.name != "socket") options["RDMABENCH_WITH_" + upper(b.name)] = b.built ? "ON" : "OFF";
    doc["build_options"] = std::move(options);
    std::cout << doc.dump(2) << "\n";
    return 0;
  }
  // First line "rdmabench X.Y.Z": what help2man and scripts read.
  std::cout << "rdmabench " << version::release() << "\n";
  std::cout << "git describe: " << (git.empty() ? "(not built from a git checkout)" : git) << "\n";
  std::cout << "control protocol: " << rendezvous::kProtocolVersion << "\n";
  std::cout << "backends:\n";
  for (const Backend& b : all)
    std::cout << fmt::format("  {:<7} {:<10} {}\n", b.name, b.built ? "built" : "not built",
                             b.libraries);
  return 0;
}

}  // namespace rdmabench
