#include "noise/report.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "common/text_escape.h"
#include "report/csv_writer.h"
#include "report/format_util.h"

// The noise report's writers (table, JSON, CSV) and its gnuplot script; the report itself is
// built in noise/report.cc.

namespace rdmabench::noise {

using nlohmann::json;
using nlohmann::ordered_json;

const std::vector<std::string>& noiseFormatNames() {
  static const std::vector<std::string> names{"table", "json", "csv"};
  return names;
}

namespace {

std::string modelName() {
  return "E[max over N ranks of the delay D that detours add to T us of work], D replayed from "
         "each rank's detour trace, ranks independent (Petrini et al. SC'03; Hoefler et al. "
         "SC'10; docs/noise.md)";
}

ordered_json nodeJson(const NodeSummary& n) {
  return {{"host", n.host},
          {"ranks", n.ranks},
          {"detours_per_s", n.perSecond},
          {"stolen_pct", n.stolenPct},
          {"max_stolen_pct", n.maxStolenPct},
          {"max_us", n.maxUs},
          {"p50_us", n.p50Us},
          {"p99_us", n.p99Us},
          {"p999_us", n.p999Us}};
}

ordered_json ruleJson(const OutlierRule& o, double k) {
  return {{"figure", "stolen_pct"},
          {"rule", "median + k x max(MAD, median/10, floor)"},
          {"k", k},
          {"floor", kStolenPctFloor},
          {"decided", o.decided},
          {"baseline", o.baseline},
          {"mad", o.mad},
          {"threshold", o.threshold}};
}

// JSON "ranks": one object per rank with its detour statistics, FWQ times and sources.
ordered_json ranksJson(const NoiseReport& r) {
  ordered_json ranks = ordered_json::array();
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankResult& x = r.ranks[i];
    ordered_json j{{"rank", x.rank},
                   {"host", x.host},
                   {"cpu", x.cpu},
                   {"pid", x.pid},
                   {"pinning", x.pinning},
                   {"median_step_ns", x.medianStepNs},
                   {"threshold_us", static_cast<double>(x.thresholdNs) / 1e3},
                   {"seconds", x.stats.seconds},
                   {"detours", x.stats.count},
                   {"detours_per_s", x.stats.perSecond},
                   {"stolen_pct", x.stats.stolenPct},
                   {"max_us", x.stats.maxUs},
                   {"p50_us", x.stats.p50Us},
                   {"p99_us", x.stats.p99Us},
                   {"p999_us", x.stats.p999Us},
                   {"mean_us", x.stats.meanUs},
                   {"outlier", std::find(r.coreRule.outliers.begin(), r.coreRule.outliers.end(),
                                         i) != r.coreRule.outliers.end()}};
    if (x.fwq) j["fwq"] = x.fwq->toJson();
    ordered_json src = ordered_json::array();
    if (const CpuSources* s = sourcesOf(r, x))
      for (const auto& n : s->top)
        src.push_back(ordered_json(n.toJson()));
    j["sources"] = src;
    ranks.push_back(std::move(j));
  }
  return ranks;
}

// JSON "outliers": the core and node rules, their outliers and the findings.
ordered_json outliersJson(const NoiseReport& r) {
  const NoiseConfig& c = r.config;
  ordered_json outl;
  outl["cores"] = ruleJson(r.coreRule, c.outlierK);
  ordered_json list = ordered_json::array();
  for (size_t i : r.coreRule.outliers)
    list.push_back({{"rank", r.ranks[i].rank},
                    {"host", r.ranks[i].host},
                    {"cpu", r.ranks[i].cpu},
                    {"stolen_pct", r.ranks[i].stats.stolenPct}});
  outl["cores"]["outliers"] = list;
  outl["nodes"] = ruleJson(r.nodeRule, c.outlierK);
  list = ordered_json::array();
  for (size_t i : r.nodeRule.outliers)
    list.push_back({{"host", r.nodes[i].host}, {"stolen_pct", r.nodes[i].stolenPct}});
  outl["nodes"]["outliers"] = list;
  outl["findings"] = noiseFindings(r);
  return outl;
}

void writeJson(std::ostream& out, const NoiseReport& r) {
  ordered_json doc;
  doc["tool"] = "rdmabench";
  doc["version"] = r.version;
  doc["test"] = "noise";
  doc["date"] = r.date;
  doc["command_line"] = r.commandLine;
  doc["clock"] = r.clock ? r.clock->toJson() : nlohmann::json::object();
  const NoiseConfig& c = r.config;
  ordered_json cfg{
      {"mode", c.fwqUs > 0 ? "fwq" : "detour"},
      {"duration_s", c.durationSec},
      {"threshold_us", c.thresholdUs > 0 ? ordered_json(c.thresholdUs) : ordered_json("auto")},
      {"sample_s", c.sampleSec},
      {"outlier_k", c.outlierK},
      {"pin", c.pin},
      {"predict_time_us", c.predictTimesUs},
      {"predict_ranks", c.predictRanks}};
  if (c.fwqUs > 0) cfg["fwq_us"] = c.fwqUs;
  doc["config"] = cfg;
  doc["world_size"] = r.worldSize;
  doc["ranks"] = ranksJson(r);
  ordered_json nodes = ordered_json::array();
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    ordered_json j = nodeJson(r.nodes[i]);
    j["outlier"] = std::find(r.nodeRule.outliers.begin(), r.nodeRule.outliers.end(), i) !=
                   r.nodeRule.outliers.end();
    for (const auto& a : r.attribution)
      if (a.host == r.nodes[i].host) {
        j["attribution"] = {{"seconds", a.seconds},
                            {"samples", a.samples},
                            {"reader_ms_per_sample", a.readerMsPerSample},
                            {"unseen", a.unseen}};
      }
    nodes.push_back(std::move(j));
  }
  doc["nodes"] = nodes;
  doc["job"] = nodeJson(r.job);
  doc["outliers"] = outliersJson(r);
  ordered_json preds = ordered_json::array();
  for (const auto& p : r.predictions)
    preds.push_back({{"ranks", p.ranks},
                     {"work_us", p.workUs},
                     {"delay_us", p.delayUs},
                     {"p_delayed", p.probDelayed},
                     {"slowdown", p.slowdown}});
  doc["collective_cost"] = {{"model", modelName()}, {"predictions", preds}};
  doc["warnings"] = r.warnings;
  doc["error"] = r.failed ? ordered_json(r.error) : ordered_json(nullptr);
  out << report::detail::dumpJson(doc) << "\n";
}

void writeCsv(std::ostream& out, const NoiseReport& r) {
  out << "rank,host,cpu,seconds,detours,detours_per_s,stolen_pct,max_us,p50_us,p99_us,p999_us,"
         "outlier,top_source";
  const bool fwq = r.config.fwqUs > 0;
  if (fwq) out << ",fwq_quanta,fwq_min_us,fwq_median_us,fwq_p99_us,fwq_max_us,fwq_noise_ratio";
  out << "\n";
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankResult& x = r.ranks[i];
    const bool o = std::find(r.coreRule.outliers.begin(), r.coreRule.outliers.end(), i) !=
                   r.coreRule.outliers.end();
    const CpuSources* s = sourcesOf(r, x);
    out << fmt::format("{},{},{},{:.3f},{},{:.2f},{:.4f},{:.2f},{:.2f},{:.2f},{:.2f},{},{}", x.rank,
                       report::csvField(x.host), x.cpu, x.stats.seconds, x.stats.count,
                       x.stats.perSecond, x.stats.stolenPct, x.stats.maxUs, x.stats.p50Us,
                       x.stats.p99Us, x.stats.p999Us, o ? 1 : 0,
                       report::csvField(s && !s->top.empty() ? s->top.front().text : ""));
    if (fwq) {
      const FwqStats f = x.fwq.value_or(FwqStats{});
      out << fmt::format(",{},{:.3f},{:.3f},{:.3f},{:.3f},{:.5f}", f.quanta, f.minUs, f.medianUs,
                         f.p99Us, f.maxUs, f.noiseRatio);
    }
    out << "\n";
  }
}

// Table: the `#` header block (what ran, the clock, the ranks, warnings).
void tableHeader(std::ostream& out, const NoiseReport& r) {
  const NoiseConfig& c = r.config;
  report::RunInfo info;
  info.clock = r.clock;
  out << fmt::format("# rdmabench {} noise: {}\n", r.version,
                     c.fwqUs > 0 ? fmt::format("fixed work quanta of {} us (LLNL FWQ) and the "
                                               "detour loop",
                                               c.fwqUs)
                                 : std::string("selfish-detour loop, gaps between clock reads"));
  out << "# date: " << r.date << "\n# command: " << escapeForLog(r.commandLine) << "\n";
  if (std::string cl = report::detail::clockLine(info); !cl.empty())
    out << "# clock: " << cl << "\n";
  std::set<std::string> hosts;
  for (const auto& x : r.ranks)
    hosts.insert(x.host);
  const RankResult* first = r.ranks.empty() ? nullptr : &r.ranks.front();
  out << fmt::format(
      "# ranks: {} on {} node(s); {:.1f} s per rank; threshold {}; {}\n", r.worldSize, hosts.size(),
      c.durationSec,
      c.thresholdUs > 0
          ? fmt::format("{:.2f} us (--threshold)", c.thresholdUs)
          : fmt::format("{:.2f} us (auto: 5 x the loop's median step of {:.0f} ns, at least 1 us)",
                        first ? static_cast<double>(first->thresholdNs) / 1e3 : 0,
                        first ? first->medianStepNs : 0),
      first ? first->pinning : "");
  out << "# units: detour = gap between two clock reads above the threshold; stolen % = sum of "
         "detours / loop time; lengths in us; pXX = nearest-rank percentile\n";
  for (const auto& w : r.warnings)
    out << "# WARNING: " << w << "\n";
}

// Table: one line per rank, then (FWQ mode) the quantum times per rank.
void tableRanks(std::ostream& out, const NoiseReport& r, size_t hw) {
  const NoiseConfig& c = r.config;
  out << fmt::format("{:>5} {:<{}} {:>4} {:>10} {:>9} {:>10} {:>9} {:>9} {:>10} {:>7}\n", "rank",
                     "node", hw, "cpu", "detours/s", "stolen%", "max[us]", "p50[us]", "p99[us]",
                     "p99.9[us]", "outlier");
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankResult& x = r.ranks[i];
    const bool o = std::find(r.coreRule.outliers.begin(), r.coreRule.outliers.end(), i) !=
                   r.coreRule.outliers.end();
    out << fmt::format(
        "{:>5} {:<{}} {:>4} {:>10.1f} {:>9.4f} {:>10.2f} {:>9.2f} {:>9.2f} {:>10.2f} "
        "{:>7}\n",
        x.rank, x.host, hw, x.cpu, x.stats.perSecond, x.stats.stolenPct, x.stats.maxUs,
        x.stats.p50Us, x.stats.p99Us, x.stats.p999Us, o ? "core" : "");
  }
  if (c.fwqUs > 0) {
    out << fmt::format(
        "\n# fixed work quanta of {} us: spread of the quantum times [us]; noise "
        "ratio = (mean - min) / min\n",
        c.fwqUs);
    out << fmt::format("{:>5} {:<{}} {:>4} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9} {:>11}\n", "rank",
                       "node", hw, "cpu", "quanta", "min", "median", "p99", "max", "stdev",
                       "noise_ratio");
    for (const auto& x : r.ranks) {
      const FwqStats f = x.fwq.value_or(FwqStats{});
      out << fmt::format(
          "{:>5} {:<{}} {:>4} {:>9} {:>9.2f} {:>9.2f} {:>9.2f} {:>10.2f} {:>9.3f} "
          "{:>11.5f}\n",
          x.rank, x.host, hw, x.cpu, f.quanta, f.minUs, f.medianUs, f.p99Us, f.maxUs, f.stdevUs,
          f.noiseRatio);
    }
  }
}

// Table: one line per node, then the job.
void tableNodes(std::ostream& out, const NoiseReport& r, size_t hw) {
  out << fmt::format("\n# per node (means over its cores; percentiles of its detours pooled)\n");
  out << fmt::format("{:<{}} {:>5} {:>10} {:>9} {:>11} {:>10} {:>9} {:>9} {:>10} {:>7}\n", "node",
                     hw, "ranks", "detours/s", "stolen%", "maxstolen%", "max[us]", "p50[us]",
                     "p99[us]", "p99.9[us]", "outlier");
  auto nodeRow = [&](const NodeSummary& n, bool o) {
    out << fmt::format(
        "{:<{}} {:>5} {:>10.1f} {:>9.4f} {:>11.4f} {:>10.2f} {:>9.2f} {:>9.2f} "
        "{:>10.2f} {:>7}\n",
        n.host, hw, n.ranks, n.perSecond, n.stolenPct, n.maxStolenPct, n.maxUs, n.p50Us, n.p99Us,
        n.p999Us, o ? "node" : "");
  };
  for (size_t i = 0; i < r.nodes.size(); ++i)
    nodeRow(r.nodes[i], std::find(r.nodeRule.outliers.begin(), r.nodeRule.outliers.end(), i) !=
                            r.nodeRule.outliers.end());
  nodeRow(r.job, false);
}

// Table: the noisiest cores with their sources, and what the attribution could not see.
void tableNoisiest(std::ostream& out, const NoiseReport& r) {
  const NoiseConfig& c = r.config;
  out << fmt::format(
      "\n# noisiest cores (outlier rule of pairs: stolen % > median + k x max(MAD, median/10, "
      "{}), k = {}{})\n",
      kStolenPctFloor, c.outlierK,
      r.coreRule.decided ? fmt::format("; baseline {:.4f}%, threshold {:.4f}%", r.coreRule.baseline,
                                       r.coreRule.threshold)
                         : std::string("; fewer than 3 cores: ranked, no outlier decision"));
  const size_t shown = std::min<size_t>(r.coreRule.ranked.size(), 5);
  for (size_t k = 0; k < shown; ++k) {
    const RankResult& x = r.ranks[r.coreRule.ranked[k]];
    const bool o = std::find(r.coreRule.outliers.begin(), r.coreRule.outliers.end(),
                             r.coreRule.ranked[k]) != r.coreRule.outliers.end();
    out << fmt::format(
        "{}. node {} cpu {} (rank {}): {:.4f}% stolen, {:.1f} detours/s, longest "
        "{:.1f} us{}\n",
        k + 1, x.host, x.cpu, x.rank, x.stats.stolenPct, x.stats.perSecond, x.stats.maxUs,
        o ? "  OUTLIER" : "");
    const CpuSources* s = sourcesOf(r, x);
    if (!s || s->top.empty()) {
      out << "     sources: none seen\n";
      continue;
    }
    for (const auto& n : s->top)
      out << "     " << n.text << "\n";
  }
  for (const auto& a : r.attribution) {
    out << fmt::format(
        "# attribution on {}: {} /proc samples over {:.1f} s, {:.1f} ms each "
        "(the reader's own time; rdmabench's threads are left out)\n",
        a.host, a.samples, a.seconds, a.readerMsPerSample);
    for (const auto& u : a.unseen)
      out << fmt::format("# could not see on {}: {}\n", a.host, u);
  }
}

// Table: the collective cost model's predictions.
void tableCost(std::ostream& out, const NoiseReport& r) {
  out << "\n# cost to one synchronising collective whose noise-free time is T: " << modelName()
      << "\n";
  out << fmt::format("{:>8} {:>10} {:>12} {:>11} {:>9}\n", "ranks", "T[us]", "delay[us]",
                     "P(delayed)", "slowdown");
  for (const auto& p : r.predictions)
    out << fmt::format("{:>8} {:>10.1f} {:>12.3f} {:>10.1f}% {:>9.3f}\n", p.ranks, p.workUs,
                       p.delayUs, 100 * p.probDelayed, p.slowdown);
  for (const auto& p : r.predictions)
    if (p.ranks == r.worldSize) {
      out << fmt::format(
          "# reading: {} ranks, a collective of ~{:.0f} us: noise adds about {:.2f} "
          "us per call\n",
          p.ranks, p.workUs, p.delayUs);
      break;
    }
}

void writeTable(std::ostream& out, const NoiseReport& r) {
  tableHeader(out, r);
  size_t hw = 4;
  for (const auto& x : r.ranks)
    hw = std::max(hw, x.host.size());
  tableRanks(out, r, hw);
  tableNodes(out, r, hw);
  tableNoisiest(out, r);
  tableCost(out, r);
}

}  // namespace

void writeNoise(std::ostream& out, const std::string& format, const NoiseReport& r) {
  if (format == "json") {
    writeJson(out, r);
  } else {
    if (format == "csv")
      writeCsv(out, r);
    else
      writeTable(out, r);
    if (r.failed) {  // as writeNoiseError: the last line says why the ranks end here
      out << fmt::format("# measured: {} of the ranks (the run failed)\n", r.ranks.size());
      if (!r.error.empty()) writeNoiseError(out, format, r.error);
    }
  }
  out.flush();
}

void writeNoiseError(std::ostream& out, const std::string& format, const std::string& error) {
  if (format == "json") {
    ordered_json doc{{"tool", "rdmabench"}, {"test", "noise"}, {"error", error}};
    out << report::detail::dumpJson(doc) << "\n";
  } else {
    std::string line = error;
    for (char& ch : line)
      if (ch == '\n' || ch == '\r') ch = ' ';
    out << "# error: " << line << "\n";
  }
  out.flush();
}

std::string noisePlotScript(const NoiseReport& r, const std::string& path) {
  const bool svg = path.size() >= 4 && (path.substr(path.size() - 4) == ".svg" ||
                                        path.substr(path.size() - 4) == ".SVG");
  std::string s;
  // noenhanced: host names are shown as they are ("node_1" is no subscript).
  s += svg ? "set terminal svg size 1200,500 dynamic noenhanced\n"
           : "set terminal pngcairo size 1200,500 noenhanced\n";
  s += "set output " + gnuplotOutputPath(path, "--plot") + "\nset multiplot layout 1,2\n";
  // Heat map: nodes (rows) x cores (columns), stolen %.
  std::vector<std::string> hosts;
  for (const auto& x : r.ranks)
    if (std::find(hosts.begin(), hosts.end(), x.host) == hosts.end()) hosts.push_back(x.host);
  int maxCpu = 0;
  for (const auto& x : r.ranks)
    maxCpu = std::max(maxCpu, x.cpu);
  s += "set title 'stolen time [%] per node and core'\nset xlabel 'cpu'\nset ylabel 'node'\n"
       "set palette defined (0 'white', 1 'orange', 2 'red')\nset cbrange [0:*]\n";
  s += fmt::format("set xrange [-0.5:{}.5]\nset yrange [-0.5:{}.5]\n", maxCpu, hosts.size() - 1);
  s += "set ytics (";
  for (size_t i = 0; i < hosts.size(); ++i)
    s += fmt::format("{}{} {}", i ? ", " : "", gnuplotString(hosts[i]), i);
  s += ")\n$heat << EOD\n";
  for (const auto& x : r.ranks) {
    const size_t row =
        static_cast<size_t>(std::find(hosts.begin(), hosts.end(), x.host) - hosts.begin());
    s += fmt::format("{} {} {:.6f}\n", x.cpu, row, x.stats.stolenPct);
  }
  s += "EOD\nplot $heat using 1:2:(0.45):(0.45):3 with boxxyerror fs solid 1.0 lc palette "
       "notitle, '' using 1:2:(sprintf(\"%.2f\", $3)) with labels notitle\n";
  // Histogram of detour lengths (log x), pooled over the job.
  LogHistogram pooled;
  for (const auto& x : r.ranks)
    pooled.merge(x.lengths);
  s += "set title 'detour lengths (all ranks)'\nset xlabel 'detour [us]'\nset ylabel "
       "'count'\nset logscale xy\nset autoscale\nunset ytics\nset ytics\nset xrange [*:*]\n"
       "set yrange [0.8:*]\n$hist << EOD\n";
  for (const auto& b : pooled.bins())
    if (b.lowNs > 0) s += fmt::format("{:.6f} {:.6f} {}\n", b.lowNs / 1e3, b.highNs / 1e3, b.count);
  s += "EOD\nplot $hist using (sqrt($1*$2)):3 with impulses lw 6 notitle\nunset multiplot\n";
  return s;
}

}  // namespace rdmabench::noise
