// Output of `rdmabench compare`: table, json and csv (docs/compare.md).

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/text_escape.h"
#include "compare/compare.h"
#include "report/csv_writer.h"

namespace rdmabench::compare {

namespace {

std::string fixed(const std::optional<double>& v) {
  return v ? fmt::format("{:.2f}", *v) : std::string("-");
}

// The note column: "only in [1],[3]" when an input lacks the size, then each input's failure
// and warning.
std::string rowNote(const Group& g, const ComparedRow& r) {
  std::string s;
  // A negative MPI overhead: the run without MPI was slower, which MPI alone cannot explain.
  for (size_t k = 0; k < g.differences.size() && k < r.cells.size(); ++k) {
    const Difference& d = g.differences[k];
    if (!d.mpiOverhead || !r.cells[k].absolute || *r.cells[k].absolute >= 0) continue;
    size_t fabric = isMpi(g.inputs[d.of].source) ? d.to : d.of;
    s += fmt::format("{}[{}] {} slower than MPI here: different path?", s.empty() ? "" : "; ",
                     d.of + 1, sourceName(g.inputs[fabric].source));
  }
  if (r.missing())
    for (size_t i = 0; i < r.values.size(); ++i)
      if (r.values[i]) s += fmt::format("{}[{}]", s.empty() ? "only in " : ",", i + 1);
  for (size_t i = 0; i < r.failed.size(); ++i)
    if (!r.failed[i].empty())
      s += fmt::format("{}[{}] {}", s.empty() ? "" : "; ", i + 1, r.failed[i]);
  for (size_t i = 0; i < r.warnings.size(); ++i)
    if (!r.warnings[i].empty())
      s += fmt::format("{}[{}] warning: {}", s.empty() ? "" : "; ", i + 1, r.warnings[i]);
  return s;
}

// The note of one input of a row (csv).
std::string inputNote(const ComparedRow& r, size_t i) {
  std::string s = i < r.failed.size() ? r.failed[i] : std::string();
  if (i < r.warnings.size() && !r.warnings[i].empty())
    s += (s.empty() ? "warning: " : "; warning: ") + r.warnings[i];
  return s;
}

// A group's header lines: the test, each input (with its facts) and each difference.
void writeGroupHeader(const Group& g, std::ostream& out) {
  const char* unit = metricUnit(g.metric);
  std::string kind =
      g.test == metricName(g.metric) ? std::string() : fmt::format("{}, ", metricName(g.metric));
  out << fmt::format("# rdmabench compare: {} ({}{}, {} is better)\n", g.test, kind, unit,
                     lowerIsBetter(g.metric) ? "lower" : "higher");
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Series& s = g.inputs[i];
    std::string extra;
    if (s.processes) extra += fmt::format(", {} processes", *s.processes);
    if (!s.transport.empty()) extra += ", transport " + s.transport;
    if (!s.host.empty()) extra += ", host " + s.host;
    out << fmt::format("# [{}] {}: {}{} \"{}\"{} ({}){}{}\n", i + 1, s.label, sourceName(s.source),
                       s.toolVersion.empty() ? "" : " " + s.toolVersion, s.title,
                       s.column.empty() ? "" : ", column " + s.column,
                       isMpi(s.source) ? "MPI" : "no MPI", extra,
                       i == g.baseline ? ", baseline" : "");
  }
  for (const Difference& d : g.differences) {
    size_t mpi = isMpi(g.inputs[d.of].source) ? d.of : d.to;
    size_t fab = mpi == d.of ? d.to : d.of;
    if (d.mpiOverhead && g.metric == Metric::kBandwidth)
      out << fmt::format("# MPI overhead [{}]: [{}] - [{}] in MB/s lost, % of [{}]\n", d.of + 1,
                         fab + 1, mpi + 1, fab + 1);
    else if (d.mpiOverhead)
      out << fmt::format("# MPI overhead [{}]: [{}] - [{}] in us, % of [{}]\n", d.of + 1, mpi + 1,
                         fab + 1, fab + 1);
    else
      out << fmt::format("# diff [{}]: [{}] - [{}] in {}, % of [{}]\n", d.of + 1, d.of + 1,
                         d.to + 1, d.unit, d.to + 1);
    out << fmt::format("# ratio [{}]: [{}] / [{}]\n", d.of + 1, d.of + 1, d.to + 1);
  }
}

// A group's column heads and cells: bytes, each input's value, then per difference its
// absolute, percent and ratio.
void groupCells(const Group& g, std::vector<std::string>& head,
                std::vector<std::vector<std::string>>& cells) {
  const char* unit = metricUnit(g.metric);
  head = {"#bytes"};
  for (size_t i = 0; i < g.inputs.size(); ++i)
    head.push_back(fmt::format("[{}]{}", i + 1, unit));
  for (const Difference& d : g.differences) {
    std::string name = d.mpiOverhead ? "MPI_overhead" : "diff";
    head.push_back(
        fmt::format("{}[{}]{}", name, d.of + 1, d.unit == "MB/s lost" ? "MB/s" : d.unit));
    head.push_back(fmt::format("{}[{}]%", name, d.of + 1));
    head.push_back(fmt::format("ratio[{}]", d.of + 1));
  }
  for (const ComparedRow& r : g.rows) {
    std::vector<std::string> line{g.sized ? fmt::format("{}", r.bytes) : std::string("-")};
    for (size_t i = 0; i < r.values.size(); ++i)
      line.push_back(!r.values[i] && i < r.failed.size() && !r.failed[i].empty()
                         ? std::string("failed")
                         : fixed(r.values[i]));
    for (const Cell& cell : r.cells) {
      line.push_back(fixed(cell.absolute));
      line.push_back(fixed(cell.percent));
      line.push_back(cell.ratio ? fmt::format("{:.3f}", *cell.ratio) : std::string("-"));
    }
    cells.push_back(std::move(line));
  }
}

// A group's table: right-aligned columns (at least 8 wide), then the row's note.
void writeGroupTable(const Group& g, std::ostream& out) {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> cells;
  groupCells(g, head, cells);
  std::vector<size_t> width(head.size());
  for (size_t i = 0; i < head.size(); ++i) {
    width[i] = std::max<size_t>(head[i].size(), 8);
    for (const auto& line : cells)
      width[i] = std::max(width[i], line[i].size());
  }
  std::string h;
  for (size_t i = 0; i < head.size(); ++i)
    h += fmt::format("{:>{}}  ", head[i], width[i]);
  out << h << "note\n";
  for (size_t row = 0; row < cells.size(); ++row) {
    std::string l;
    for (size_t i = 0; i < head.size(); ++i)
      l += fmt::format("{:>{}}  ", cells[row][i], width[i]);
    l += rowNote(g, g.rows[row]);
    while (!l.empty() && l.back() == ' ')
      l.pop_back();
    out << l << '\n';
  }
}

void writeTable(const Comparison& c, std::ostream& out) {
  bool firstGroup = true;
  for (const Group& g : c.groups) {
    if (!firstGroup) out << '\n';
    firstGroup = false;
    writeGroupHeader(g, out);
    writeGroupTable(g, out);
  }
  for (const std::string& n : c.notes)
    out << "# note: " << n << '\n';
}

nlohmann::ordered_json optionalJson(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

void writeJson(const Comparison& c, std::ostream& out) {
  using nlohmann::ordered_json;
  ordered_json doc;
  doc["tool"] = "rdmabench";
  doc["command"] = "compare";
  doc["groups"] = ordered_json::array();
  for (const Group& g : c.groups) {
    ordered_json jg;
    jg["test"] = g.test;
    jg["metric"] = metricName(g.metric);
    jg["unit"] = metricUnit(g.metric);
    jg["lower_is_better"] = lowerIsBetter(g.metric);
    jg["sized"] = g.sized;
    jg["baseline"] = g.baseline;
    jg["inputs"] = ordered_json::array();
    for (const Series& s : g.inputs) {
      ordered_json ji;
      ji["label"] = s.label;
      ji["path"] = s.path;
      ji["source"] = sourceName(s.source);
      ji["mpi"] = isMpi(s.source);
      ji["title"] = s.title;
      ji["column"] = s.column;
      if (!s.toolVersion.empty()) ji["version"] = s.toolVersion;
      if (s.section) ji["section"] = s.section;
      if (s.processes) ji["processes"] = *s.processes;
      if (!s.transport.empty()) ji["transport"] = s.transport;
      if (!s.host.empty()) ji["host"] = s.host;
      if (!s.note.empty()) ji["note"] = s.note;
      jg["inputs"].push_back(ji);
    }
    jg["differences"] = ordered_json::array();
    for (const Difference& d : g.differences)
      jg["differences"].push_back({{"of", d.of},
                                   {"to", d.to},
                                   {"label", d.label},
                                   {"mpi_overhead", d.mpiOverhead},
                                   {"unit", d.unit}});
    jg["rows"] = ordered_json::array();
    for (const ComparedRow& r : g.rows) {
      ordered_json jr;
      jr["bytes"] = g.sized ? ordered_json(r.bytes) : ordered_json(nullptr);
      jr["values"] = ordered_json::array();
      for (const auto& v : r.values)
        jr["values"].push_back(optionalJson(v));
      jr["differences"] = ordered_json::array();
      for (const Cell& cell : r.cells)
        jr["differences"].push_back({{"absolute", optionalJson(cell.absolute)},
                                     {"percent", optionalJson(cell.percent)},
                                     {"ratio", optionalJson(cell.ratio)}});
      if (std::string n = rowNote(g, r); n.find("slower than MPI") != std::string::npos)
        jr["note"] = n;
      if (r.missing()) {
        jr["only_in"] = ordered_json::array();
        for (size_t i = 0; i < r.values.size(); ++i)
          if (r.values[i]) jr["only_in"].push_back(i);
      }
      for (size_t i = 0; i < r.failed.size(); ++i) {
        if (r.failed[i].empty()) continue;
        if (!jr.contains("failed")) jr["failed"] = ordered_json::array();
        jr["failed"].push_back({{"input", i}, {"reason", r.failed[i]}});
      }
      for (size_t i = 0; i < r.warnings.size(); ++i) {
        if (r.warnings[i].empty()) continue;
        if (!jr.contains("warnings")) jr["warnings"] = ordered_json::array();
        jr["warnings"].push_back({{"input", i}, {"warning", r.warnings[i]}});
      }
      jg["rows"].push_back(jr);
    }
    doc["groups"].push_back(jg);
  }
  doc["notes"] = c.notes;
  out << escapeJsonControls(doc.dump(1, ' ', false, ordered_json::error_handler_t::replace))
      << '\n';
}

std::string csvNumber(const std::optional<double>& v) {
  return v ? fmt::format("{}", *v) : std::string();
}

void writeCsv(const Comparison& c, std::ostream& out) {
  report::CsvWriter csv(out);
  csv.row({"test", "metric", "bytes", "input", "path", "source", "mpi", "baseline", "value", "unit",
           "diff_label", "diff_absolute", "diff_unit", "diff_percent", "diff_ratio", "note"});
  for (const Group& g : c.groups) {
    for (const ComparedRow& r : g.rows) {
      for (size_t i = 0; i < g.inputs.size(); ++i) {
        const Series& s = g.inputs[i];
        std::vector<std::string> diff(5);  // label, absolute, unit, percent, ratio
        for (size_t k = 0; k < g.differences.size(); ++k) {
          const Difference& d = g.differences[k];
          if (d.of != i) continue;
          diff = {d.label, csvNumber(r.cells[k].absolute), d.unit, csvNumber(r.cells[k].percent),
                  csvNumber(r.cells[k].ratio)};
        }
        csv.record(g.test, metricName(g.metric), g.sized ? fmt::format("{}", r.bytes) : "", s.label,
                   s.path, sourceName(s.source), isMpi(s.source) ? "true" : "false",
                   i == g.baseline ? "true" : "false", csvNumber(r.values[i]), metricUnit(g.metric),
                   diff[0], diff[1], diff[2], diff[3], diff[4], inputNote(r, i));
      }
    }
  }
}

}  // namespace

void writeComparison(const Comparison& comparison, std::string_view format, std::ostream& out) {
  if (format == "table")
    writeTable(comparison, out);
  else if (format == "json")
    writeJson(comparison, out);
  else if (format == "csv")
    writeCsv(comparison, out);
  else
    throw UsageError(
        fmt::format("--format {}: unknown for compare (valid: table, json, csv)", format));
  out.flush();
}

}  // namespace rdmabench::compare
