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

// "table 3 (IMB-MPI1 Allreduce, 4 processes, lines 70-93)".
std::string describeSection(const Series& s) {
  std::string what = fmt::format("table {} ({}", s.section, s.title.empty() ? s.test : s.title);
  if (s.processes) what += fmt::format(", {} processes", *s.processes);
  if (s.firstLine)
    what += s.firstLine == s.lastLine ? fmt::format(", line {}", s.firstLine)
                                      : fmt::format(", lines {}-{}", s.firstLine, s.lastLine);
  return what + ")";
}

// The tables of test `kind` in one file, by section (A/B variants share one).
std::vector<std::vector<const Series*>> sectionsOf(const std::vector<Series>& file,
                                                   const std::string& kind) {
  std::vector<std::vector<const Series*>> out;
  for (const Series& s : file) {
    if (s.test != kind) continue;
    if (!out.empty() && out.back().front()->section == s.section)
      out.back().push_back(&s);
    else
      out.push_back({&s});
  }
  return out;
}

// Picks one section of `kind` per file (docs/compare.md, "Sections"). Throws UsageError when a
// file holds several and none matches unambiguously, or when process counts differ.
std::vector<std::vector<const Series*>> chooseSections(
    const std::vector<std::vector<Series>>& files, const std::string& kind,
    const CompareOptions& options) {
  std::vector<std::vector<std::vector<const Series*>>> all;
  for (const auto& f : files)
    all.push_back(sectionsOf(f, kind));
  // The process count the inputs agree on: --np, else that of the files with one section.
  std::optional<int> np = options.np;
  const Series* npFrom = nullptr;
  if (!np) {
    for (const auto& secs : all) {
      if (secs.size() != 1 || !secs[0].front()->processes) continue;
      const Series* s = secs[0].front();
      if (!np) {
        np = s->processes;
        npFrom = s;
      } else if (*np != *s->processes) {
        throw UsageError(fmt::format(
            "compare {}: {} ran {} processes but {} ran {}: not the same run size; compare runs "
            "of the same process count",
            kind, npFrom->label, *np, s->label, *s->processes));
      }
    }
  }
  std::vector<std::vector<const Series*>> chosen(files.size());
  for (size_t f = 0; f < all.size(); ++f) {
    const auto& secs = all[f];
    if (secs.empty()) continue;
    const std::string& path = secs[0].front()->path;
    auto list = [&] {
      std::string l;
      for (size_t i = 0; i < secs.size(); ++i)
        l += (i ? ", " : "") + describeSection(*secs[i].front());
      return l;
    };
    if (secs.size() == 1) {
      const Series* s = secs[0].front();
      if (np && s->processes && *s->processes != *np)
        throw UsageError(fmt::format(
            "compare {}: {} ran {} processes, not {} ({}); compare runs of the same process "
            "count",
            kind, s->label, *s->processes, *np,
            options.np ? "--np" : fmt::format("as {}", npFrom ? npFrom->label : "the others")));
      chosen[f] = secs[0];
      continue;
    }
    if (options.section) {
      for (const auto& sec : secs)
        if (sec.front()->section == *options.section) chosen[f] = sec;
      if (chosen[f].empty())
        throw UsageError(fmt::format(
            "--section {}: {} has no {} table {} (its {} tables: {}); add --test to compare one "
            "test at a time",
            *options.section, path, kind, *options.section, kind, list()));
      continue;
    }
    if (np) {
      std::vector<const std::vector<const Series*>*> match;
      for (const auto& sec : secs)
        if (sec.front()->processes == np) match.push_back(&sec);
      if (match.size() == 1) {
        chosen[f] = *match[0];
        continue;
      }
      if (match.empty())
        throw UsageError(fmt::format(
            "compare {}: {} has no {} table at {} processes ({}; {}); choose one with --section K "
            "or compare a run of the same size",
            kind, path, kind, *np, options.np ? "--np" : "the other inputs' count", list()));
    }
    throw UsageError(fmt::format(
        "compare {}: {} holds {} {} tables and nothing says which to use: {}; choose with --np N "
        "or --section K",
        kind, path, secs.size(), kind, list()));
  }
  return chosen;
}

// Like for like (docs/compare.md): halves round-trip latencies when one-way ones are present,
// refuses stream against window bandwidth.
void likeForLike(const std::string& kind, std::vector<Series>& inputs,
                 std::vector<std::string>& notes) {
  bool oneWay = false, rtt = false;
  const Series* stream = nullptr;
  const Series* window = nullptr;
  for (const Series& s : inputs) {
    if (s.metric == Metric::kLatency) (s.definition == "round trip" ? rtt : oneWay) = true;
    if (s.metric == Metric::kBandwidth && s.source == Source::kRdmabench) {
      if (s.definition == "stream")
        stream = &s;
      else if (!window)
        window = &s;
    } else if (s.metric == Metric::kBandwidth && s.source != Source::kPerftest && !window) {
      window = &s;
    }
  }
  if (stream && window)
    throw UsageError(fmt::format(
        "compare {}: {} measured stream bandwidth (--mode stream) but {} window bandwidth (a "
        "window of messages, then an ack): not the same figure; compare a --mode window run",
        kind, stream->label, window->label));
  if (!(rtt && oneWay)) return;
  for (Series& s : inputs) {
    if (s.definition != "round trip") continue;
    for (Point& p : s.points) {
      p.value /= 2;
      if (p.min) *p.min /= 2;
      if (p.max) *p.max /= 2;
    }
    s.column += " / 2";
    s.definition = "one-way";
    s.note += (s.note.empty() ? "" : "; ") +
              std::string(
                  "full round-trip latency halved (RTT/2) to set it against one-way "
                  "(half round trip) latencies");
    notes.push_back(
        fmt::format("{}: round trip halved (RTT/2) to compare with one-way latency", s.label));
  }
}

// The union of the inputs' sizes (one size, 0, when not sized), each with every input's value,
// failure and warnings; the first value of a size that a series repeats wins (noted).
std::map<uint64_t, ComparedRow> unionRows(const Group& g, std::vector<std::string>& notes) {
  const size_t n = g.inputs.size();
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
  return rows;
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

  std::map<uint64_t, ComparedRow> rows = unionRows(g, notes);
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

// The test kinds to compare, in the order the baseline lists them: all, or --test's (UsageError
// when no input or not the baseline has it).
std::vector<std::string> testKinds(const std::vector<std::vector<Series>>& files,
                                   const CompareOptions& options) {
  const std::vector<Series>& base = files[options.baselineFile];
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
  return kinds;
}

// Two rdmabench (or perftest) inputs on different transports or hosts: the difference is
// theirs, not MPI's; say so in `notes`.
void noteDifferentRuns(const std::string& kind, const std::vector<Series>& inputs,
                       std::vector<std::string>& notes) {
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t j = i + 1; j < inputs.size(); ++j) {
      const Series& a = inputs[i];
      const Series& b = inputs[j];
      if (isMpi(a.source) || isMpi(b.source)) continue;
      if (!a.transport.empty() && !b.transport.empty() && a.transport != b.transport)
        notes.push_back(fmt::format(
            "{} [{}] ran transport {} but [{}] ran {}: their difference is the transport's", kind,
            i + 1, a.transport, j + 1, b.transport));
      if (!a.host.empty() && !b.host.empty() && a.host != b.host)
        notes.push_back(fmt::format("{} [{}] ran on {} but [{}] on {}: different hosts", kind,
                                    i + 1, a.host, j + 1, b.host));
    }
}

// OSU prints no process count: an OSU collective set against an input that states its count
// (rdmabench's ranks, IMB's #processes) compares runs of unknown relative size. --np N asserts
// OSU's count (a stated count other than N was refused by chooseSections); without it, a note
// says what is not known and what the other input ran.
void osuProcessCount(const std::string& kind, std::vector<Series>& inputs,
                     const CompareOptions& options, std::vector<std::string>& notes) {
  const Series* stated = nullptr;
  for (const Series& s : inputs)
    if (s.processes && !stated) stated = &s;
  for (Series& s : inputs) {
    if (s.metric != Metric::kCollective || s.source != Source::kOsu || s.processes) continue;
    if (options.np) {
      s.processes = options.np;
      notes.push_back(
          fmt::format("{}: OSU does not print its process count; --np {} says it ran {}", s.label,
                      *options.np, *options.np));
    } else if (stated) {
      notes.push_back(fmt::format(
          "compare {}: {} (OSU) does not print its process count, and {} ran {} {}: the "
          "difference is MPI's only if OSU ran {} processes too; assert it with --np {}",
          kind, s.label, stated->label, *stated->processes,
          stated->source == Source::kRdmabench ? "ranks" : "processes", *stated->processes,
          *stated->processes));
    }
  }
}

// No test of the baseline is in another input: UsageError naming what each input has (and
// which metrics cannot be compared).
[[noreturn]] void throwNothingInCommon(const std::vector<std::vector<Series>>& files) {
  std::string what;
  for (const auto& f : files) {
    if (f.empty()) continue;
    what += fmt::format("{}{} has {}", what.empty() ? "" : "; ", f.front().path, describeTests(f));
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

}  // namespace

Comparison compareSeries(const std::vector<std::vector<Series>>& files,
                         const CompareOptions& options) {
  if (files.size() < 2)
    throw UsageError(fmt::format("compare: needs at least two inputs (got {})", files.size()));
  if (options.baselineFile >= files.size())
    throw UsageError(fmt::format("compare: baseline index {} out of range 0..{}",
                                 options.baselineFile, files.size() - 1));
  Comparison out;
  const std::vector<std::string> kinds = testKinds(files, options);

  std::set<std::string> compared;
  for (const std::string& kind : kinds) {
    bool others = false;
    for (size_t f = 0; f < files.size(); ++f)
      if (f != options.baselineFile)
        for (const Series& s : files[f])
          others = others || s.test == kind;
    if (!others) continue;
    std::vector<std::vector<const Series*>> chosen = chooseSections(files, kind, options);
    for (size_t f = 0; f < files.size(); ++f)
      for (const Series& s : files[f])
        if (s.test == kind && !chosen[f].empty() &&
            std::find(chosen[f].begin(), chosen[f].end(), &s) == chosen[f].end())
          out.notes.push_back(fmt::format("{}: {} not compared; {} was", s.path, describeSection(s),
                                          describeSection(*chosen[f][0])));
    std::vector<Series> inputs;
    size_t baseline = 0;
    for (size_t f = 0; f < files.size(); ++f) {
      if (f == options.baselineFile) baseline = inputs.size();
      for (const Series* s : chosen[f])
        inputs.push_back(*s);
    }
    // Same test name but different metrics (e.g. a custom test) cannot be lined up.
    for (const Series& s : inputs)
      if (s.metric != inputs[baseline].metric)
        throw UsageError(fmt::format("compare {}: {} is {} but {} is {}", kind, s.label,
                                     metricName(s.metric), inputs[baseline].label,
                                     metricName(inputs[baseline].metric)));
    osuProcessCount(kind, inputs, options, out.notes);
    likeForLike(kind, inputs, out.notes);
    noteDifferentRuns(kind, inputs, out.notes);
    out.groups.push_back(buildGroup(std::move(inputs), baseline, out.notes));
    compared.insert(kind);
  }

  if (out.groups.empty()) throwNothingInCommon(files);

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
