#include "collective/pairs_report.h"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collective/pairs_findings.h"
#include "common/error.h"
#include "common/text_escape.h"
#include "report/csv_writer.h"
#include "report/format_util.h"
#include "report/report.h"

namespace rdmabench::collective {

namespace {

using nlohmann::ordered_json;

// A message on one line (the `# error:` line of a table).
std::string oneLine(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

bool distinctHosts(const PairsResult& r) {
  return std::set<std::string>(r.hosts.begin(), r.hosts.end()).size() == r.hosts.size();
}

ordered_json numberOrNull(double v) {
  return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr);
}

ordered_json matrixJson(const std::vector<std::vector<double>>& m) {
  ordered_json rows = ordered_json::array();
  for (const auto& row : m) {
    ordered_json j = ordered_json::array();
    for (double v : row)
      j.push_back(numberOrNull(v));
    rows.push_back(std::move(j));
  }
  return rows;
}

// ", --max-lat 50 us, --min-bw 1000 MB/s" for the bounds given.
std::string boundsText(const PairsBounds& b) {
  std::string t;
  if (b.maxLatUs > 0) t += fmt::format(", --max-lat {} us", b.maxLatUs);
  if (b.minBwMBs > 0) t += fmt::format(", --min-bw {} MB/s", b.minBwMBs);
  return t;
}

void writeMatrix(std::ostream& out, const PairsResult& r, const char* title,
                 const std::vector<std::vector<double>>& m, int precision) {
  out << "# " << title << " (row = src, column = dst)\n#   src\\dst";
  for (int d = 0; d < r.ranks; ++d)
    out << fmt::format(" {:>9}", d);
  out << "\n";
  for (int s = 0; s < r.ranks; ++s) {
    out << fmt::format("# {:>9}", s);
    for (int d = 0; d < r.ranks; ++d)
      out << (s == d ? fmt::format(" {:>9}", "-") : fmt::format(" {:>9.{}f}", m[s][d], precision));
    out << "\n";
  }
}

}  // namespace

std::string pairsNodeName(const PairsResult& r, int rank) {
  if (rank < 0 || rank >= static_cast<int>(r.hosts.size())) return fmt::format("rank {}", rank);
  if (distinctHosts(r)) return r.hosts[rank];
  return fmt::format("{} ({})", r.hosts[rank], r.addresses[rank]);
}

const std::vector<std::string>& pairsFormatNames() {
  static const std::vector<std::string> names{"table", "json", "csv"};
  return names;
}

namespace {

// The lines under the header that say how each figure was measured (the method, its counts)
// and how outliers are judged.
void writeMethodLines(std::ostream& out, const PairsResult& r) {
  const int n = r.ranks;
  out << fmt::format(
      "# pairs: {} ranks, {} rounds of disjoint pairs (round-robin, circle method), {:.1f} s\n"
      "# latency: ping-pong of {} B, {} iterations after {} warmup, {} [us]\n",
      n, r.rounds, r.seconds, r.latBytes, r.latIterations, r.latWarmup,
      r.info.roundTrip ? "round trip (RDMA read)" : "one-way = RTT/2");
  if (r.stream)
    out << fmt::format(
        "# bandwidth: stream mode, {} posts in flight, {} x {} B to delivery after {} warmup "
        "messages [MB/s = 10^6 B/s]\n",
        r.window, r.bwIterations, r.bwBytes, r.bwWarmup);
  else
    out << fmt::format(
        "# bandwidth: stream of {} x {} B per iteration to delivery, {} iterations after {} "
        "warmup [MB/s = 10^6 B/s]\n",
        r.window, r.bwBytes, r.bwIterations, r.bwWarmup);
  out << fmt::format(
      "# outliers: k = {}, two clusters of links at a gap >= x{:.1f}{} (docs/fabric-map.md); "
      "flags: node = a node of it is slow, link = the link is slow, cut = a slow link of a cut, "
      "bound = beyond a bound\n",
      r.outlierK, r.verdict.cutMinGap, boundsText(r.verdict.bounds));
}

// The table: the shared header block, the method lines, one row per ordered pair, the
// matrices (up to 16 ranks) and the outliers.
void writePairsTable(std::ostream& out, const PairsResult& r) {
  const int n = r.ranks;
  // The shared header block, with this command's title and units; the columns follow.
  out << report::detail::tableHeaderBlock(
      r.info,
      r.info.roundTrip ? "every ordered pair's latency (round trip, RDMA read) and bandwidth"
                       : "every ordered pair's latency (one-way = RTT/2) and bandwidth",
      "latency in microseconds (median, min, avg; p99 = nearest-rank percentile), bandwidth "
      "in MB/s = 10^6 B/s");
  writeMethodLines(out, r);
  size_t hw = 8;
  for (int s = 0; s < n; ++s)
    hw = std::max(hw, pairsNodeName(r, s).size());
  out << fmt::format("{:>5} {:>5} {:>{}} {:>{}} {:>14} {:>11} {:>11} {:>11} {:>12} {:>8} {:>8}\n",
                     "src", "dst", "src_host", hw, "dst_host", hw, "lat_median[us]", "lat_min[us]",
                     "lat_avg[us]", "lat_p99[us]", "BW[MB/s]", "lat_flag", "bw_flag");
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      std::string lf = pairsLinkFlag(r, false, s, d), bf = pairsLinkFlag(r, true, s, d);
      out << fmt::format(
          "{:>5} {:>5} {:>{}} {:>{}} {:>14.2f} {:>11.2f} {:>11.2f} {:>11.2f} {:>12.1f} {:>8} "
          "{:>8}\n",
          s, d, pairsNodeName(r, s), hw, pairsNodeName(r, d), hw, r.latMedianUs[s][d],
          r.latMinUs[s][d], r.latAvgUs[s][d], r.latP99Us[s][d], r.bwMBs[s][d],
          lf.empty() ? "-" : lf, bf.empty() ? "-" : bf);
    }
  if (n <= 16) {
    writeMatrix(out, r, "latency median [us]", r.latMedianUs, 2);
    writeMatrix(out, r, "bandwidth [MB/s]", r.bwMBs, 1);
  }
  std::vector<std::string> lines = pairsFindings(r);
  out << fmt::format("# outliers: {}\n", lines.empty() ? "none" : std::to_string(lines.size()));
  for (size_t i = 0; i < lines.size(); ++i)
    out << fmt::format("#  {}. {}\n", i + 1, lines[i]);
  const PairsVerdictLine v = pairsVerdictLine(r);
  out << "# verdict: "
      << (v.result == PairsVerdictLine::kPass   ? "pass"
          : v.result == PairsVerdictLine::kFail ? "fail"
                                                : "none (every finding rests on measurements "
                                                  "that lost enough CPU time to explain it)")
      << "\n";
  if (r.failed) {
    out << fmt::format("# measured: {} of {} rounds (the run failed; later pairs are nan)\n",
                       r.roundsMeasured, r.rounds);
    if (!r.error.empty()) out << "# error: " << oneLine(r.error) << "\n";
  }
}

// The verdict as JSON: {"result": "pass" | "fail" | "none", "text"}.
ordered_json verdictJson(const PairsResult& r) {
  const PairsVerdictLine v = pairsVerdictLine(r);
  static const char* names[] = {"pass", "fail", "none"};
  return {{"result", names[v.result]}, {"text", v.text}};
}

// The outlier thresholds of both matrices (bandwidth as MB/s, not as cost).
ordered_json thresholdsJson(const PairsResult& r) {
  auto inv = [](double c) { return c > 0 ? 1 / c : 0.0; };
  return {{"k", r.outlierK},
          {"lat_node_baseline_us", r.latOutliers.nodeBaseline},
          {"lat_node_threshold_us", r.latOutliers.nodeThreshold},
          {"lat_link_baseline_us", r.latOutliers.linkBaseline},
          {"lat_link_threshold_us", r.latOutliers.linkThreshold},
          {"bw_node_baseline_mb_per_s", inv(r.bwOutliers.nodeBaseline)},
          {"bw_node_threshold_mb_per_s", inv(r.bwOutliers.nodeThreshold)},
          {"bw_link_baseline_mb_per_s", inv(r.bwOutliers.linkBaseline)},
          {"bw_link_threshold_mb_per_s", inv(r.bwOutliers.linkThreshold)},
          {"cut_min_gap", r.verdict.cutMinGap},
          {"max_lat_us",
           numberOrNull(r.verdict.bounds.maxLatUs > 0 ? r.verdict.bounds.maxLatUs : std::nan(""))},
          {"min_bw_mb_per_s",
           numberOrNull(r.verdict.bounds.minBwMBs > 0 ? r.verdict.bounds.minBwMBs : std::nan(""))},
          {"descheduled_measurements", r.verdict.descheduledCount}};
}

void writePairsJson(std::ostream& out, const PairsResult& r) {
  const int n = r.ranks;
  ordered_json doc;
  doc["tool"] = "rdmabench";
  doc["version"] = report::detail::toolVersion(r.info);
  doc["run"] = report::detail::runJson(r.info);
  ordered_json ranks = ordered_json::array();
  for (int s = 0; s < n; ++s)
    ranks.push_back({{"rank", s}, {"host", r.hosts[s]}, {"address", r.addresses[s]}});
  doc["ranks"] = ranks;
  ordered_json links = ordered_json::array();
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d)
        links.push_back({{"src", s},
                         {"dst", d},
                         {"src_host", r.hosts[s]},
                         {"dst_host", r.hosts[d]},
                         {"src_address", r.addresses[s]},
                         {"dst_address", r.addresses[d]},
                         {"lat_median_us", numberOrNull(r.latMedianUs[s][d])},
                         {"lat_min_us", numberOrNull(r.latMinUs[s][d])},
                         {"lat_avg_us", numberOrNull(r.latAvgUs[s][d])},
                         {"lat_p99_us", numberOrNull(r.latP99Us[s][d])},
                         {"mb_per_s", numberOrNull(r.bwMBs[s][d])},
                         {"lat_outlier", pairsLinkFlag(r, false, s, d)},
                         {"bw_outlier", pairsLinkFlag(r, true, s, d)}});
  doc["links"] = links;
  doc["matrix"] = {{"lat_median_us", matrixJson(r.latMedianUs)}, {"mb_per_s", matrixJson(r.bwMBs)}};
  doc["thresholds"] = thresholdsJson(r);
  ordered_json outliers = ordered_json::array();
  for (PairsFinding& f : pairsFindingList(r))
    outliers.push_back(std::move(f.json));
  doc["outliers"] = std::move(outliers);
  doc["verdict"] = verdictJson(r);
  if (r.failed) {
    doc["rounds_measured"] = r.roundsMeasured;
    doc["error"] = r.error;
  }
  out << report::detail::dumpJson(doc) << "\n";
}

void writePairsCsv(std::ostream& out, const PairsResult& r) {
  const int n = r.ranks;
  report::CsvWriter csv(out);
  csv.row({"src_rank", "dst_rank", "src_host", "dst_host", "src_address", "dst_address",
           "lat_bytes", "lat_median_us", "lat_min_us", "lat_avg_us", "lat_p99_us", "bw_bytes",
           "mb_per_s", "lat_outlier", "bw_outlier"});
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d)
        csv.record(s, d, r.hosts[s], r.hosts[d], r.addresses[s], r.addresses[d], r.latBytes,
                   r.latMedianUs[s][d], r.latMinUs[s][d], r.latAvgUs[s][d], r.latP99Us[s][d],
                   r.bwBytes, r.bwMBs[s][d], pairsLinkFlag(r, false, s, d),
                   pairsLinkFlag(r, true, s, d));
  // A failed run: the CSV carries no error column (its layout is fixed); stderr says why.
}

}  // namespace

void writePairs(std::ostream& out, const std::string& format, const PairsResult& r) {
  if (format == "table")
    writePairsTable(out, r);
  else if (format == "json")
    writePairsJson(out, r);
  else if (format == "csv")
    writePairsCsv(out, r);
  else
    throw UsageError(fmt::format("--format {}: no pairs layout (valid: table, json, csv)", format));
  out.flush();
}

std::string pairsHeatMapScript(const PairsResult& r, const std::string& output) {
  std::string lower = output;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  auto endsWith = [&](const char* e) {
    const std::string s(e);
    return lower.size() > s.size() && lower.compare(lower.size() - s.size(), s.size(), s) == 0;
  };
  const bool png = endsWith(".png");
  if (!png && !endsWith(".svg"))
    throw UsageError(fmt::format("--plot {}: must end in .png or .svg", output));
  const int n = r.ranks;
  const int width = std::clamp(300 + 60 * n, 700, 2400) * 2,
            height = std::clamp(200 + 45 * n, 400, 1600);
  std::ostringstream s;
  s << "# rdmabench pairs heat map (gnuplot script; data inline)\n";
  if (png)
    s << fmt::format("set terminal pngcairo size {},{} noenhanced font ',9'\n", width, height);
  else
    s << fmt::format("set terminal svg size {},{} dynamic noenhanced font 'sans,9'\n", width,
                     height);
  s << "set output " << gnuplotOutputPath(output, "--plot") << "\n";
  for (const char* name : {"lat", "bw"}) {
    const auto& m = std::string(name) == "lat" ? r.latMedianUs : r.bwMBs;
    s << "$" << name << " << EOD\n";
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b)
        s << (b ? " " : "")
          << (a == b || !std::isfinite(m[a][b]) ? std::string("NaN")
                                                : fmt::format("{:.6g}", m[a][b]));
      s << "\n";
    }
    s << "EOD\n";
  }
  std::string tics;
  for (int a = 0; a < n; ++a)
    tics += fmt::format("{}{} {}", a ? ", " : "",
                        gnuplotString(fmt::format("{}: {}", a, pairsNodeName(r, a))), a);
  s << "set xtics (" << tics << ") rotate by 45 right\n";
  s << "set ytics (" << tics << ")\n";
  s << fmt::format("set xrange [-0.5:{}.5]\nset yrange [{}.5:-0.5]\n", n - 1, n - 1);
  s << "set xlabel 'dst'\nset ylabel 'src'\nset size ratio -1\nset tics nomirror\n"
       "set datafile missing 'NaN'\nunset key\n";
  s << "set multiplot layout 1,2 title "
    << gnuplotString(
           fmt::format("rdmabench pairs: {} ranks over {} (row = src, column = dst; grey = "
                       "not measured)",
                       n, r.info.transport))
    << "\n";
  s << "set object 1 rectangle from graph 0,0 to graph 1,1 behind fillcolor rgb '#dddddd' "
       "fillstyle solid noborder\n";
  s << "set palette defined (0 '#2166ac', 0.5 '#f7f7f7', 1 '#b2182b')\n";
  s << "set title "
    << gnuplotString(fmt::format("latency median, us ({} B ping-pong, RTT/2)", r.latBytes))
    << "\nset cblabel 'us'\n";
  s << "plot $lat matrix using 1:2:3 with image\n";
  s << "set palette defined (0 '#b2182b', 0.5 '#f7f7f7', 1 '#2166ac')\n";
  s << "set title "
    << gnuplotString(fmt::format("bandwidth, MB/s ({} x {} B stream)", r.window, r.bwBytes))
    << "\nset cblabel 'MB/s'\n";
  s << "plot $bw matrix using 1:2:3 with image\n";
  s << "unset multiplot\nset output\n";
  return s.str();
}

}  // namespace rdmabench::collective
