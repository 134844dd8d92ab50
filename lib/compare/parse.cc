#include "compare/parse.h"

#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>

#include "common/error.h"
#include "compare/text_util.h"

namespace rdmabench::compare {

using detail::splitLines;
using detail::splitWhitespace;
using detail::trim;

const char* formatName(Format format) {
  switch (format) {
    case Format::kRdmabenchJson:
      return "rdmabench JSON";
    case Format::kOsu:
      return "OSU";
    case Format::kImb:
      return "IMB-MPI1";
    case Format::kPerftest:
      return "perftest";
    case Format::kUnknown:
      break;
  }
  return "unknown";
}

Format detectFormat(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return Format::kUnknown;
  if (text.substr(first, 3) == "\xEF\xBB\xBF") first += 3;  // UTF-8 BOM
  if (first < text.size() && text[first] == '{') return Format::kRdmabenchJson;
  bool osu = false, perftest = false;
  for (const std::string& raw : splitLines(text)) {
    std::string line = trim(raw);
    std::vector<std::string> tok = splitWhitespace(line);
    if (tok.empty()) continue;
    if (line.rfind("# Benchmarking ", 0) == 0 ||
        line.find("Intel(R) MPI Benchmarks") != line.npos ||
        (tok[0] == "#bytes" && tok.size() > 1 && tok[1] == "#repetitions") ||
        (tok[0] == "#repetitions" && tok.size() > 1 && tok[1].rfind("t_", 0) == 0))
      return Format::kImb;  // IMB is the most specific
    if (line.rfind("# OSU", 0) == 0 || line.rfind("# Size", 0) == 0 ||
        line.rfind("# Avg Latency(us)", 0) == 0)
      osu = true;
    if (tok[0] == "#bytes" &&
        (line.find("[usec]") != line.npos || line.find("BW average[") != line.npos))
      perftest = true;
  }
  if (osu) return Format::kOsu;
  if (perftest) return Format::kPerftest;
  return Format::kUnknown;
}

namespace {

std::string baseName(const std::string& path) {
  if (path == "-") return "stdin";
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void assignLabels(std::vector<Series>& series, const std::string& path) {
  const std::string base = baseName(path);
  for (Series& s : series)
    s.label = series.size() > 1 ? base + ":" + s.test : base;
  std::map<std::string, int> seen;
  for (const Series& s : series)
    ++seen[s.label];
  for (Series& s : series)
    if (seen[s.label] > 1 && s.processes) s.label += fmt::format("/np{}", *s.processes);
  std::map<std::string, int> count, index;
  for (const Series& s : series)
    ++count[s.label];
  for (Series& s : series)
    if (count[s.label] > 1) s.label += fmt::format("#{}", ++index[s.label]);
}

}  // namespace

std::vector<Series> parseText(std::string_view text, const std::string& path) {
  Format format = detectFormat(text);
  std::vector<Series> series;
  switch (format) {
    case Format::kRdmabenchJson:
      series = parseRdmabenchJson(text, path);
      break;
    case Format::kOsu:
      series = parseOsu(text, path);
      break;
    case Format::kImb:
      series = parseImb(text, path);
      break;
    case Format::kPerftest:
      series = parsePerftest(text, path);
      break;
    case Format::kUnknown:
      if (text.find("# rdmabench ") != std::string_view::npos)
        throw UsageError(fmt::format(
            "{}: rdmabench table output is not read back; rerun with --format json (or osu, "
            "imb, perftest)",
            path));
      throw UsageError(fmt::format(
          "{}: unknown format (expected rdmabench --format json, OSU, IMB-MPI1 or perftest "
          "output)",
          path));
  }
  std::erase_if(series, [](const Series& s) { return s.points.empty(); });
  if (series.empty())
    throw UsageError(
        fmt::format("{}: no result rows found in {} output", path, formatName(format)));
  for (Series& s : series)
    s.path = path;
  assignLabels(series, path);
  return series;
}

std::vector<Series> parseFile(const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw SystemError(fmt::format("open {}", path), errno);
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw SystemError(fmt::format("read {}", path), errno);
    text = ss.str();
  }
  return parseText(text, path);
}

}  // namespace rdmabench::compare
