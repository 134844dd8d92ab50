// "csv": a header line, then one line per row with the same fields as the JSON rows, flattened.
// No comment or metadata lines, so any CSV reader (pandas, Python's csv, spreadsheets) loads it;
// instead every line repeats the run's identity (test, transport, op, bidirectional, round_trip,
// window) and its clock and placement facts (clock, clock_read_ns, clocksource, cpus), which
// also lets files of several runs be concatenated (minus their header lines).
// Empty cells: latency columns on bandwidth rows and vice versa, peer_mb_per_s when unknown.
// abort() appends a line whose "error" column holds the message. Quoting per RFC 4180 (fields
// with a comma, quote, CR or LF are quoted, quotes doubled); lines end with LF.

#include <fmt/format.h>

#include <ostream>
#include <string>
#include <vector>

#include "report/csv_writer.h"
#include "report/format_util.h"

namespace rdmabench::report::detail {
namespace {

constexpr const char* kColumns[] = {
    "test",           "transport",      "op",
    "bidirectional",  "round_trip",     "window",
    "bytes",          "iterations",     "warmup",
    "lat_count",      "lat_exact",      "lat_min_us",
    "lat_max_us",     "lat_median_us",  "lat_mean_us",
    "lat_stdev_us",   "lat_p50_us",     "lat_p90_us",
    "lat_p99_us",     "lat_p999_us",    "seconds",
    "mb_per_s",       "msg_per_s",      "gbit_per_s",
    "peer_mb_per_s",  "ranks",          "algorithm",
    "t_min_us",       "t_max_us",       "t_avg_us",
    "slowest_p50_us", "slowest_p99_us", "slowest_max_us",
    "algbw_gb_per_s", "busbw_gb_per_s", "wrong",
    "src_rank",       "src_host",       "dst_rank",
    "dst_host",       "direction",      "link_median_us",
    "outlier",        "clock",          "clock_read_ns",
    "clocksource",    "cpus",           "flags",
    "error",
};
constexpr size_t kColumnCount = sizeof(kColumns) / sizeof(kColumns[0]);

std::string num(double v) {
  return fmt::format("{}", v);
}
std::string num(uint64_t v) {
  return fmt::format("{}", v);
}
std::string boolean(bool v) {
  return v ? "true" : "false";
}

class CsvReporter : public Reporter {
 public:
  explicit CsvReporter(std::ostream& out) : out_(out) {}

  void begin(const RunInfo& info) override {
    if (begun_ || finished_) return;
    begun_ = true;
    info_ = info;
    std::vector<std::string> header(std::begin(kColumns), std::end(kColumns));
    writeLine(header);
  }

  void row(const Row& row) override {
    if (finished_) return;
    if (!begun_) begin(RunInfo{});
    std::vector<std::string> f = runFields();
    f.push_back(num(row.bytes));
    f.push_back(num(row.iterations));
    f.push_back(num(row.warmup));
    if (row.latency) {
      const stats::Summary& s = *row.latency;
      f.push_back(num(s.count));
      f.push_back(boolean(s.exact));
      for (double v : {s.min, s.max, s.median, s.mean, s.stdev, s.p50, s.p90, s.p99, s.p999}) {
        f.push_back(num(v));
      }
    } else {
      f.resize(f.size() + 11);
    }
    if ((!row.latency || row.seconds > 0) && !row.collective && !row.link) {
      f.push_back(num(row.seconds));
      f.push_back(num(row.megabytesPerSec));
      f.push_back(num(row.messagesPerSec));
      f.push_back(num(gigabitsFromMegabytes(row.megabytesPerSec)));
      f.push_back(row.peerMegabytesPerSec ? num(*row.peerMegabytesPerSec) : "");
    } else {
      f.resize(f.size() + 5);
    }
    if (row.collective) {
      const CollectiveRow& c = *row.collective;
      f.push_back(num(static_cast<uint64_t>(c.ranks)));
      f.push_back(c.algorithm);
      for (double v : {c.tMinUs, c.tMaxUs, c.tAvgUs, c.slowestP50Us, c.slowestP99Us, c.slowestMaxUs,
                       c.algbwGBs})
        f.push_back(num(v));
      f.push_back(c.inNetwork ? "" : num(c.busbwGBs));  // n/a for in-network reduction
      f.push_back(c.wrong ? num(*c.wrong) : "");
    } else {
      f.resize(f.size() + 10);
      f.push_back(row.wrong ? num(*row.wrong) : "");
    }
    if (row.link) {
      const RingLinkRow& l = *row.link;
      f.push_back(num(static_cast<uint64_t>(l.srcRank)));
      f.push_back(l.srcHost);
      f.push_back(num(static_cast<uint64_t>(l.dstRank)));
      f.push_back(l.dstHost);
      f.push_back(l.direction);
      f.push_back(num(l.medianUs));
      f.push_back(boolean(l.outlier));
    } else {
      f.resize(f.size() + 7);
    }
    // Clock and placement facts of the run (no comment lines in this format: columns instead).
    const std::optional<ClockFacts>& clock = info_.clock;
    f.push_back(clock ? clock->used : std::string());
    f.push_back(clock ? num(clock->readCostNsRounded()) : std::string());
    f.push_back(clock ? clock->kernelClocksource : std::string());
    f.push_back(info_.placement ? info_.placement->cpus : std::string());
    std::string flags;
    for (const std::string& flag : row.flags)
      flags += (flags.empty() ? "" : ";") + flag;
    // The table's marks (no comment lines here): the row lost the CPU / was mostly one pause.
    if (!row.descheduled.is_null()) flags += flags.empty() ? "desched" : ";desched";
    if (!row.stalled.is_null()) flags += flags.empty() ? "stall" : ";stall";
    f.push_back(flags);  // Row::flags, ';'-separated
    f.emplace_back();    // error
    writeLine(f);
  }

  void end() override {
    if (finished_) return;
    if (!begun_) begin(RunInfo{});
    finished_ = true;
    out_.flush();
  }

  void abort(const std::string& message) override {
    if (finished_) return;
    if (!begun_) begin(RunInfo{});
    std::vector<std::string> f = runFields();
    f.resize(kColumnCount - 1);
    f.push_back(message);
    writeLine(f);
    finished_ = true;
  }

 private:
  std::vector<std::string> runFields() const {
    return {testName(info_),
            info_.transport,
            info_.op,
            boolean(info_.bidirectional),
            boolean(info_.roundTrip),
            num(static_cast<uint64_t>(info_.window))};
  }

  void writeLine(const std::vector<std::string>& fields) {
    out_ << csvLine(fields);
    out_.flush();
  }

  std::ostream& out_;
  RunInfo info_;
  bool begun_ = false, finished_ = false;
};

}  // namespace

std::unique_ptr<Reporter> makeCsvReporter(std::ostream& out, const ReportOptions& /*options*/) {
  return std::make_unique<CsvReporter>(out);
}

}  // namespace rdmabench::report::detail
