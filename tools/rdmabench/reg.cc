// `rdmabench reg`: the cost of memory registration (docs/reg.md). Exit 0, 2 usage, 3 could not
// run (the device or a registration refused; the rows measured before are still written).
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/host_info.h"
#include "common/output.h"
#include "common/version.h"
#include "reg/options.h"
#include "reg/reg.h"
#include "tools/rdmabench/commands.h"
#include "transport/info_json.h"
#include "transport/transport.h"

namespace rdmabench {

namespace {

using nlohmann::json;

constexpr int kCouldNotRun = 3;

json summaryJson(const stats::Summary& s) {
  return {{"t_min", s.min}, {"t_avg", s.mean}, {"t_max", s.max},
          {"p50", s.p50},   {"p99", s.p99},    {"stdev", s.stdev}};
}

struct Header {
  std::string transport, device, regCall, deregCall;
  reg::RegParams params;
  uint64_t pageBytes = 0;
  std::string commandLine, note;
  // The registration pins nothing (socket; a libfabric provider whose mr_mode asks for no
  // registration): reg_GB/s would be the rate of a bookkeeping call, not of memory becoming
  // registered, so it is not given.
  bool bookkeeping = false;
  std::string provider;         // ofi: the provider the domain was opened with
  std::optional<bool> mrCache;  // ofi: libfabric's MR cache on or off
  std::string mrCacheNote;
};

json toJson(const Header& h, const std::vector<reg::RegRow>& rows, const std::string& error) {
  json run = {{"test", "reg"},
              {"tool_version", version::release()},
              {"git_describe", version::gitDescribe()},
              {"date", isoDateUtc()},
              {"host", hostName()},
              {"command_line", h.commandLine},
              {"transport", h.transport},
              {"device", h.device},
              {"register_call", h.regCall},
              {"deregister_call", h.deregCall},
              {"pages", reg::toString(h.params.pages)},
              {"page_bytes", h.pageBytes},
              {"prefault", h.params.prefault},
              {"warmup", h.params.warmup}};
  if (!h.note.empty()) run["note"] = h.note;
  if (h.mrCache) run["mr_cache"] = *h.mrCache;
  if (!h.provider.empty()) run["provider"] = h.provider;
  json out = {{"run", run}, {"rows", json::array()}};
  for (const reg::RegRow& r : rows)
    out["rows"].push_back({{"bytes", r.bytes},
                           {"mapped_bytes", r.mappedBytes},
                           {"iterations", r.iterations},
                           {"reg_us", summaryJson(r.reg)},
                           {"dereg_us", summaryJson(r.dereg)},
                           {"reg_gb_per_s", h.bookkeeping ? json(nullptr) : json(r.regGBps)}});
  if (!error.empty()) out["error"] = error;
  return out;
}

void writeTable(std::ostream& o, const Header& h, const std::vector<reg::RegRow>& rows,
                const std::string& error) {
  o << fmt::format(
      "# rdmabench {} reg: memory registration cost, {} on {} ({})\n",
      version::describe(version::release(), version::gitDescribe()), h.transport, h.device,
      h.transport == "socket" ? "no registration call" : h.regCall + " / " + h.deregCall);
  o << fmt::format("# pages: {} ({} B), {}; {} untimed pair(s) first; host {}, {}\n",
                   reg::toString(h.params.pages), h.pageBytes,
                   h.params.prefault ? "touched before timing" : "not touched (faulted in)",
                   h.params.warmup, hostName(), isoDateUtc());
  if (!h.note.empty()) o << "# note: " << h.note << "\n";
  if (!h.mrCacheNote.empty()) o << "# " << h.mrCacheNote << "\n";
  o << fmt::format("{:>12} {:>10} {:>14} {:>14} {:>14} {:>16} {:>12}\n", "#bytes", "iterations",
                   "reg_t_min[us]", "reg_t_avg[us]", "reg_t_max[us]", "dereg_t_avg[us]",
                   "reg_GB/s");
  for (const reg::RegRow& r : rows)
    o << fmt::format("{:>12} {:>10} {:>14.2f} {:>14.2f} {:>14.2f} {:>16.2f} {:>12}\n", r.bytes,
                     r.iterations, r.reg.min, r.reg.mean, r.reg.max, r.dereg.mean,
                     h.bookkeeping ? "-" : fmt::format("{:.3f}", r.regGBps));
  if (!error.empty()) o << "# error: " << error << "\n";
}

}  // namespace

cli::OptionGroups regOptions() {
  return reg::parseRegCommand({"--help"}).helpGroups;
}

int runRegCommand(const std::vector<std::string>& args, const std::string& commandLine) {
  const reg::RegCommand cmd = reg::parseRegCommand(args);  // UsageError: exit 2
  if (cmd.help) {
    std::cout << cmd.helpText;
    return 0;
  }
  checkWritable(cmd.outputPath, "--output");
  Header h;
  h.transport = cmd.transport;
  h.params = cmd.params;
  h.pageBytes = reg::pageBytes(cmd.params.pages);
  h.commandLine = commandLine;
  std::tie(h.regCall, h.deregCall) = reg::timedCalls(cmd.transport);
  if (cmd.transport == "ofi") {
    // Before libfabric reads its environment (the first fi_getinfo, in openDevice).
    const char* set = std::getenv("FI_MR_CACHE_MAX_COUNT");
    if (!cmd.mrCache && set == nullptr) ::setenv("FI_MR_CACHE_MAX_COUNT", "0", 1);
    const char* now = std::getenv("FI_MR_CACHE_MAX_COUNT");
    h.mrCache = now == nullptr || std::string(now) != "0";
    h.mrCacheNote = set ? fmt::format("FI_MR_CACHE_MAX_COUNT={} from the environment", set)
                    : cmd.mrCache ? "libfabric's MR cache on (--mr-cache): a repeated registration "
                                    "of the one buffer may be a cache hit"
                                  : "libfabric's MR cache off (FI_MR_CACHE_MAX_COUNT=0): every "
                                    "fi_mr_reg reaches the provider";
  }
  std::vector<reg::RegRow> rows;
  std::string error;
  std::exception_ptr interrupted;
  h.device = cmd.device.device.empty() ? "(default device)" : cmd.device.device;  // until opened
  try {
    std::unique_ptr<transport::Device> device = transport::openDevice(cmd.transport, cmd.device);
    h.device = device->name();
    if (cmd.transport == "ofi")
      h.provider = transport::toJson(device->info()).value("provider", cmd.device.provider);
    if (cmd.transport == "socket") {
      h.bookkeeping = true;
      h.note = "socket: registration is bookkeeping only (no pinning, no device)";
    } else if (cmd.transport == "ofi") {
      const json facts = transport::toJson(device->info());
      const std::string mode = facts.value("mr_mode", std::string());
      if (mode == "none" || mode.empty()) {
        h.bookkeeping = true;
        h.note = fmt::format(
            "{}: mr_mode {}: the provider asks for no registration, so "
            "fi_mr_reg pins nothing (the call's cost only; no GB/s)",
            facts.value("provider", cmd.device.provider), mode.empty() ? "unknown" : mode);
      }
    }
    if (!cmd.transportNote.empty())
      h.note = cmd.transportNote + (h.note.empty() ? "" : "; " + h.note);
    reg::measureRegistration(*device, cmd.params, [&](const reg::RegRow& r) { rows.push_back(r); });
  } catch (const UsageError& e) {
    if (rows.empty()) throw;  // exit 2, nothing measured
    error = e.what();
  } catch (const InterruptedError& e) {
    // Ctrl-C keeps the sizes measured before it (exit 4 after writing them).
    if (rows.empty()) throw;
    interrupted = std::current_exception();
    error = e.what();
  } catch (const std::exception& e) {
    error = e.what();
  }
  // A run that measured nothing leaves an earlier -o file as it was (docs/cli.md).
  if (!rows.empty() || cmd.outputPath.empty() || cmd.outputPath == "-") {
    ResultOutput output(cmd.outputPath);
    if (cmd.format == "json")
      output.stream() << toJson(h, rows, error).dump(2) << "\n";
    else
      writeTable(output.stream(), h, rows, error);
    output.finish();
  }
  if (interrupted) std::rethrow_exception(interrupted);
  if (error.empty()) return 0;
  std::cerr << "rdmabench reg: could not run: " << error << "\n";
  return kCouldNotRun;
}

}  // namespace rdmabench
