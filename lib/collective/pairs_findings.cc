#include "collective/pairs_findings.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "collective/pairs_report.h"

namespace rdmabench::collective {

namespace {

using nlohmann::ordered_json;

const char* kNoVerdict =
    " (no verdict: its measurements lost enough CPU time to explain it, extra.descheduled)";

// Value of a cost in the figure's unit: latency us, bandwidth MB/s (cost = 1 / (MB/s)).
double shown(bool bandwidth, double cost) {
  return bandwidth ? (cost > 0 ? 1 / cost : 0) : cost;
}

const char* figureName(bool bandwidth) {
  return bandwidth ? "bandwidth" : "latency";
}

const char* unitName(bool bandwidth) {
  return bandwidth ? "MB/s" : "us";
}

// The JSON member name of a value in the figure's unit: "us" / "mb_per_s" with a prefix.
std::string unitKey(bool bandwidth, const std::string& prefix) {
  return prefix + (bandwidth ? "mb_per_s" : "us");
}

PairsFinding outlierFinding(const PairsResult& r, bool bw, const MatrixFinding& f, bool ok) {
  PairsFinding x;
  x.confirmed = ok;
  x.severity = f.severity;
  if (f.node)
    x.text = fmt::format(
        "node {} {}: {} {:.1f} {} median over its links vs {:.1f} {} for all nodes (x{:.1f}, "
        "threshold {:.1f} {})",
        f.src, pairsNodeName(r, f.src), figureName(bw), shown(bw, f.cost), unitName(bw),
        shown(bw, f.baseline), unitName(bw), f.severity, shown(bw, f.threshold), unitName(bw));
  else
    x.text = fmt::format(
        "link {} -> {} {} -> {}: {} {:.1f} {} vs {:.1f} {} for all links (x{:.1f}, threshold "
        "{:.1f} {})",
        f.src, f.dst, pairsNodeName(r, f.src), pairsNodeName(r, f.dst), figureName(bw),
        shown(bw, f.cost), unitName(bw), shown(bw, f.baseline), unitName(bw), f.severity,
        shown(bw, f.threshold), unitName(bw));
  ordered_json& j = x.json;
  j = {{"figure", figureName(bw)}, {"kind", f.node ? "node" : "link"}};
  if (f.node) {
    j["rank"] = f.src;
    j["host"] = r.hosts[f.src];
    j["address"] = r.addresses[f.src];
  } else {
    j["src"] = f.src;
    j["dst"] = f.dst;
    j["src_host"] = r.hosts[f.src];
    j["dst_host"] = r.hosts[f.dst];
  }
  j[unitKey(bw, "")] = shown(bw, f.cost);
  j[unitKey(bw, "baseline_")] = shown(bw, f.baseline);
  j[unitKey(bw, "threshold_")] = shown(bw, f.threshold);
  return x;
}

// "{0,1}" and "{h1, h2}" of one group.
std::string ranksOf(const std::vector<int>& g) {
  return fmt::format("{{{}}}", fmt::join(g, ","));
}
std::string hostsOf(const PairsResult& r, const std::vector<int>& g) {
  std::vector<std::string> names;
  for (int x : g)
    names.push_back(pairsNodeName(r, x));
  return fmt::format("{{{}}}", fmt::join(names, ", "));
}

PairsFinding cutFinding(const PairsResult& r, bool bw, const MatrixCut& c) {
  PairsFinding x;
  x.confirmed = c.confirmed;
  x.severity = c.slowMedian / c.fastMedian;
  const std::string values =
      fmt::format("{:.1f} {} median vs {:.1f} {}; gap x{:.1f} >= x{:.1f}", shown(bw, c.slowMedian),
                  unitName(bw), shown(bw, c.fastMedian), unitName(bw), c.gap, r.verdict.cutMinGap);
  if (c.groups.size() >= 2) {
    std::vector<std::string> ranks, hosts;
    for (const auto& g : c.groups) {
      ranks.push_back(ranksOf(g));
      hosts.push_back(hostsOf(r, g));
    }
    x.text = fmt::format("{} cut: ranks {} (hosts {}): {} of {} cross links x{:.1f} slower ({})",
                         figureName(bw), fmt::join(ranks, " <-> "), fmt::join(hosts, " <-> "),
                         c.slowCross, c.crossLinks, x.severity, values);
  } else {
    std::vector<std::string> links;
    for (size_t i = 0; i < c.slowLinks.size() && i < 6; ++i)
      links.push_back(fmt::format("{} -> {}", c.slowLinks[i].first, c.slowLinks[i].second));
    if (c.slowLinks.size() > 6) links.push_back("...");
    x.text = fmt::format(
        "{}: two clusters of links, {} of {} links x{:.1f} slower ({}): {} (they split no group "
        "of nodes)",
        figureName(bw), c.slowLinks.size(), r.verdict.measurements, x.severity, values,
        fmt::join(links, ", "));
  }
  ordered_json hostGroups = ordered_json::array();
  for (const auto& g : c.groups) {
    ordered_json names = ordered_json::array();
    for (int v : g)
      names.push_back(pairsNodeName(r, v));
    hostGroups.push_back(std::move(names));
  }
  ordered_json slow = ordered_json::array();
  for (auto [s, d] : c.slowLinks)
    slow.push_back({s, d});
  x.json = {{"figure", figureName(bw)},
            {"kind", "cut"},
            {"groups", c.groups},
            {"group_hosts", hostGroups},
            {"slow_links", slow},
            {"cross_links", c.crossLinks},
            {"slow_cross_links", c.slowCross},
            {unitKey(bw, "slow_median_"), shown(bw, c.slowMedian)},
            {unitKey(bw, "fast_median_"), shown(bw, c.fastMedian)},
            {"gap", c.gap},
            {"min_gap", r.verdict.cutMinGap}};
  return x;
}

PairsFinding boundFinding(const PairsResult& r, bool bw, const std::vector<BoundBreach>& b) {
  const double bound = bw ? r.verdict.bounds.minBwMBs : r.verdict.bounds.maxLatUs;
  PairsFinding x;
  size_t lost = 0;
  for (const auto& e : b)
    lost += e.confirmed ? 0 : 1;
  x.confirmed = lost < b.size();
  x.severity = bw ? bound / b[0].value : b[0].value / bound;
  x.text = fmt::format("{} {} --{} {} {} on {} of {} links{}, worst {} -> {} {} -> {}: {:.1f} {}",
                       figureName(bw), bw ? "below" : "above", bw ? "min-bw" : "max-lat", bound,
                       unitName(bw), b.size(), r.verdict.measurements,
                       lost ? fmt::format(" ({} of them lost the CPU)", lost) : std::string(),
                       b[0].src, b[0].dst, pairsNodeName(r, b[0].src), pairsNodeName(r, b[0].dst),
                       b[0].value, unitName(bw));
  ordered_json links = ordered_json::array();
  for (const auto& e : b)
    links.push_back(
        {{"src", e.src}, {"dst", e.dst}, {unitKey(bw, ""), e.value}, {"verdict", e.confirmed}});
  x.json = {{"figure", figureName(bw)},
            {"kind", "bound"},
            {bw ? "min_bw_mb_per_s" : "max_lat_us", bound},
            {"links", links}};
  return x;
}

// One figure's findings (unranked).
void addFindings(const PairsResult& r, bool bw, std::vector<PairsFinding>& out) {
  const MatrixOutliers& o = bw ? r.bwOutliers : r.latOutliers;
  const std::vector<bool>& ok = bw ? r.verdict.bwOutlierConfirmed : r.verdict.latOutlierConfirmed;
  for (size_t i = 0; i < o.ranked.size(); ++i)
    out.push_back(outlierFinding(r, bw, o.ranked[i], i >= ok.size() || ok[i]));
  const MatrixCut& c = bw ? r.verdict.bwCut : r.verdict.latCut;
  if (c.found && !c.explained) out.push_back(cutFinding(r, bw, c));
  const auto& b = bw ? r.verdict.bwBreaches : r.verdict.latBreaches;
  if (!b.empty()) out.push_back(boundFinding(r, bw, b));
}

}  // namespace

std::vector<PairsFinding> pairsFindingList(const PairsResult& r) {
  std::vector<PairsFinding> v;
  addFindings(r, true, v);
  addFindings(r, false, v);
  std::stable_sort(v.begin(), v.end(), [](const PairsFinding& a, const PairsFinding& b) {
    return a.severity > b.severity;
  });
  for (PairsFinding& f : v) {
    if (!f.confirmed) f.text += kNoVerdict;
    f.json["severity"] = f.severity;
    f.json["verdict"] = f.confirmed;
    f.json["text"] = f.text;
  }
  return v;
}

std::vector<std::string> pairsFindings(const PairsResult& r) {
  std::vector<std::string> lines;
  for (const PairsFinding& f : pairsFindingList(r))
    lines.push_back(f.text);
  return lines;
}

std::string pairsLinkFlag(const PairsResult& r, bool bw, int src, int dst) {
  const MatrixOutliers& o = bw ? r.bwOutliers : r.latOutliers;
  for (const auto& f : o.ranked)
    if (f.node && (f.src == src || f.src == dst)) return "node";
  for (const auto& f : o.ranked)
    if (!f.node && f.src == src && f.dst == dst) return "link";
  const MatrixCut& c = bw ? r.verdict.bwCut : r.verdict.latCut;
  if (c.found && !c.explained &&
      std::find(c.slowLinks.begin(), c.slowLinks.end(), std::pair{src, dst}) != c.slowLinks.end())
    return "cut";
  for (const auto& b : bw ? r.verdict.bwBreaches : r.verdict.latBreaches)
    if (b.src == src && b.dst == dst) return "bound";
  return "";
}

PairsVerdictLine pairsVerdictLine(const PairsResult& r) {
  std::vector<std::string> sure, unsure;
  for (const PairsFinding& f : pairsFindingList(r))
    (f.confirmed ? sure : unsure)
        .push_back(f.confirmed ? f.text : f.text.substr(0, f.text.size() - strlen(kNoVerdict)));
  PairsVerdictLine v;
  if (!sure.empty()) {
    v.result = PairsVerdictLine::kFail;
    v.text = fmt::format("pairs: {} outlier(s): {}", sure.size(), fmt::join(sure, "; "));
    if (!unsure.empty())
      v.text += fmt::format("; and {} finding(s) without a verdict: {}", unsure.size(),
                            fmt::join(unsure, "; "));
  } else if (!unsure.empty()) {
    v.result = PairsVerdictLine::kNoVerdict;
    v.text = fmt::format(
        "pairs: no outlier verdict: {} finding(s) rest on measurements that lost enough CPU "
        "time to explain them ({} of {} pair measurements were descheduled): {}; rerun with -e "
        "on, on idle cores (--cpu) or with fewer ranks per host",
        unsure.size(), r.verdict.descheduledCount, r.verdict.measurements, fmt::join(unsure, "; "));
  }
  return v;
}

}  // namespace rdmabench::collective
