#include "collective/congestion_report.h"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/text_escape.h"
#include "report/csv_writer.h"
#include "report/format_util.h"
#include "report/report.h"

namespace rdmabench::collective {

namespace {

using nlohmann::ordered_json;

ordered_json numberOrNull(double v) {
  return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr);
}

std::string rankList(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i == 16 && v.size() > 18) return s + fmt::format(", ... ({} in all)", v.size());
    s += (i ? ", " : "") + std::to_string(v[i]);
  }
  return s;
}

std::string nodeOf(const CongestionResult& r, int rank) {
  return rank >= 0 && rank < static_cast<int>(r.nodes.size()) ? r.nodes[rank] : "?";
}

}  // namespace

double congestionFigure(const CongestionMetric& m, double timeUs) {
  if (!m.bandwidth) return timeUs;
  if (!(timeUs > 0)) return std::nan("");
  return static_cast<double>(m.bytesPerIteration) / timeUs;  // B/us = MB/s
}

namespace {

void writeCongestionTable(std::ostream& out, const CongestionResult& r) {
  const CongestionPlan& pl = r.plan;
  // The shared header block, with this command's title and units.
  out << report::detail::tableHeaderBlock(
      r.info, "victims' random ring alone vs under aggressor traffic (GPCNeT)",
      "latency in microseconds, bandwidth in MB/s = 10^6 B/s; p50 / p99 = nearest-rank "
      "percentiles over every victim's iterations");
  out << fmt::format(
      "# congestion (GPCNeT's impact factor): {} ranks: {} victims, {} aggressors "
      "(victims = ceil({} x ranks), seed {})\n",
      r.ranks, pl.victims.size(), pl.aggressors.size(), r.victimFraction, r.seed);
  out << fmt::format("# victims: ranks {}; random ring: {}\n", rankList(pl.victims),
                     rankList(pl.ring));
  if (r.pattern == CongestionPattern::kIncast)
    out << fmt::format("# aggressors: incast into rank {} on {}: {} stream{} of {} x {} B\n",
                       pl.incastTarget, nodeOf(r, pl.incastTarget), r.aggStreams,
                       r.aggStreams == 1 ? "" : "s", r.aggWindow, r.aggBytes);
  else
    out << fmt::format("# aggressors: alltoall, {} stream{} of {} x {} B\n", r.aggStreams,
                       r.aggStreams == 1 ? "" : "s", r.aggWindow, r.aggBytes);
  out << fmt::format(
      "# aggressor load under congestion: {:.1f} MB/s in all; isolated phase {:.2f} s, "
      "congested phase {:.2f} s\n"
      "# p50 / p99 over every victim's iterations; impact = congested / isolated time "
      "(bandwidth: isolated / congested MB/s; > 1 = worse)\n",
      r.aggMBs, r.isolatedSeconds, r.congestedSeconds);
  out << fmt::format("{:<32} {:>6} {:>11} {:>11} {:>11} {:>11} {:>10} {:>10}\n", "metric", "unit",
                     "iso_p50", "iso_p99", "cong_p50", "cong_p99", "impact_p50", "impact_p99");
  for (const CongestionMetric& m : r.metrics)
    out << fmt::format("{:<32} {:>6} {:>11.2f} {:>11.2f} {:>11.2f} {:>11.2f} {:>10.2f} {:>10.2f}\n",
                       m.name, m.bandwidth ? "MB/s" : "us", congestionFigure(m, m.isoP50Us),
                       congestionFigure(m, m.isoP99Us), congestionFigure(m, m.conP50Us),
                       congestionFigure(m, m.conP99Us), impactFactor(m.isoP50Us, m.conP50Us),
                       impactFactor(m.isoP99Us, m.conP99Us));
  if (r.failed) {
    out << "# measured: the isolated phase only (the run failed; congested figures are nan)\n";
    std::string line = r.error;
    for (char& c : line)
      if (c == '\n' || c == '\r') c = ' ';
    if (!line.empty()) out << "# error: " << line << "\n";
  }
}

// One object per victim metric: isolated, congested and impact p50 / p99.
ordered_json metricsJson(const CongestionResult& r) {
  ordered_json ms = ordered_json::array();
  for (const CongestionMetric& m : r.metrics) {
    const char* unit = m.bandwidth ? "MB/s" : "us";
    ms.push_back({{"name", m.name},
                  {"kind", m.bandwidth ? "bandwidth" : "latency"},
                  {"unit", unit},
                  {"bytes", m.bytes},
                  {"window", m.window},
                  {"iterations", m.iterations},
                  {"warmup", m.warmup},
                  {"isolated",
                   {{"p50", numberOrNull(congestionFigure(m, m.isoP50Us))},
                    {"p99", numberOrNull(congestionFigure(m, m.isoP99Us))}}},
                  {"congested",
                   {{"p50", numberOrNull(congestionFigure(m, m.conP50Us))},
                    {"p99", numberOrNull(congestionFigure(m, m.conP99Us))}}},
                  {"impact",
                   {{"p50", numberOrNull(impactFactor(m.isoP50Us, m.conP50Us))},
                    {"p99", numberOrNull(impactFactor(m.isoP99Us, m.conP99Us))}}}});
  }
  return ms;
}

void writeCongestionJson(std::ostream& out, const CongestionResult& r) {
  const CongestionPlan& pl = r.plan;
  const std::string pattern = toString(r.pattern);
  ordered_json doc;
  doc["tool"] = "rdmabench";
  doc["version"] = report::detail::toolVersion(r.info);
  doc["run"] = report::detail::runJson(r.info);
  ordered_json ranks = ordered_json::array();
  for (int i = 0; i < r.ranks; ++i) {
    const bool v = std::find(pl.victims.begin(), pl.victims.end(), i) != pl.victims.end();
    ranks.push_back({{"rank", i}, {"node", nodeOf(r, i)}, {"role", v ? "victim" : "aggressor"}});
  }
  doc["split"] = {
      {"ranks", r.ranks},
      {"victims", pl.victims},
      {"aggressors", pl.aggressors},
      {"ring", pl.ring},
      {"pattern", pattern},
      {"incast_target", r.pattern == CongestionPattern::kIncast ? ordered_json(pl.incastTarget)
                                                                : ordered_json(nullptr)},
      {"seed", r.seed},
      {"victim_fraction", r.victimFraction},
      {"placement", ranks}};
  doc["aggressors"] = {{"pattern", pattern},
                       {"streams", r.aggStreams},
                       {"message_bytes", r.aggBytes},
                       {"window", r.aggWindow},
                       {"mb_per_s", r.aggMBs}};
  doc["phases"] = {{"isolated_s", r.isolatedSeconds},
                   {"congested_s", r.congestedSeconds},
                   {"phase_time_s", r.phaseLimitSec}};
  doc["metrics"] = metricsJson(r);
  if (r.failed) {
    doc["phases_measured"] = r.phasesMeasured;
    doc["error"] = r.error;
  }
  out << escapeJsonControls(doc.dump(2, ' ', false, ordered_json::error_handler_t::replace))
      << "\n";
}

void writeCongestionCsv(std::ostream& out, const CongestionResult& r) {
  const CongestionPlan& pl = r.plan;
  const std::string pattern = toString(r.pattern);
  report::CsvWriter csv(out);
  csv.row({"metric", "unit", "bytes", "window", "iterations", "victims", "aggressors", "pattern",
           "seed", "iso_p50", "iso_p99", "cong_p50", "cong_p99", "impact_p50", "impact_p99"});
  for (const CongestionMetric& m : r.metrics)
    csv.record(m.name, m.bandwidth ? "MB/s" : "us", m.bytes, m.window, m.iterations,
               pl.victims.size(), pl.aggressors.size(), pattern, r.seed,
               congestionFigure(m, m.isoP50Us), congestionFigure(m, m.isoP99Us),
               congestionFigure(m, m.conP50Us), congestionFigure(m, m.conP99Us),
               impactFactor(m.isoP50Us, m.conP50Us), impactFactor(m.isoP99Us, m.conP99Us));
  // A failed run: the CSV carries no error column (its layout is fixed); stderr says why.
}

}  // namespace

void writeCongestion(std::ostream& out, const std::string& format, const CongestionResult& r) {
  if (format == "table")
    writeCongestionTable(out, r);
  else if (format == "json")
    writeCongestionJson(out, r);
  else if (format == "csv")
    writeCongestionCsv(out, r);
  else
    throw UsageError(
        fmt::format("--format {}: no congestion layout (valid: table, json, csv)", format));
  out.flush();
}

}  // namespace rdmabench::collective
