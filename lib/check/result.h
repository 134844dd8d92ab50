#pragma once
// What one `rdmabench check` found (docs/check.md): the steps' data, the figures, the findings
// and the verdict, written by report.cc as text or JSON. Plain values; thread-safety: none needed.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/counters.h"
#include "check/inventory.h"
#include "check/measure.h"
#include "check/noise_step.h"
#include "check/rule.h"

namespace rdmabench::check {

// What a step did within the budget.
struct StepRecord {
  std::string name;     // "inventory", "counters", "measure", "noise", "baseline", "record"
  std::string status;   // "done", "skipped", "cut" (stopped at its share), "failed"
  double shareSec = 0;  // its share of the budget; 0 = none
  double seconds = 0;   // time it took
  std::string why;      // skipped / cut / failed: why
};

// One port's counters over the window.
struct PortCounters {
  std::string subject;  // "rxe0/1"
  double windowSec = 0;
  std::vector<CounterDelta> deltas;
};

// A measured value the baseline and --expect judge. `key` is how the history stores it.
struct Figure {
  std::string subject;  // "rxe0/1" or "node"
  std::string name;     // "lat_p50_us", "lat_p99_us", "bw_mb_s", "noise_stolen_pct",
                        // "rate hw_counters/np_cnp_sent"
  double value = 0;
  bool higherIsBetter = false;
  std::string key() const { return subject + " " + name; }
  std::string label() const;  // "p99 latency", "bandwidth", "OS noise", "hw_counters/X rate"
  std::string unit() const;   // "us", "MB/s", "% stolen", "/s"
};

// One line of the verdict. `fails`: it makes the node unhealthy.
struct Finding {
  std::string subject;  // "rxe0/1", "node"
  std::string text;     // "p99 latency 7.9 us, baseline 2.1 us [+276%]"
  std::string kind;     // "port", "counter", "measure", "data", "expect", "baseline", "rdma"
  bool fails = true;
  std::string line() const { return subject + ": " + text; }
};

// A baseline judgement of one figure.
struct BaselineRow {
  Figure figure;
  Judgement judgement;
};

struct ExpectRow {
  std::string text, subject;
  double value = 0, limit = 0;
  bool judged = true;  // false: %link without a known rate
  bool met = true;
};

struct CheckResult {
  std::string node, date, commandLine, version;
  double budgetSec = 0, seconds = 0;
  Inventory inventory;
  std::vector<PortCounters> counters;
  std::vector<Measurement> measurements;
  std::optional<NoiseStep> noise;
  std::vector<Figure> figures;
  std::vector<Finding> findings;   // failing ones first, in order of severity
  std::vector<std::string> notes;  // what the reader must know but does not fail the node
  std::vector<StepRecord> steps;
  // Baseline.
  std::string baselinePath;
  size_t baselineRuns = 0;
  RuleParams rule;
  size_t window = 0;
  std::vector<BaselineRow> baseline;
  std::vector<ExpectRow> expects;
  std::string recordPath;  // the history appended to; "" = none

  bool healthy() const;
  // The drain reason: "rdmabench check: rxe0/1: p99 latency 7.9 us, baseline 2.1 us [+276%]"
  // (with " (+N more)" when more findings fail); "" when healthy.
  std::string reasonLine() const;
};

}  // namespace rdmabench::check
