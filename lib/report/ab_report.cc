#include "report/ab_report.h"

#include <cmath>
#include <limits>
#include <map>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "common/version.h"
#include "report/csv_writer.h"
#include "report/format_util.h"
#include "transport/info_json.h"
#include "transport/transport.h"

namespace rdmabench::report {
namespace {

bool isBandwidth(const std::vector<RunCapture>& runs) {
  return !runs.empty() && detail::testKind(runs.front().info) == detail::TestKind::kBandwidth;
}

// The headline figure of a row: median latency (us) or MB/s.
double headline(const Row& r, bool bandwidth) {
  if (bandwidth) return r.megabytesPerSec;
  return r.latency ? r.latency->median : 0.0;
}

// size -> per-variant headline (NaN when the variant has no row for that size).
std::map<uint64_t, std::vector<double>> table(const std::vector<RunCapture>& runs, bool bw) {
  std::set<uint64_t> sizes;
  for (const auto& run : runs)
    for (const auto& r : run.rows)
      sizes.insert(r.bytes);
  std::map<uint64_t, std::vector<double>> t;
  for (uint64_t s : sizes) {
    std::vector<double> v(runs.size(), std::numeric_limits<double>::quiet_NaN());
    for (size_t i = 0; i < runs.size(); ++i)
      for (const auto& r : runs[i].rows)
        if (r.bytes == s) v[i] = headline(r, bw);
    t[s] = v;
  }
  return t;
}

// The few facts that tell variants apart, e.g. "provider=tcp;ofi_rxm domain=lo eager <= 16384 B".
std::string summary(const nlohmann::json& local) {
  std::string s;
  for (const char* key : {"provider", "domain", "device", "interface", "link_layer"}) {
    if (!local.contains(key) || local[key].is_structured()) continue;
    const auto& v = local[key];
    s += fmt::format("{}{}={}", s.empty() ? "" : " ", key,
                     v.is_string() ? v.get<std::string>() : v.dump());
  }
  // The shared facts by their one typed name (transport::CommonProperties).
  if (std::string common = transport::readCommonProperties(local).summary(); !common.empty())
    s += (s.empty() ? "" : " ") + common;
  if (local.contains("protocol") && local["protocol"].is_object() &&
      local["protocol"].contains("summary") && local["protocol"]["summary"].is_string())
    s += "; " + local["protocol"]["summary"].get<std::string>();
  return s;
}

std::string cell(double v) {
  return std::isnan(v) ? "-" : fmt::format("{:.2f}", v);
}
std::string ratio(double v, double base) {
  return (std::isnan(v) || std::isnan(base) || base == 0) ? "-" : fmt::format("{:.3f}", v / base);
}

using AbTable = std::map<uint64_t, std::vector<double>>;

// JSON: every variant's run and rows, then the headline figures and ratios per size.
void abJson(std::ostream& out, const std::vector<RunCapture>& runs, const AbTable& t, bool bw,
            const std::string& error) {
  nlohmann::ordered_json doc;
  doc["tool"] = "rdmabench";
  doc["comparison"] = bw ? "bandwidth MB/s (10^6 B/s)" : "median one-way latency us";
  doc["baseline"] = runs.empty() ? "" : runs.front().label;
  nlohmann::ordered_json variants = nlohmann::ordered_json::array();
  for (const auto& run : runs) {
    nlohmann::ordered_json v;
    v["label"] = run.label;
    v["run"] = detail::runJson(run.info);
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& r : run.rows)
      rows.push_back(detail::rowJson(r));
    v["rows"] = rows;
    if (!run.error.empty()) v["error"] = run.error;
    variants.push_back(v);
  }
  doc["variants"] = variants;
  nlohmann::ordered_json ratios = nlohmann::ordered_json::array();
  for (const auto& [size, vals] : t) {
    nlohmann::ordered_json row;
    row["bytes"] = size;
    for (size_t i = 0; i < runs.size(); ++i) {
      row[runs[i].label] =
          std::isnan(vals[i]) ? nlohmann::ordered_json() : nlohmann::ordered_json(vals[i]);
      if (i > 0)
        row["ratio " + runs[i].label + " / " + runs[0].label] =
            (std::isnan(vals[i]) || std::isnan(vals[0]) || vals[0] == 0)
                ? nlohmann::ordered_json()
                : nlohmann::ordered_json(vals[i] / vals[0]);
    }
    ratios.push_back(row);
  }
  doc["by_size"] = ratios;
  if (!error.empty()) doc["error"] = error;
  out << detail::dumpJson(doc) << "\n";
}

// CSV: one line per size, the variants' headline figures, then the ratios to the first.
void abCsv(std::ostream& out, const std::vector<RunCapture>& runs, const AbTable& t,
           const std::string& metric, const std::string& errorLine) {
  std::vector<std::string> header{"bytes"};
  for (const auto& run : runs)
    header.push_back(run.label + " " + metric);
  for (size_t i = 1; i < runs.size(); ++i)
    header.push_back("ratio " + runs[i].label + "/" + runs[0].label);
  out << csvLine(header);  // quoted as every CSV of the tool (RFC 4180), labels are the user's
  for (const auto& [size, vals] : t) {
    out << size;
    for (double v : vals)
      out << "," << (std::isnan(v) ? "" : fmt::format("{:.4f}", v));
    for (size_t i = 1; i < vals.size(); ++i) {
      std::string r = ratio(vals[i], vals[0]);
      out << "," << (r == "-" ? "" : r);
    }
    out << "\n";
  }
  out << errorLine;
}

// Table: a header naming the variants, one line per size.
void abTable(std::ostream& out, const std::vector<RunCapture>& runs, const AbTable& t, bool bw) {
  const RunInfo& info = runs.front().info;
  out << fmt::format("# rdmabench {} A/B: {} {}, {} per size; ratio = variant / {}\n",
                     version::describe(detail::toolVersion(info), detail::gitDescribe(info)),
                     detail::testName(info), info.op,
                     bw ? "bandwidth MB/s (10^6 B/s)" : "median one-way latency t_typical (us)",
                     runs.front().label);
  for (const auto& run : runs) {
    out << fmt::format(
        "# {}: {}\n", run.label,
        run.error.empty() ? summary(transport::toJson(run.info.local)) : "FAILED: " + run.error);
  }
  size_t w = 14;
  for (const auto& run : runs)
    w = std::max(w, run.label.size() + 2);
  out << fmt::format("{:>11}", "#bytes");
  for (const auto& run : runs)
    out << fmt::format("{:>{}}", run.label, w);
  for (size_t i = 1; i < runs.size(); ++i)
    out << fmt::format("{:>{}}", "ratio " + std::to_string(i + 1) + "/1", 12);
  out << "\n";
  for (const auto& [size, vals] : t) {
    out << fmt::format("{:>11}", size);
    for (double v : vals)
      out << fmt::format("{:>{}}", cell(v), w);
    for (size_t i = 1; i < vals.size(); ++i)
      out << fmt::format("{:>12}", ratio(vals[i], vals[0]));
    out << "\n";
  }
}

}  // namespace

void printAb(std::ostream& out, const std::string& format, const std::vector<RunCapture>& runs,
             const std::string& error) {
  std::string errorLine;
  if (!error.empty()) {
    errorLine = "# error: " + error;
    for (char& c : errorLine)
      if (c == '\n' || c == '\r') c = ' ';
    errorLine += '\n';
  }
  const bool bw = isBandwidth(runs);
  const auto t = table(runs, bw);
  const std::string metric = bw ? "MB/s" : "t_typical[us]";
  if (format == "json") {
    abJson(out, runs, t, bw, error);
    return;
  }
  if (format == "csv") {
    abCsv(out, runs, t, metric, errorLine);
    return;
  }
  if (format != "table")
    throw UsageError(fmt::format("--format {}: A/B comparisons print table, json or csv", format));
  if (runs.empty()) return;
  abTable(out, runs, t, bw);
  out << errorLine;
}

}  // namespace rdmabench::report
