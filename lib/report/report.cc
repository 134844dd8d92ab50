#include "report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "common/error.h"
#include "report/format_util.h"

namespace rdmabench::report {
namespace {

using Factory = std::unique_ptr<Reporter> (*)(std::ostream&, const ReportOptions&);

struct Format {
  const char* name;
  Factory make;
};

// Help order: the default first, then machine formats, then other tools' layouts.
constexpr Format kFormats[] = {
    {"table", detail::makeTableReporter}, {"json", detail::makeJsonReporter},
    {"csv", detail::makeCsvReporter},     {"perftest", detail::makePerftestReporter},
    {"osu", detail::makeOsuReporter},     {"imb", detail::makeImbReporter},
};

constexpr const char* kTestNames[] = {"lat",  "bw",    "barrier",   "allreduce",
                                      "ring", "pairs", "congestion"};

}  // namespace

const char* toString(Test test) {
  return kTestNames[static_cast<size_t>(test)];
}

std::optional<Test> testFromName(std::string_view name) {
  for (size_t i = 0; i < std::size(kTestNames); ++i)
    if (name == kTestNames[i]) return static_cast<Test>(i);
  return std::nullopt;
}

const std::vector<std::string>& formatNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Format& f : kFormats)
      v.emplace_back(f.name);
    return v;
  }();
  return names;
}

std::unique_ptr<Reporter> makeReporter(std::string_view format, std::ostream& out,
                                       const ReportOptions& options) {
  for (const Format& f : kFormats) {
    if (format == f.name) return f.make(out, options);
  }
  throw UsageError(fmt::format("--format: unknown format '{}' (valid: {})", format,
                               fmt::join(formatNames(), ", ")));
}

}  // namespace rdmabench::report
