#include "check/judge.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace rdmabench::check {

std::string Figure::label() const {
  if (name == "lat_p50_us") return "p50 latency";
  if (name == "lat_p99_us") return "p99 latency";
  if (name == "bw_mb_s") return "bandwidth";
  if (name == "noise_stolen_pct") return "OS noise";
  if (name.rfind("rate ", 0) == 0) return name.substr(5) + " rate";
  return name;
}

std::string Figure::unit() const {
  if (name.rfind("lat_", 0) == 0) return "us";
  if (name == "bw_mb_s") return "MB/s";
  if (name == "noise_stolen_pct") return "% stolen";
  return "/s";
}

bool CheckResult::healthy() const {
  return std::none_of(findings.begin(), findings.end(), [](const Finding& f) { return f.fails; });
}

std::string CheckResult::reasonLine() const {
  std::vector<const Finding*> failing;
  for (const Finding& f : findings)
    if (f.fails) failing.push_back(&f);
  if (failing.empty()) return "";
  std::string line = "rdmabench check: " + failing[0]->line();
  if (failing.size() > 1) line += fmt::format(" (+{} more)", failing.size() - 1);
  return line;
}

std::string formatValue(const Figure& f, double v) {
  const std::string u = f.unit();
  if (u == "us") return fmt::format("{:.{}f} us", v, v < 100 ? 1 : 0);
  if (u == "MB/s") return fmt::format("{:.0f} MB/s", v);
  if (u == "% stolen") return fmt::format("{:.2f}% stolen", v);
  return fmt::format("{:.1f}/s", v);
}

void judgeInventory(CheckResult& r, const std::vector<std::string>& named, bool requireRdma) {
  for (const std::string& d : named)
    if (std::none_of(r.inventory.devices.begin(), r.inventory.devices.end(),
                     [&](const DeviceState& x) { return x.name == d; }))
      r.findings.push_back(
          {d, fmt::format("no such RDMA device under {}/class/infiniband (-d)", r.inventory.root),
           "rdma", true});
  if (r.inventory.devices.empty() && named.empty()) {
    if (requireRdma)
      r.findings.push_back({"node", "no RDMA device (--require-rdma)", "rdma", true});
    else
      r.notes.push_back(fmt::format(
          "no RDMA device under {}/class/infiniband: nothing to check (--require-rdma makes this "
          "unhealthy)",
          r.inventory.root));
  }
  for (PortState* p : r.inventory.ports()) {
    if (!p->active()) {
      std::string t = fmt::format("port state {}", p->state.empty() ? "unknown" : p->state);
      if (!p->physState.empty()) t += fmt::format(" (physical state {})", p->physState);
      if (!p->netdev.name.empty())
        t += fmt::format(", netdev {} {}", p->netdev.name, p->netdev.operstate);
      r.findings.push_back({p->name(), t, "port", true});
    } else if (!p->physState.empty() && p->physState != "LinkUp") {
      r.findings.push_back({p->name(), "physical state " + p->physState, "port", true});
    } else if (p->ethernet() && !p->netdev.name.empty() && p->netdev.operstate != "up" &&
               p->netdev.operstate != "unknown") {
      r.findings.push_back({p->name(),
                            fmt::format("netdev {} {}", p->netdev.name, p->netdev.operstate),
                            "port", true});
    }
  }
}

void judgeCounters(CheckResult& r, const std::map<std::string, uint64_t>& limits) {
  for (const PortCounters& pc : r.counters) {
    std::string rose;
    int n = 0;
    for (const CounterDelta& d : pc.deltas) {
      if (d.reset)
        r.notes.push_back(fmt::format("{}: {} went backwards ({} -> {}): reset or wrapped",
                                      pc.subject, d.key, d.before, d.after));
      if (d.cls != CounterClass::kError || d.delta == 0) continue;
      const auto lim = limits.find(d.key);
      if (lim != limits.end() && d.delta <= lim->second) continue;
      rose += fmt::format("{}{} +{}", n++ ? ", " : "", d.key, d.delta);
      if (lim != limits.end()) rose += fmt::format(" (limit {})", lim->second);
    }
    if (n)
      r.findings.push_back({pc.subject,
                            fmt::format("error counter{} rose in {:.1f} s: {}", n > 1 ? "s" : "",
                                        pc.windowSec, rose),
                            "counter", true});
  }
}

void judgeMeasurements(CheckResult& r) {
  for (const Measurement& m : r.measurements) {
    if (!m.skipped.empty())
      r.notes.push_back(fmt::format("measure {}: not measured: {}", m.subject, m.skipped));
    if (!m.error.empty())
      r.findings.push_back({m.subject,
                            (m.peer.empty() ? "loopback measurement failed: "
                                            : "measurement against the peer failed: ") +
                                m.error,
                            "measure", true});
    if (m.latWrong || m.bwWrong)
      r.findings.push_back({m.subject,
                            fmt::format("wrong data under --check: {} latency iteration(s), {} "
                                        "bandwidth message(s)",
                                        m.latWrong, m.bwWrong),
                            "data", true});
  }
}

std::vector<Figure> collectFigures(const CheckResult& r) {
  std::vector<Figure> out;
  for (const Measurement& m : r.measurements) {
    if (m.latDone) {
      out.push_back({m.subject, "lat_p50_us", m.latP50Us, false});
      out.push_back({m.subject, "lat_p99_us", m.latP99Us, false});
    }
    if (m.bwDone) out.push_back({m.subject, "bw_mb_s", m.bwMBs, true});
  }
  for (const PortCounters& pc : r.counters)
    for (const CounterDelta& d : pc.deltas)
      if (d.cls == CounterClass::kCongestion)
        out.push_back({pc.subject, "rate " + d.key, d.perSecond, false});
  if (r.noise && !r.noise->cores.empty())
    out.push_back({"node", "noise_stolen_pct", r.noise->meanStolenPct, false});
  return out;
}

namespace {

const PortState* findPort(CheckResult& r, const std::string& subject) {
  for (PortState* p : r.inventory.ports())
    if (p->name() == subjectPort(subject)) return p;
  return nullptr;
}

}  // namespace

void judgeExpectations(CheckResult& r, const std::vector<Expectation>& expects) {
  for (const Expectation& e : expects) {
    const std::string name = e.figure == "bw" ? "bw_mb_s" : e.figure + "_us";
    if (std::none_of(r.figures.begin(), r.figures.end(),
                     [&](const Figure& f) { return f.name == name; }))
      r.notes.push_back(fmt::format("--expect '{}': no port measured it: not judged", e.text));
    for (const Figure& f : r.figures) {
      if (f.name != name) continue;
      const PortState* p = findPort(r, f.subject);
      ExpectRow row{e.text, f.subject, f.value, expectationLimit(e, p ? p->rateGbps : 0)};
      row.judged = row.limit >= 0;
      if (!row.judged) {
        r.notes.push_back(
            fmt::format("--expect '{}': {} states no link rate: not judged", e.text, f.subject));
      } else {
        row.met = meets(e, f.value, row.limit);
        if (!row.met)
          r.findings.push_back(
              {f.subject,
               fmt::format("{} {}, limit {} {} (--expect '{}')", f.label(), formatValue(f, f.value),
                           e.op, formatValue(f, row.limit), e.text),
               "expect", true});
      }
      r.expects.push_back(std::move(row));
    }
  }
}

void judgeBaseline(CheckResult& r, const History& h) {
  r.baselinePath = h.path;
  r.baselineRuns = static_cast<size_t>(
      std::count_if(h.runs.begin(), h.runs.end(), [](const HistoryRun& x) { return x.healthy; }));
  size_t unjudged = 0;
  std::string example;
  for (const Figure& f : r.figures) {
    BaselineRow row{f, judge(f.value, h.values(f.key(), r.window), f.higherIsBetter, r.rule)};
    if (!row.judgement.judged) {
      if (!unjudged++) example = fmt::format("{} ({})", f.key(), row.judgement.reason);
    } else if (row.judgement.worse) {
      const Judgement& j = row.judgement;
      r.findings.push_back(
          {f.subject,
           fmt::format("{} {}, baseline {} [{}]", f.label(), formatValue(f, f.value),
                       formatValue(f, j.median),
                       j.median != 0 ? fmt::format("{:+.0f}%", j.changePct) : "was 0"),
           "baseline", true});
    }
    r.baseline.push_back(std::move(row));
  }
  if (unjudged)
    r.notes.push_back(fmt::format(
        "baseline {}: could not judge {} of {} figure(s), too few healthy runs (e.g. {}); "
        "record more with --record",
        h.path, unjudged, r.figures.size(), example));
}

void orderFindings(CheckResult& r) {
  std::stable_partition(r.findings.begin(), r.findings.end(),
                        [](const Finding& f) { return f.fails; });
}

}  // namespace rdmabench::check
