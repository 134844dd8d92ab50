#include "check/run.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "check/child.h"
#include "check/history.h"
#include "check/judge.h"
#include "common/host_info.h"
#include "common/interrupt.h"
#include "common/version.h"

namespace rdmabench::check {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The runs of the measurement step, verbs first: with --peer, every ACTIVE port to the peer's
// server; else, with two or more ACTIVE ports of one link layer, the first to the second, the third
// to the fourth... (what a node with two NICs wants: the data leaves one and enters the other); an
// odd one out, or a lone port, to itself.
std::vector<MeasureRequest> planPairs(Inventory& inv, const CheckCommand& cmd) {
  std::vector<MeasureRequest> out;
  for (const char* layer : {"InfiniBand", "Ethernet"}) {
    std::vector<const PortState*> ports;
    for (PortState* p : inv.ports())
      if (p->active() && p->linkLayer == layer) ports.push_back(p);
    for (size_t i = 0; i < ports.size() && !cmd.peer.empty(); ++i) {
      MeasureRequest q;
      q.clientDevice = ports[i]->device;
      q.clientPort = ports[i]->port;
      q.peer = cmd.peer;
      q.peerPort = cmd.peerPort;
      q.token = cmd.token;
      out.push_back(q);
    }
    for (size_t i = 0; i < ports.size() && cmd.peer.empty(); i += 2) {
      const PortState* a = ports[i];
      const PortState* b = i + 1 < ports.size() ? ports[i + 1] : a;
      MeasureRequest q;
      q.clientDevice = a->device;
      q.clientPort = a->port;
      q.serverDevice = b->device;
      q.serverPort = b->port;
      out.push_back(q);
    }
  }
  // Then each over libfabric's providers (after every verbs run: if the budget runs short, they
  // are what is cut).
  const size_t verbsRuns = out.size();
  for (const std::string& prov : cmd.skips("ofi") ? std::vector<std::string>{} : cmd.providers)
    for (size_t i = 0; i < verbsRuns; ++i) {
      MeasureRequest q = out[i];
      q.transport = "ofi";
      q.provider = prov;
      out.push_back(q);
    }
  if (cmd.skips("verbs")) out.erase(out.begin(), out.begin() + static_cast<long>(verbsRuns));
  return out;
}

std::vector<CounterSnapshot> readAll(const CheckResult& r,
                                     const std::vector<const PortState*>& ps) {
  std::vector<CounterSnapshot> out;
  for (const PortState* p : ps)
    out.push_back(readCounters(r.inventory.root, *p));
  return out;
}

void measureStep(CheckResult& r, std::vector<MeasureRequest> pairs, double shareSec,
                 Clock::time_point deadline, const CheckCommand& cmd) {
  StepRecord step{"measure", "done", shareSec, 0, ""};
  for (MeasureRequest& q : pairs) {
    q.lat = !cmd.skips("lat");
    q.bw = !cmd.skips("bw");
  }
  if (cmd.skips("lat") || cmd.skips("bw")) step.why = cmd.skips("lat") ? "--skip lat" : "--skip bw";
  const auto t0 = Clock::now();
  std::vector<std::string> skipped;
  for (size_t i = 0; i < pairs.size(); ++i) {
    MeasureRequest& q = pairs[i];
    // What is left of the share, split over the runs still to go, a verbs run weighing twice a
    // libfabric one (verbs is the gate; libfabric's are cut first). A transport that is not
    // present here returns at once and leaves its time to the others.
    double weights = 0;
    for (size_t k = i; k < pairs.size(); ++k)
      weights += pairs[k].transport == "verbs" ? 2 : 1;
    const double perPair = (shareSec - since(t0)) * (q.transport == "verbs" ? 2 : 1) / weights;
    const double left =
        std::min(perPair, std::chrono::duration<double>(deadline - Clock::now()).count());
    if (left < kMinMeasureSec) {
      skipped.push_back(connectionText(q));
      continue;
    }
    // A fifth of the pair's time for each timed loop (two fifths for a lone one: --skip lat or
    // bw); the rest is set-up (fork, device open, connection: seconds in a TCG VM) and margin.
    q.latSec = q.bwSec = std::clamp(left * (q.lat && q.bw ? 0.2 : 0.4), 0.2, 3.0);
    q.deadlineMs = static_cast<int64_t>(left * 1000);
    r.measurements.push_back(measure(q));
    if (r.measurements.back().cut) {
      step.status = "cut";
      step.why = r.measurements.back().subject + ": " + r.measurements.back().error;
    } else if (!r.measurements.back().error.empty() && step.status == "done")
      step.status = "failed";
    throwIfInterrupted("check: the measurement");
  }
  if (!skipped.empty()) {
    step.status = r.measurements.empty() ? "skipped" : "cut";
    step.why = fmt::format("not enough budget left ({:.0f} s needed per port pair) for: {}",
                           kMinMeasureSec, fmt::join(skipped, "; "));
  }
  if (pairs.empty()) {
    step.status = "skipped";
    step.why = "no ACTIVE port";
  }
  step.seconds = since(t0);
  r.steps.push_back(step);
}

void noiseStep(CheckResult& r, double shareSec, Clock::time_point deadline) {
  StepRecord step{"noise", "done", shareSec, 0, ""};
  const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
  // The loop itself gets at most 3 s and leaves half a second of its share for the threads and
  // /proc, and a second of what is left of the budget.
  const double loop = std::min({3.0, shareSec - 0.5, left - 1});
  if (loop < kMinNoiseSec) {
    step.status = "skipped";
    step.why = fmt::format("{:.1f} s for the loop (share {:.1f} s, {:.1f} s left), under {:.1f} s",
                           std::max(0.0, loop), shareSec, std::max(0.0, left), kMinNoiseSec);
    r.steps.push_back(step);
    return;
  }
  const auto t0 = Clock::now();
  // In a child killed at the measuring deadline: on starved cores (every CPU busy, a TCG guest on
  // a loaded host) the threads' start, calibration and /proc took 11 s around a 3 s loop.
  const std::string node = r.node;
  const ChildOutput out = runInChild("check noise", static_cast<int64_t>(left * 1000), [&](int fd) {
    writeJsonLine(fd, {{"noise", toJson(runNoiseStep(loop, node))}});
  });
  throwIfInterrupted("check: the noise step");
  step.seconds = since(t0);
  if (!out.finished) {
    step.status = "cut";
    step.why = fmt::format("killed at the budget's deadline after {:.1f} s ({:.1f} s loop)",
                           step.seconds, loop);
  } else if (const json* n = out.merged.contains("noise") ? &out.merged["noise"] : nullptr) {
    try {
      r.noise = noiseStepFromJson(*n);
    } catch (const std::exception& e) {
      step.status = "failed";
      step.why = e.what();
    }
  } else {
    step.status = "failed";
    step.why = out.merged.value("error",
                                out.parseError.empty() ? std::string("no result") : out.parseError);
  }
  if (step.status == "failed") r.notes.push_back("noise failed: " + step.why);
  r.steps.push_back(step);
}

// Inventory, counters around the measurement, noise: the measuring part of the check.
void runSteps(const CheckCommand& cmd, CheckResult& r, Clock::time_point start) {
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(cmd.budgetSec * 0.85));
  auto t = Clock::now();
  r.inventory = readInventory(sysfsRoot(), cmd.devices);
  r.steps.push_back({"inventory", "done", 0, since(t), ""});
  std::vector<const PortState*> ports;
  for (PortState* p : r.inventory.ports())
    ports.push_back(p);
  const std::vector<CounterSnapshot> before = readAll(r, ports);
  if (cmd.skips("measure"))
    r.steps.push_back({"measure", "skipped", 0, 0, "--skip measure"});
  else
    measureStep(r, planPairs(r.inventory, cmd), cmd.budgetSec * kMeasureShare, deadline, cmd);
  t = Clock::now();
  const std::vector<CounterSnapshot> after = readAll(r, ports);
  for (size_t i = 0; i < ports.size(); ++i)
    r.counters.push_back({ports[i]->name(),
                          static_cast<double>(after[i].monoNs - before[i].monoNs) / 1e9,
                          counterDeltas(before[i], after[i])});
  r.steps.push_back({"counters", "done", 0, since(t), ""});
  if (cmd.skips("noise"))
    r.steps.push_back({"noise", "skipped", 0, 0, "--skip noise"});
  else
    noiseStep(r, cmd.budgetSec * kNoiseShare, deadline);
}

}  // namespace

CheckResult runCheck(const CheckCommand& cmd, const std::string& commandLine) {
  const auto start = Clock::now();
  CheckResult r;
  r.node = cmd.node.empty() ? hostName() : cmd.node;
  r.date = isoDateUtc();
  r.commandLine = commandLine;
  r.version = version::release();
  r.budgetSec = cmd.budgetSec;
  r.rule = cmd.rule;
  r.window = cmd.window;
  // A history that cannot be used stops the check before anything is measured (exit 3).
  std::optional<History> history;
  if (!cmd.baselineDir.empty()) {
    checkHistoryDir(cmd.baselineDir, "--baseline");
    history = readHistory(cmd.baselineDir, r.node);
  }
  if (!cmd.recordDir.empty()) {
    checkHistoryDir(cmd.recordDir, "--record");
    (void)readHistory(cmd.recordDir, r.node);
  }
  runSteps(cmd, r, start);
  judgeInventory(r, cmd.devices, cmd.requireRdma);
  judgeCounters(r, cmd.counterLimits);
  judgeMeasurements(r);
  r.figures = collectFigures(r);
  judgeExpectations(r, cmd.expects);
  if (history) judgeBaseline(r, *history);
  for (const StepRecord& s : r.steps)
    if (s.status == "skipped" || s.status == "cut")
      r.notes.push_back(fmt::format("{} {}: {}", s.name, s.status, s.why));
  orderFindings(r);
  r.seconds = since(start);
  return r;
}

void recordRun(const CheckCommand& cmd, CheckResult& r) {
  HistoryRun run;
  run.date = r.date;
  run.healthy = r.healthy();
  for (const Figure& f : r.figures)
    run.figures[f.key()] = f.value;
  appendRun(cmd.recordDir, r.node, run, 10'000);
  r.recordPath = historyPath(cmd.recordDir, r.node);
}

}  // namespace rdmabench::check
