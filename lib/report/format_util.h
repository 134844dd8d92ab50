#pragma once
// Internals shared by the report formats (not part of the public report.h interface): test-kind
// classification, the JSON shape of RunInfo and Row (also the CSV columns), text helpers, the
// TextReporter base class, and one factory per format. Thread-safety: pure functions; reporters
// as in report.h.

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/report.h"

namespace rdmabench::report::detail {

// The table layout's `# ...` header block of `info` for a command that prints its own columns
// after it (pairs, congestion): the first line's generic "<test>, latency = half round trip
// (RTT/2)" becomes "<test>, <title>", and the latency units line becomes "units: <units>".
std::string tableHeaderBlock(const RunInfo& info, const std::string& title,
                             const std::string& units);

// Which column layout a run needs. A new kind of layout adds an enumerator here and testKind()
// maps RunInfo::test (report::Test) to it; -Wswitch then points at every format that must learn
// it.
enum class TestKind {
  kLatency,    // Row::latency: per-iteration latency summary
  kBandwidth,  // Row::megabytesPerSec/messagesPerSec over a timed window stream
  kBarrier,    // Row::collective, no size column (osu_barrier, IMB Barrier)
  kAllreduce,  // Row::collective per size (osu_allreduce, IMB Allreduce, nccl-tests)
  kRing,       // Row::link: one row per directed link of `rdmabench ring`
};

// Test::kBw -> kBandwidth; kBarrier, kAllreduce, kRing -> their own kinds; kLat and the
// commands that print their own columns after the header (kPairs, kCongestion) -> kLatency.
TestKind testKind(const RunInfo& info);

// RunInfo::test's name, "" when it is not known.
std::string testName(const RunInfo& info);

// RunInfo::toolVersion, or the version this library was built as when it is empty.
std::string toolVersion(const RunInfo& info);
// RunInfo::gitDescribe, or this build's `git describe` when unset ("" = not from a git checkout).
std::string gitDescribe(const RunInfo& info);

// MB/s (10^6 B/s) -> Gb/s (10^9 bit/s).
inline double gigabitsFromMegabytes(double megabytesPerSec) {
  return megabytesPerSec * 8e-3;
}

// "One-way (RTT/2)" style wording for headers: "half round trip (RTT/2)" or "full round trip".
std::string latencyMeaning(const RunInfo& info);

// Device properties for one header line: {"dev":"mlx5_0","port":1} -> "dev=mlx5_0 port=1"
// (strings unquoted, nested values as compact JSON); "" for an empty object or null. Keys and
// text are escaped (common/text_escape.h): the remote side's come from the server.
std::string describeProperties(const nlohmann::json& properties);

// The device's name for one-word fields: "device", else "domain", "interface" or "provider"
// (escaped).
std::string deviceName(const nlohmann::json& properties);

// Header facts of the measuring side, one line each ("" when not recorded):
// clock:     "tsc 2.900 GHz, one read 9.1 ns; kernel clocksource kvm-clock"
// placement: "cpus 0-1 (NUMA node 0); device NUMA node 0 (mlx5_0); bound by --numa auto", then
// for N-rank runs "; CPUs per rank: 0:0 1:1 ..." (the first 16 ranks)
std::string clockLine(const RunInfo& info);
std::string placementLine(const RunInfo& info);
// Warning lines of the clock and placement facts (without a "WARNING:" prefix).
std::vector<std::string> headerWarnings(const RunInfo& info);

// For formats whose rows cannot carry the table's "desched" mark (osu, imb): one warning naming
// the message sizes (bytes) whose timed loop lost the CPU (Row::descheduled, common/desched.h)
// and what to do about it; "" when `sizes` is empty.
std::string deschedSizesWarning(const std::vector<uint64_t>& sizes);
// The same for Row::stalled (common/stall.h): one warning naming the sizes whose time was mostly
// one pause; empty for no sizes.
std::string stallSizesWarning(const std::vector<uint64_t>& sizes);

// Compact JSON text that never throws: invalid UTF-8 (e.g. in a command line) is replaced by
// U+FFFD instead of raising nlohmann's type_error 316.
std::string dumpJson(const nlohmann::ordered_json& value);

// The JSON "run" object: every RunInfo field, snake_case keys, in declaration order.
nlohmann::ordered_json runJson(const RunInfo& info);

// One JSON row: {bytes, iterations, warmup} plus "latency_us" {min,max,median,mean,stdev,p50,
// p90,p99,p999,count,exact} when Row::latency is set, and {seconds, mb_per_s, msg_per_s,
// gbit_per_s, peer_mb_per_s (null when unknown)} when it is not (or when seconds > 0).
nlohmann::ordered_json rowJson(const Row& row);

// Base of the text formats: keeps the call-order contract of Reporter (implicit begin, ignored
// calls after the end), prints the column header lazily before the first row (or at end() when
// there were no rows) so a layout may depend on the first row, and flushes after every row.
// abort() ends the document with one comment line `# error: MESSAGE` (nothing for an empty
// message); the CLI prints the error on stderr too.
class TextReporter : public Reporter {
 public:
  TextReporter(std::ostream& out, const ReportOptions& options) : out_(out), options_(options) {}
  void begin(const RunInfo& info) final;
  void row(const Row& row) final;
  void end() final;
  void abort(const std::string& message) final;

 protected:
  virtual void writePreamble() = 0;                 // at begin()
  virtual void writeColumns(const Row* first) = 0;  // once, before rows; nullptr if none
  virtual void writeRow(const Row& row) = 0;
  virtual void writeEnd() {}  // at end(), after the rows

  std::ostream& out() { return out_; }
  const ReportOptions& options() const { return options_; }
  const RunInfo& info() const { return info_; }
  TestKind kind() const { return kind_; }

 private:
  std::ostream& out_;
  ReportOptions options_;
  RunInfo info_;
  TestKind kind_ = TestKind::kLatency;
  bool begun_ = false, columns_ = false, finished_ = false;
};

// One factory per format (each in its own <name>_format.cc).
std::unique_ptr<Reporter> makeTableReporter(std::ostream& out, const ReportOptions& options);
std::unique_ptr<Reporter> makeJsonReporter(std::ostream& out, const ReportOptions& options);
std::unique_ptr<Reporter> makeCsvReporter(std::ostream& out, const ReportOptions& options);
std::unique_ptr<Reporter> makePerftestReporter(std::ostream& out, const ReportOptions& options);
std::unique_ptr<Reporter> makeOsuReporter(std::ostream& out, const ReportOptions& options);
std::unique_ptr<Reporter> makeImbReporter(std::ostream& out, const ReportOptions& options);

}  // namespace rdmabench::report::detail
