#include "compare/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/error.h"

namespace rdmabench::compare {

bool ComparedRow::complete() const {
  return std::all_of(values.begin(), values.end(), [](const auto& v) { return v.has_value(); });
}

bool ComparedRow::missing() const {
  for (size_t i = 0; i < values.size(); ++i)
    if (!values[i] && (i >= failed.size() || failed[i].empty())) return true;
  return false;
}

Cell difference(Metric metric, bool mpiOverhead, bool valueIsMpi, double value, double reference) {
  Cell c;
  if (mpiOverhead) {
    double mpi = valueIsMpi ? value : reference;
    double fabric = valueIsMpi ? reference : value;
    c.absolute = metric == Metric::kBandwidth ? fabric - mpi : mpi - fabric;
    if (fabric != 0) c.percent = *c.absolute / fabric * 100.0;
  } else {
    c.absolute = value - reference;
    if (reference != 0) c.percent = *c.absolute / reference * 100.0;
  }
  if (reference != 0) c.ratio = value / reference;
  return c;
}

namespace {

// "latency (a.txt)" lists for error messages.
std::string describeTests(const std::vector<Series>& series) {
  std::string s;
  std::set<std::string> seen;
  for (const Series& x : series) {
    if (!seen.insert(x.test).second) continue;
    if (!s.empty()) s += ", ";
    s += x.test;
    if (x.test != metricName(x.metric)) s += fmt::format(" ({})", metricName(x.metric));
  }
  return s.empty() ? "nothing" : s;
}

std::string sizeRange(const Series& s) {
  if (!s.sized || s.points.empty()) return "no sizes";
  auto [lo, hi] =
      std::minmax_element(s.points.begin(), s.points.end(),
                          [](const Point& a, const Point& b) { return a.bytes < b.bytes; });
  return lo->bytes == hi->bytes ? fmt::format("{} B", lo->bytes)
                                : fmt::format("{}..{} B", lo->bytes, hi->bytes);
}

Group buildGroup(std::vector<Series> inputs, size_t baseline, std::vector<std::string>& notes) {
  Group g;
  g.test = inputs[baseline].test;
  g.metric = inputs[baseline].metric;
  g.baseline = baseline;
  g.sized = std::all_of(inputs.begin(), inputs.end(), [](const Series& s) { return s.sized; });
  g.inputs = std::move(inputs);
  const size_t n = g.inputs.size();

  for (size_t i = 0; i < n; ++i) {
    if (i == baseline) continue;
    Difference d;
    d.of = i;
    d.to = baseline;
    d.mpiOverhead = isMpi(g.inputs[i].source) != isMpi(g.inputs[baseline].source);
    d.label = d.mpiOverhead ? "MPI overhead" : "diff vs baseline";
    d.unit = g.metric == Metric::kBandwidth ? (d.mpiOverhead ? "MB/s lost" : "MB/s") : "us";
    g.differences.push_back(d);
  }

  // Union of sizes; the first value of a size that a series repeats wins.
  std::map<uint64_t, ComparedRow> rows;
  for (size_t i = 0; i < n; ++i) {
    const Series& s = g.inputs[i];
    std::set<uint64_t> dup;
    for (const Point& p : s.points) {
      uint64_t key = g.sized ? p.bytes : 0;
      ComparedRow& r = rows[key];
      r.bytes = key;
      r.values.resize(n);
      if (r.values[i]) {
        dup.insert(key);
        continue;
      }
      r.values[i] = p.value;
    }
    for (const RowIssue& f : s.failures) {
      uint64_t key = g.sized ? f.bytes : 0;
      ComparedRow& r = rows[key];
      r.bytes = key;
      r.values.resize(n);
      r.failed.resize(n);
      if (!r.values[i] && r.failed[i].empty()) r.failed[i] = f.text;
    }
    for (const RowIssue& w : s.warnings) {
      uint64_t key = g.sized ? w.bytes : 0;
      auto it = rows.find(key);
      if (it == rows.end()) continue;
      it->second.warnings.resize(n);
      std::string& text = it->second.warnings[i];
      text += (text.empty() ? "" : "; ") + w.text;
    }
    if (!dup.empty())
      notes.push_back(
          fmt::format("{} ({}): {} size(s) appear more than once; the first row of "
                      "each was used",
                      s.label, g.test, dup.size()));
  }
  bool common = false;
  for (auto& [bytes, r] : rows) {
    r.values.resize(n);
    r.failed.resize(n);
    r.warnings.resize(n);
    for (const Difference& d : g.differences) {
      Cell c;
      if (r.values[d.of] && r.values[d.to]) {
        c = difference(g.metric, d.mpiOverhead, isMpi(g.inputs[d.of].source), *r.values[d.of],
                       *r.values[d.to]);
        common = true;
      }
      r.cells.push_back(c);
    }
    g.rows.push_back(std::move(r));
  }
  if (!common) {
    std::string have;
    for (const Series& s : g.inputs)
      have += fmt::format("{}{} has {}", have.empty() ? "" : ", ", s.label, sizeRange(s));
    throw UsageError(fmt::format("compare {}: no message size in common ({})", g.test, have));
  }
  return g;
}

}  // namespace

Comparison compareSeries(const std::vector<std::vector<Series>>& files,
                         const CompareOptions& options) {
  if (files.size() < 2)
    throw UsageError(fmt::format("compare: needs at least two inputs (got {})", files.size()));
  if (options.baselineFile >= files.size())
    throw UsageError(fmt::format("compare: baseline index {} out of range 0..{}",
                                 options.baselineFile, files.size() - 1));
  Comparison out;
  const std::vector<Series>& base = files[options.baselineFile];

  // Test kinds in the order the baseline lists them.
  std::vector<std::string> kinds;
  for (const Series& s : base)
    if (std::find(kinds.begin(), kinds.end(), s.test) == kinds.end()) kinds.push_back(s.test);
  if (!options.test.empty()) {
    bool anywhere = false;
    for (const auto& f : files)
      for (const Series& s : f)
        anywhere = anywhere || s.test == options.test;
    if (!anywhere) {
      std::set<std::string> all;
      for (const auto& f : files)
        for (const Series& s : f)
          all.insert(s.test);
      std::string list;
      for (const auto& t : all)
        list += (list.empty() ? "" : ", ") + t;
      throw UsageError(fmt::format("--test {}: no input has it (found: {})", options.test, list));
    }
    kinds.erase(std::remove_if(kinds.begin(), kinds.end(),
                               [&](const std::string& k) { return k != options.test; }),
                kinds.end());
    if (kinds.empty())
      throw UsageError(fmt::format("--test {}: not in the baseline {}", options.test,
                                   base.empty() ? "?" : base.front().path));
  }

  std::set<std::string> compared;
  for (const std::string& kind : kinds) {
    std::vector<Series> inputs;
    size_t baseline = 0;
    bool others = false;
    for (size_t f = 0; f < files.size(); ++f) {
      bool first = true;
      for (const Series& s : files[f]) {
        if (s.test != kind) continue;
        if (f == options.baselineFile && first) baseline = inputs.size();
        if (f != options.baselineFile) others = true;
        first = false;
        inputs.push_back(s);
      }
    }
    if (!others) continue;
    // Same test name but different metrics (e.g. a custom test) cannot be lined up.
    for (const Series& s : inputs)
      if (s.metric != inputs[baseline].metric)
        throw UsageError(fmt::format("compare {}: {} is {} but {} is {}", kind, s.label,
                                     metricName(s.metric), inputs[baseline].label,
                                     metricName(inputs[baseline].metric)));
    out.groups.push_back(buildGroup(std::move(inputs), baseline, out.notes));
    compared.insert(kind);
  }

  if (out.groups.empty()) {
    std::string what;
    for (const auto& f : files) {
      if (f.empty()) continue;
      what +=
          fmt::format("{}{} has {}", what.empty() ? "" : "; ", f.front().path, describeTests(f));
    }
    std::vector<std::string> metrics;
    for (const auto& f : files)
      for (const Series& s : f)
        if (std::find(metrics.begin(), metrics.end(), metricName(s.metric)) == metrics.end())
          metrics.push_back(metricName(s.metric));
    std::string why;
    for (size_t i = 1; i < metrics.size(); ++i)
      why += fmt::format("{}{} cannot be compared with {}", why.empty() ? ": " : ", ", metrics[0],
                         metrics[i]);
    throw UsageError(fmt::format("compare: no test in common with the baseline ({}){}", what, why));
  }

  for (size_t f = 0; f < files.size(); ++f)
    for (const Series& s : files[f])
      if (!compared.count(s.test) && (options.test.empty() || s.test == options.test))
        out.notes.push_back(
            fmt::format("{}: {} has no counterpart in the other inputs; not "
                        "compared",
                        s.label, s.test));
  for (const Group& g : out.groups)
    for (const Series& s : g.inputs)
      if (!s.note.empty()) out.notes.push_back(fmt::format("{}: {}", s.label, s.note));
  return out;
}

}  // namespace rdmabench::compare
