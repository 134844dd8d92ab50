#pragma once
// Provider / transport A/B comparison of one client run repeated over several variants
// (`rdmabench lat nodeA -t ofi --provider A --provider B`, `--compare verbs,ofi:tcp;ofi_rxm`).
// Each variant's run is captured whole (RunCapture); printAb() writes one document with a
// column per variant and, per size, the ratio of each variant to the first (the baseline):
// latency compares t_typical (median one-way latency, us), bandwidth MB/s (10^6 B/s).
// Formats: table, json (every run whole, plus the ratios), csv. Thread-safety: none needed.

#include <iosfwd>
#include <string>
#include <vector>

#include "report/report.h"

namespace rdmabench::report {

// One variant's complete result.
struct RunCapture {
  std::string label;  // "socket", "ofi:tcp;ofi_rxm", ...
  RunInfo info;
  std::vector<Row> rows;
  std::string error;  // set when the run failed (its rows up to the failure are kept)
};

// A Reporter that records everything it is given into `capture`.
class CaptureReporter : public Reporter {
 public:
  explicit CaptureReporter(RunCapture& capture) : capture_(capture) {}
  void begin(const RunInfo& info) override { capture_.info = info; }
  void row(const Row& row) override { capture_.rows.push_back(row); }
  void end() override {}
  void abort(const std::string& message) override { capture_.error = message; }

 private:
  RunCapture& capture_;
};

// Writes the comparison in `format` ("table", "json" or "csv"; others throw UsageError naming
// --format). Sizes missing from a variant (it failed before reaching them) print as "-"; each
// failed variant's error is printed with its label. `error` (non-empty: the whole comparison
// stopped, e.g. Ctrl-C) goes into JSON's top-level "error" and a last `# error:` line of table
// and csv.
void printAb(std::ostream& out, const std::string& format, const std::vector<RunCapture>& runs,
             const std::string& error = {});

}  // namespace rdmabench::report
