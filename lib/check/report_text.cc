// Text layout of `rdmabench check` (report.h).
#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "check/judge.h"
#include "check/report.h"

namespace rdmabench::check {

namespace {

void writeInventory(std::ostream& out, const Inventory& inv) {
  fmt::print(out, "\ninventory ({}/class/infiniband):\n", inv.root);
  if (inv.devices.empty()) fmt::print(out, "  no RDMA device\n");
  for (const DeviceState& d : inv.devices) {
    fmt::print(out, "  {}: firmware {}, NUMA node {}\n", d.name, d.fwVer.empty() ? "-" : d.fwVer,
               d.numaNode);
    for (const PortState& p : d.ports) {
      fmt::print(out, "    port {}: {} ({}), {}, {}", p.port, p.state, p.physState,
                 p.rate.empty() ? "rate ?" : p.rate, p.linkLayer);
      if (!p.netdev.name.empty())
        fmt::print(out, "; netdev {} {}, {}, MTU {}", p.netdev.name, p.netdev.operstate,
                   p.netdev.speedMbps > 0 ? fmt::format("{} Mb/s", p.netdev.speedMbps)
                                          : std::string("speed ?"),
                   p.netdev.mtu);
      fmt::print(out, "\n");
      for (const GidRow& g : p.gids)
        fmt::print(out, "      GID {:<3} {} {}{}\n", g.index, g.gid, g.type.empty() ? "?" : g.type,
                   g.netdev.empty() ? "" : " " + g.netdev);
    }
  }
}

void writeCounters(std::ostream& out, const CheckResult& r) {
  for (const PortCounters& pc : r.counters) {
    size_t moved = 0;
    for (const CounterDelta& d : pc.deltas)
      moved += d.delta != 0;
    fmt::print(out, "\ncounters {} over {:.2f} s: {} read, {} moved{}\n", pc.subject, pc.windowSec,
               pc.deltas.size(), moved, moved ? ":" : "");
    for (const CounterDelta& d : pc.deltas)
      if (d.delta)
        fmt::print(out, "  {:<10} {:<44} +{:<12} {:.1f}/s\n", toString(d.cls), d.key, d.delta,
                   d.perSecond);
  }
}

void writeMeasurements(std::ostream& out, const CheckResult& r) {
  for (const Measurement& m : r.measurements) {
    fmt::print(out, "\nmeasure {} ({:.1f} s):\n", m.connection, m.seconds);
    if (m.latDone)
      fmt::print(out, "  latency   p50 {:.2f} us, p99 {:.2f} us (8 B send, {} iterations, {})\n",
                 m.latP50Us, m.latP99Us, m.latIterations,
                 m.latWrong ? fmt::format("{} wrong", m.latWrong) : std::string("data checked"));
    if (m.bwDone)
      fmt::print(out, "  bandwidth {:.0f} MB/s (64 KiB {}, {} messages, {})\n", m.bwMBs,
                 m.transport == "ofi" ? "send" : "RDMA write", m.bwMessages,
                 m.bwWrong ? fmt::format("{} wrong", m.bwWrong) : std::string("data checked"));
    if (!m.error.empty()) fmt::print(out, "  failed: {}\n", m.error);
    if (!m.skipped.empty()) fmt::print(out, "  not measured: {}\n", m.skipped);
  }
}

void writeNoise(std::ostream& out, const NoiseStep& n) {
  fmt::print(out, "\nnoise ({:.1f} s on each core): mean {:.2f}% stolen\n", n.seconds,
             n.meanStolenPct);
  for (const CoreNoise& c : n.cores) {
    fmt::print(out, "  cpu {}: {:.2f}% stolen, {:.0f} detours/s, longest {:.1f} us", c.cpu,
               c.stolenPct, c.detoursPerSec, c.maxUs);
    for (size_t i = 0; i < c.sources.size() && i < 3; ++i)
      fmt::print(out, "{}{}", i ? "; " : "; top: ", c.sources[i]);
    fmt::print(out, "\n");
  }
}

void writeBaseline(std::ostream& out, const CheckResult& r) {
  if (r.baselinePath.empty()) return;
  fmt::print(out,
             "\nbaseline {} ({} healthy run(s)); rule: worse than the median by more than "
             "max({} x MAD, {}% of the median) fails; {} runs needed, newest {} used\n",
             r.baselinePath, r.baselineRuns, r.rule.k, r.rule.marginPct, r.rule.minRuns, r.window);
  for (const BaselineRow& b : r.baseline) {
    const Judgement& j = b.judgement;
    if (!j.judged) continue;
    fmt::print(out, "  {:<44} {:>14}  median {:>14}  MAD {:.3g}  limit {:>14}  {}\n",
               b.figure.key(), formatValue(b.figure, b.figure.value),
               formatValue(b.figure, j.median), j.mad, formatValue(b.figure, j.limit),
               j.worse ? "WORSE" : "ok");
  }
}

}  // namespace

void writeText(std::ostream& out, const CheckResult& r) {
  const std::string reason = r.reasonLine();
  if (!reason.empty()) fmt::print(out, "{}\n", reason);
  fmt::print(out, "# rdmabench check {} on {} at {}: {} in {:.1f} s (budget {:.0f} s)\n", r.version,
             r.node, r.date, r.healthy() ? "HEALTHY" : "UNHEALTHY", r.seconds, r.budgetSec);
  for (const Finding& f : r.findings)
    fmt::print(out, "{} {}\n", f.fails ? "FAIL" : "note", f.line());
  for (const std::string& n : r.notes)
    fmt::print(out, "note {}\n", n);
  writeInventory(out, r.inventory);
  writeCounters(out, r);
  writeMeasurements(out, r);
  if (r.noise) writeNoise(out, *r.noise);
  writeBaseline(out, r);
  for (const ExpectRow& e : r.expects)
    if (e.judged)
      fmt::print(out, "expect {} on {}: {:.4g} vs {:.4g}: {}\n", e.text, e.subject, e.value,
                 e.limit, e.met ? "met" : "NOT met");
  fmt::print(out, "\nsteps:");
  for (const StepRecord& s : r.steps)
    fmt::print(out, " {} {} {:.1f} s{};", s.name, s.status, s.seconds,
               s.shareSec > 0 ? fmt::format(" of {:.1f}", s.shareSec) : std::string());
  fmt::print(out, "\n");
  if (!r.recordPath.empty()) fmt::print(out, "recorded in {}\n", r.recordPath);
}

}  // namespace rdmabench::check
