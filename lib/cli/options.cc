#include "cli/options.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "cli/help_gen.h"
#include "common/error.h"
#include "common/text_escape.h"
#include "common/token.h"
#include "common/units.h"
#include "report/report.h"
#include "transport/probe.h"

namespace rdmabench::cli {

namespace po = boost::program_options;

uint64_t parseUnsigned(std::string_view text, std::string_view option, uint64_t min, uint64_t max) {
  uint64_t v = 0;
  bool digits = !text.empty(), overflow = false;
  for (char c : text) {
    if (c < '0' || c > '9') {
      digits = false;
      break;
    }
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) overflow = true;  // exact: UINT64_MAX itself parses
    if (!overflow) v = v * 10 + d;
  }
  if (!digits)
    throw UsageError(
        fmt::format("{} '{}': not a whole number (expected {}..{})", option, text, min, max));
  if (overflow || v < min || v > max)
    throw UsageError(fmt::format("{} {}: out of range {}..{}", option, text, min, max));
  return v;
}

double parseNumber(std::string_view text, std::string_view option, double min, double max,
                   std::string_view unit) {
  std::string s(text);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  const std::string range = fmt::format("{}..{}{}{}", min, max, unit.empty() ? "" : " ", unit);
  if (s.empty() || end != s.c_str() + s.size() || std::isnan(v))
    throw UsageError(fmt::format("{} '{}': not a number (expected {})", option, text, range));
  if (!(v >= min && v <= max))
    throw UsageError(fmt::format("{} {}: out of range {}", option, text, range));
  return v;
}

double parseSeconds(std::string_view text, std::string_view option, double min, double max) {
  return parseNumber(text, option, min, max, "seconds");
}

std::string parseOutputPath(const std::string& text, std::string_view option) {
  if (text.empty())
    throw UsageError(fmt::format("{} '': empty file name (omit {} to write to stdout, or give -)",
                                 option, option));
  return text;
}

void checkDistinctOutputs(const std::string& output, const std::string& plot) {
  if (output.empty() || plot.empty() || output == "-") return;
  std::error_code e1, e2;
  const auto a = std::filesystem::weakly_canonical(std::filesystem::absolute(output, e1), e1);
  const auto b = std::filesystem::weakly_canonical(std::filesystem::absolute(plot, e2), e2);
  if (output == plot || (!e1 && !e2 && a == b))
    throw UsageError(fmt::format(
        "--plot {} and --output {}: the same file (the plot would overwrite the report)", plot,
        output));
}

std::string formatForOutput(const std::string& given, const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = name.find_last_of('.');
  std::string suffix = dot == std::string::npos || dot == 0 ? "" : name.substr(dot + 1);
  for (char& c : suffix)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (path == "-" || (suffix != "json" && suffix != "csv")) return given.empty() ? "table" : given;
  if (given.empty() || given == suffix) return suffix;
  throw UsageError(fmt::format(
      "--format {} with --output {}: the file name says {}; give -f {}, or a name without "
      ".{}",
      given, escapeForLog(path, 200), suffix, suffix, name.substr(dot + 1)));
}

void checkFullFormat(bool full, const std::string& format) {
  if (full && format != "osu")
    throw UsageError(fmt::format(
        "--full: adds OSU's -f columns and applies only to --format osu (not --format {})",
        format));
}

po::variables_map parseOptions(const std::string& command, const po::options_description& desc,
                               const po::positional_options_description& pos,
                               const std::vector<std::string>& args) {
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    // Suggest the nearest spelling (docs/cli.md, "Typos"); hidden positionals never.
    const std::string name = e.get_option_name();
    const std::string hint = didYouMean(name, optionSpellings({desc}));
    throw UsageError(
        fmt::format("unknown option '{}' for '{}'{}", name, command,
                    hint.empty() ? fmt::format(" (see `rdmabench {} --help`)", command) : hint));
  } catch (const po::error& e) {
    throw UsageError(fmt::format("{}: {} (see `rdmabench {} --help`)", command, e.what(), command));
  }
  return vm;
}

void splitHostPort(std::string& host, uint16_t& port, bool portGiven) {
  const std::string given = host;
  std::string portText;
  bool hasPort = false;
  if (!host.empty() && host[0] == '[') {  // [V6] or [V6]:PORT
    const size_t close = host.find(']');
    const std::string rest = close == std::string::npos ? "?" : host.substr(close + 1);
    if (close == std::string::npos || (!rest.empty() && rest[0] != ':'))
      throw UsageError(fmt::format(
          "HOST '{}': expected [IPV6] or [IPV6]:PORT (or give the port with -p PORT)", given));
    hasPort = !rest.empty();
    portText = hasPort ? rest.substr(1) : "";
    host = host.substr(1, close - 1);
  } else if (std::count(host.begin(), host.end(), ':') == 1) {  // HOST:PORT (not a bare IPv6)
    const size_t colon = host.find(':');
    hasPort = true;
    portText = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  if (!hasPort) return;
  uint16_t p = 0;
  try {
    p = static_cast<uint16_t>(parseUnsigned(portText, "port", 1, 65535));
  } catch (const UsageError&) {
    throw UsageError(
        fmt::format("HOST '{}': '{}' is not a port number (1..65535); give the port with -p PORT",
                    given, portText));
  }
  if (host.empty()) throw UsageError(fmt::format("HOST '{}': no host before the port", given));
  if (portGiven && p != port)
    throw UsageError(
        fmt::format("HOST '{}' names port {} and -p names {}: give only one", given, p, port));
  port = p;
}

std::vector<uint64_t> parseSizeList(std::string_view text, std::string_view option, uint64_t limit,
                                    std::string_view limitText) {
  std::vector<uint64_t> sizes;
  for (size_t start = 0;;) {
    size_t comma = text.find(',', start);
    const std::string item(text.substr(start, comma - start));
    sizes.push_back(parseSize(item, option));
    if (sizes.back() > limit)
      throw UsageError(fmt::format("{} {}: larger than the limit of {} bytes ({})", option,
                                   escapeForLog(item, 40), limit, limitText));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return sizes;
}

std::optional<transport::ProgressMode> parseUseEvent(const po::variables_map& vm,
                                                     std::string* host) {
  if (!vm.count("use-event")) return std::nullopt;
  const std::string v = vm["use-event"].as<std::string>();
  if (v == "on") return transport::ProgressMode::kEvent;
  if (v == "off") return transport::ProgressMode::kBusyPoll;
  if (v == "yield") return transport::ProgressMode::kYield;
  // `lat -e nodeA`: Boost hands the word after a bare -e to it; it is the HOST.
  if (host != nullptr && host->empty()) {
    *host = v;
    return transport::ProgressMode::kEvent;
  }
  throw UsageError(fmt::format("--use-event {}: must be on, off or yield (a bare -e means on)", v));
}

std::vector<Variant> parseCompareList(std::string_view text) {
  std::vector<Variant> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item(
        text.substr(start, comma == std::string_view::npos ? text.npos : comma - start));
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    Variant v;
    size_t colon = item.find(':');
    v.transport = item.substr(0, colon);
    if (colon != std::string::npos) v.provider = item.substr(colon + 1);
    const auto& names = transport::backendNames();
    if (std::find(names.begin(), names.end(), v.transport) == names.end())
      throw UsageError(
          fmt::format("--compare: unknown transport '{}' in '{}' (valid: socket, "
                      "verbs, ofi[:provider])",
                      v.transport, text));
    if (!v.provider.empty() && v.transport != "ofi")
      throw UsageError(
          fmt::format("--compare: '{}': only ofi takes a provider (ofi:PROVIDER)", item));
    if (colon != std::string::npos && v.provider.empty())
      throw UsageError(fmt::format("--compare: '{}': empty provider after ':'", item));
    v.label = item;
    out.push_back(v);
  }
  if (out.size() < 2)
    throw UsageError(
        fmt::format("--compare {}: needs at least two comma-separated variants", text));
  return out;
}

std::string defaultTransport(std::string& note, bool* verbsBuilt) {
  transport::BackendStatus verbs = transport::probeBackend("verbs");
  if (verbsBuilt) *verbsBuilt = verbs.built;
  if (verbs.usable) {
    note = "auto: verbs (an RDMA device with an active port is present)";
    return "verbs";
  }
  note = fmt::format("auto: socket (verbs not usable: {})", verbs.reason);
  return "socket";
}

}  // namespace rdmabench::cli
