#include "noise/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "common/json_read.h"
#include "common/text_escape.h"
#include "report/format_util.h"

namespace rdmabench::noise {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr double kMaxFigure = 1e15;

}  // namespace

json RankResult::toJson() const {
  json d = json::array();
  for (const auto& h : delays)
    d.push_back(h.toJson());
  json j{{"rank", rank},
         {"host", host},
         {"cpu", cpu},
         {"pid", pid},
         {"pinning", pinning},
         {"median_step_ns", medianStepNs},
         {"threshold_ns", thresholdNs},
         {"iterations", iterations},
         {"seconds", stats.seconds},
         {"detours", stats.count},
         {"detours_per_s", stats.perSecond},
         {"stolen_pct", stats.stolenPct},
         {"max_us", stats.maxUs},
         {"p50_us", stats.p50Us},
         {"p99_us", stats.p99Us},
         {"p999_us", stats.p999Us},
         {"mean_us", stats.meanUs},
         {"stored", stored},
         {"interrupted", interrupted},
         {"lengths", lengths.toJson()},
         {"delays", d}};
  if (fwq) j["fwq"] = fwq->toJson();
  return j;
}

RankResult RankResult::fromJson(const json& j, const std::string& what, size_t predictTimes) {
  if (!j.is_object()) throw ProtocolError(fmt::format("{}: not a JSON object", what));
  RankResult r;
  r.rank = static_cast<int>(jsonInt(j, "rank", what, 0, 0, 1 << 24));
  r.host = jsonString(j, "host", what, "", 256);
  r.cpu = static_cast<int>(jsonInt(j, "cpu", what, -1, -1, 1 << 20));
  r.pid = static_cast<int>(jsonInt(j, "pid", what, 0, 0, 1 << 30));
  r.pinning = jsonString(j, "pinning", what, "", 256);
  r.medianStepNs = jsonDouble(j, "median_step_ns", what, 0, 0, kMaxFigure);
  r.thresholdNs = jsonInt(j, "threshold_ns", what, 0, 0, INT64_MAX / 2);
  r.iterations = jsonUint(j, "iterations", what, 0);
  r.stats.seconds = jsonDouble(j, "seconds", what, 0, 0, kMaxFigure);
  r.stats.count = jsonUint(j, "detours", what, 0);
  r.stats.perSecond = jsonDouble(j, "detours_per_s", what, 0, 0, kMaxFigure);
  r.stats.stolenPct = jsonDouble(j, "stolen_pct", what, 0, 0, 100.0001);
  r.stats.maxUs = jsonDouble(j, "max_us", what, 0, 0, kMaxFigure);
  r.stats.p50Us = jsonDouble(j, "p50_us", what, 0, 0, kMaxFigure);
  r.stats.p99Us = jsonDouble(j, "p99_us", what, 0, 0, kMaxFigure);
  r.stats.p999Us = jsonDouble(j, "p999_us", what, 0, 0, kMaxFigure);
  r.stats.meanUs = jsonDouble(j, "mean_us", what, 0, 0, kMaxFigure);
  r.stored = jsonUint(j, "stored", what, 0);
  r.interrupted = jsonBool(j, "interrupted", what, false);
  if (const json* l = jsonFind(j, "lengths", what)) r.lengths = LogHistogram::fromJson(*l, what);
  if (const json* d = jsonArray(j, "delays", what, 16)) {
    if (d->size() != predictTimes)
      throw ProtocolError(
          fmt::format("{}: {} delay histograms, expected {}", what, d->size(), predictTimes));
    for (const auto& h : *d)
      r.delays.push_back(LogHistogram::fromJson(h, what));
  } else {
    r.delays.resize(predictTimes);
  }
  if (const json* f = jsonObject(j, "fwq", what)) {
    FwqStats s;
    s.quanta = jsonUint(*f, "quanta", what, 0);
    s.minUs = jsonDouble(*f, "min_us", what, 0, 0, kMaxFigure);
    s.medianUs = jsonDouble(*f, "median_us", what, 0, 0, kMaxFigure);
    s.p99Us = jsonDouble(*f, "p99_us", what, 0, 0, kMaxFigure);
    s.maxUs = jsonDouble(*f, "max_us", what, 0, 0, kMaxFigure);
    s.meanUs = jsonDouble(*f, "mean_us", what, 0, 0, kMaxFigure);
    s.stdevUs = jsonDouble(*f, "stdev_us", what, 0, 0, kMaxFigure);
    s.noiseRatio = jsonDouble(*f, "noise_ratio", what, 0, 0, kMaxFigure);
    r.fwq = s;
  }
  return r;
}

json NodeAttribution::toJson() const {
  json cs = json::array();
  for (const auto& c : cpus) {
    json top = json::array();
    for (const auto& s : c.top)
      top.push_back(s.toJson());
    cs.push_back({{"cpu", c.cpu}, {"sources", top}});
  }
  return {{"host", host},       {"seconds", seconds},
          {"samples", samples}, {"reader_ms_per_sample", readerMsPerSample},
          {"unseen", unseen},   {"cpus", cs}};
}

NodeAttribution NodeAttribution::fromJson(const json& j, const std::string& what) {
  if (!j.is_object()) throw ProtocolError(fmt::format("{}: not a JSON object", what));
  NodeAttribution a;
  a.host = jsonString(j, "host", what, "", 256);
  a.seconds = jsonDouble(j, "seconds", what, 0, 0, kMaxFigure);
  a.samples = static_cast<int>(jsonInt(j, "samples", what, 0, 0, 1 << 24));
  a.readerMsPerSample = jsonDouble(j, "reader_ms_per_sample", what, 0, 0, kMaxFigure);
  if (const json* u = jsonArray(j, "unseen", what, 32))
    for (const auto& s : *u) {
      if (!s.is_string()) throw ProtocolError(fmt::format("{}: unseen: not a string", what));
      a.unseen.push_back(escapeForLog(s.get<std::string>()));
    }
  if (const json* cs = jsonArray(j, "cpus", what, 4096))
    for (const auto& c : *cs) {
      CpuSources cpu;
      cpu.cpu = static_cast<int>(jsonInt(c, "cpu", what, -1, -1, 1 << 20));
      if (const json* top = jsonArray(c, "sources", what, 64))
        for (const auto& s : *top) {
          NoiseSource n;
          n.kind = jsonString(s, "kind", what, "", 32);
          n.name = jsonString(s, "name", what, "", 512);
          n.cpu = static_cast<int>(jsonInt(s, "cpu", what, -1, -1, 1 << 20));
          n.pid = static_cast<int>(jsonInt(s, "pid", what, 0, 0, 1 << 30));
          n.pct = jsonDouble(s, "percent", what, 0, 0, kMaxFigure);
          n.perSecond = jsonDouble(s, "per_second", what, 0, 0, kMaxFigure);
          n.text = escapeForLog(jsonString(s, "text", what, "", 1024));
          cpu.top.push_back(std::move(n));
        }
      a.cpus.push_back(std::move(cpu));
    }
  return a;
}

namespace {

// One node's (or the job's) summary of `v`: means over its cores, percentiles of its detours
// pooled.
NodeSummary summarizeGroup(const std::string& host, const std::vector<const RankResult*>& v) {
  NodeSummary s;
  s.host = host;
  s.ranks = static_cast<int>(v.size());
  LogHistogram pooled;
  for (const RankResult* x : v) {
    s.perSecond += x->stats.perSecond;
    s.stolenPct += x->stats.stolenPct;
    s.maxStolenPct = std::max(s.maxStolenPct, x->stats.stolenPct);
    s.maxUs = std::max(s.maxUs, x->stats.maxUs);
    pooled.merge(x->lengths);
  }
  if (!v.empty()) {
    s.perSecond /= static_cast<double>(v.size());
    s.stolenPct /= static_cast<double>(v.size());
  }
  s.p50Us = pooled.quantileNs(0.5) / 1e3;
  s.p99Us = pooled.quantileNs(0.99) / 1e3;
  s.p999Us = pooled.quantileNs(0.999) / 1e3;
  return s;
}

// The report's warnings: oversubscribed cores, a threshold too close to the clock step, ranks
// that kept fewer detours than they saw or were interrupted.
void addWarnings(NoiseReport& r) {
  std::map<std::string, std::map<int, int>> perCore;
  for (const auto& x : r.ranks)
    if (x.cpu >= 0) ++perCore[x.host][x.cpu];
  for (const auto& [host, cores] : perCore)
    for (const auto& [cpu, n] : cores)
      if (n > 1)
        r.warnings.push_back(fmt::format(
            "oversubscribed: {} ranks share cpu {} of {} (they measure each other)", n, cpu, host));
  for (const auto& x : r.ranks)
    if (static_cast<double>(x.thresholdNs) < 2 * x.medianStepNs) {
      r.warnings.push_back(fmt::format(
          "threshold {:.3f} us is below twice the loop's median step ({:.0f} ns, rank {}): "
          "ordinary clock reads count as detours; raise --threshold",
          static_cast<double>(x.thresholdNs) / 1e3, x.medianStepNs, x.rank));
      break;
    }
  int truncated = 0, interrupted = 0;
  for (const auto& x : r.ranks) {
    if (x.stored < x.stats.count) ++truncated;
    if (x.interrupted) ++interrupted;
  }
  if (truncated)
    r.warnings.push_back(fmt::format(
        "{} rank(s) saw more detours than they keep: percentiles and the model use the first "
        "ones only",
        truncated));
  if (interrupted)
    r.warnings.push_back(fmt::format("{} rank(s) were interrupted before --duration", interrupted));
}

}  // namespace

NoiseReport buildReport(const NoiseConfig& config, std::vector<RankResult> ranks,
                        std::vector<NodeAttribution> attribution) {
  NoiseReport r;
  r.config = config;
  r.worldSize = static_cast<int>(ranks.size());
  std::sort(ranks.begin(), ranks.end(),
            [](const RankResult& a, const RankResult& b) { return a.rank < b.rank; });
  r.ranks = std::move(ranks);
  r.attribution = std::move(attribution);
  // Per node, in order of first rank.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const RankResult*>> byHost;
  for (const auto& x : r.ranks) {
    if (!byHost.count(x.host)) order.push_back(x.host);
    byHost[x.host].push_back(&x);
  }
  std::vector<const RankResult*> all;
  for (const auto& x : r.ranks)
    all.push_back(&x);
  for (const auto& h : order)
    r.nodes.push_back(summarizeGroup(h, byHost[h]));
  r.job = summarizeGroup("job", all);
  std::vector<double> coreFig, nodeFig;
  for (const auto& x : r.ranks)
    coreFig.push_back(x.stats.stolenPct);
  for (const auto& n : r.nodes)
    nodeFig.push_back(n.stolenPct);
  r.coreRule = flagNoisy(coreFig, config.outlierK, kStolenPctFloor);
  r.nodeRule = flagNoisy(nodeFig, config.outlierK, kStolenPctFloor);
  // The collective's cost: the job's N, then --predict-ranks, for every T.
  std::vector<int> ns{r.worldSize};
  for (int n : config.predictRanks)
    if (std::find(ns.begin(), ns.end(), n) == ns.end()) ns.push_back(n);
  for (size_t t = 0; t < config.predictTimesUs.size(); ++t) {
    LogHistogram pooled;
    for (const auto& x : r.ranks)
      if (t < x.delays.size()) pooled.merge(x.delays[t]);
    if (pooled.count() == 0) continue;
    for (int n : ns)
      r.predictions.push_back(predict(pooled, n, config.predictTimesUs[t]));
  }
  addWarnings(r);
  return r;
}

const CpuSources* sourcesOf(const NoiseReport& r, const RankResult& rank) {
  for (const auto& a : r.attribution) {
    if (a.host != rank.host) continue;
    for (const auto& c : a.cpus)
      if (c.cpu == rank.cpu) return &c;
  }
  return nullptr;
}

std::vector<std::string> noiseFindings(const NoiseReport& r) {
  std::vector<std::string> out;
  for (size_t i : r.nodeRule.outliers) {
    const NodeSummary& n = r.nodes[i];
    out.push_back(fmt::format(
        "node {}: {:.3f}% stolen (mean of {} core(s)), {:.0f} detours/s vs baseline {:.3f}% "
        "(threshold {:.3f}%)",
        n.host, n.stolenPct, n.ranks, n.perSecond, r.nodeRule.baseline, r.nodeRule.threshold));
  }
  for (size_t i : r.coreRule.outliers) {
    const RankResult& x = r.ranks[i];
    std::string line = fmt::format(
        "node {} cpu {} (rank {}): {:.3f}% stolen, {:.0f} detours/s, longest {:.1f} us vs "
        "baseline {:.3f}% (threshold {:.3f}%)",
        x.host, x.cpu, x.rank, x.stats.stolenPct, x.stats.perSecond, x.stats.maxUs,
        r.coreRule.baseline, r.coreRule.threshold);
    if (const CpuSources* s = sourcesOf(r, x); s && !s->top.empty())
      line += "; top source: " + s->top.front().text;
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace rdmabench::noise
