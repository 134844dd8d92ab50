// JSON layout of `rdmabench check` (report.h): everything the text shows and every counter.
#include "check/report.h"

namespace rdmabench::check {

namespace {

using nlohmann::json;

json portJson(const PortState& p) {
  json gids = json::array();
  for (const GidRow& g : p.gids)
    gids.push_back({{"index", g.index}, {"gid", g.gid}, {"type", g.type}, {"netdev", g.netdev}});
  json j = {{"port", p.port}, {"state", p.state},        {"phys_state", p.physState},
            {"rate", p.rate}, {"rate_gbps", p.rateGbps}, {"link_layer", p.linkLayer},
            {"gids", gids}};
  if (!p.netdev.name.empty())
    j["netdev"] = {{"name", p.netdev.name},
                   {"operstate", p.netdev.operstate},
                   {"speed_mbps", p.netdev.speedMbps},
                   {"mtu", p.netdev.mtu}};
  return j;
}

json countersJson(const std::vector<PortCounters>& all) {
  json out = json::array();
  for (const PortCounters& pc : all) {
    json cs = json::array();
    for (const CounterDelta& d : pc.deltas)
      cs.push_back({{"name", d.key},
                    {"class", toString(d.cls)},
                    {"before", d.before},
                    {"after", d.after},
                    {"delta", d.delta},
                    {"per_second", d.perSecond},
                    {"reset", d.reset}});
    out.push_back({{"subject", pc.subject}, {"window_s", pc.windowSec}, {"counters", cs}});
  }
  return out;
}

json baselineJson(const CheckResult& r) {
  if (r.baselinePath.empty()) return nullptr;
  json rows = json::array();
  for (const BaselineRow& b : r.baseline) {
    const Judgement& j = b.judgement;
    json row = {
        {"key", b.figure.key()}, {"value", b.figure.value}, {"judged", j.judged}, {"runs", j.runs}};
    if (j.judged) {
      row.update({{"median", j.median},
                  {"mad", j.mad},
                  {"allowance", j.allowance},
                  {"limit", j.limit},
                  {"change_pct", j.changePct},
                  {"worse", j.worse}});
    } else {
      row["reason"] = j.reason;
    }
    rows.push_back(row);
  }
  return {{"path", r.baselinePath},
          {"healthy_runs", r.baselineRuns},
          {"rule",
           {{"k", r.rule.k},
            {"margin_pct", r.rule.marginPct},
            {"min_runs", r.rule.minRuns},
            {"window", r.window},
            {"mad", "scaled: 1.4826 x median |x - median|"}}},
          {"figures", rows}};
}

json stepsJson(const CheckResult& r) {
  json out = json::array();
  for (const StepRecord& s : r.steps)
    out.push_back({{"name", s.name},
                   {"status", s.status},
                   {"share_s", s.shareSec},
                   {"seconds", s.seconds},
                   {"why", s.why}});
  return out;
}

}  // namespace

json inventoryJson(const Inventory& inv) {
  json devs = json::array();
  for (const DeviceState& d : inv.devices) {
    json ports = json::array();
    for (const PortState& p : d.ports)
      ports.push_back(portJson(p));
    devs.push_back({{"name", d.name},
                    {"fw_ver", d.fwVer},
                    {"node_type", d.nodeType},
                    {"numa_node", d.numaNode},
                    {"ports", ports}});
  }
  return {{"sysfs", inv.root}, {"devices", devs}};
}

json toJson(const CheckResult& r) {
  json findings = json::array();
  for (const Finding& f : r.findings)
    findings.push_back(
        {{"subject", f.subject}, {"text", f.text}, {"kind", f.kind}, {"fails", f.fails}});
  json figures = json::array();
  for (const Figure& f : r.figures)
    figures.push_back({{"key", f.key()}, {"value", f.value}, {"unit", f.unit()}});
  json measurements = json::array();
  for (const Measurement& m : r.measurements)
    measurements.push_back(m.toJson());
  json expects = json::array();
  for (const ExpectRow& e : r.expects)
    expects.push_back({{"expect", e.text},
                       {"subject", e.subject},
                       {"value", e.value},
                       {"limit", e.limit},
                       {"judged", e.judged},
                       {"met", e.met}});
  return {{"test", "check"},
          {"version", r.version},
          {"node", r.node},
          {"date", r.date},
          {"command_line", r.commandLine},
          {"budget_s", r.budgetSec},
          {"seconds", r.seconds},
          {"verdict", r.healthy() ? "healthy" : "unhealthy"},
          {"reason", r.reasonLine()},
          {"findings", findings},
          {"notes", r.notes},
          {"steps", stepsJson(r)},
          {"inventory", inventoryJson(r.inventory)},
          {"counters", countersJson(r.counters)},
          {"measurements", measurements},
          {"noise", r.noise ? toJson(*r.noise) : json(nullptr)},
          {"figures", figures},
          {"expect", expects},
          {"baseline", baselineJson(r)},
          {"recorded", r.recordPath.empty() ? json(nullptr) : json(r.recordPath)}};
}

json errorJson(const std::string& message, int exitStatus) {
  return {{"test", "check"}, {"verdict", "error"}, {"exit_status", exitStatus}, {"error", message}};
}

}  // namespace rdmabench::check
