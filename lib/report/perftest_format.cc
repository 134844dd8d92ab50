// "perftest": the result tables of perftest's ib_*_lat and ib_*_bw (column layout of perftest
// 6.x, read from its source and documented in docs/metrics.md), so rdmabench rows line up under
// (and parse like) perftest rows:
//
//   ---------------------------------------------------------------------------------------
//                       Send Latency Test
//    <info lines: ` Key             : value`>
//   ---------------------------------------------------------------------------------------
//    #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec] ... 99.9% percentile[usec]
//    2       1000          1.02           3.56         1.05     ...
//   ---------------------------------------------------------------------------------------
//
// Meaning (docs/metrics.md): MB/sec is 2^20 B/s as perftest divides (6.06 prints "MB/sec", 2024+
// prints MiB/sec); #iterations counts messages as perftest; "BW peak" is not computed and printed
// as 0.00, as perftest does with -N; t_max is the true maximum (perftest drops the 2
// largest samples); 99%/99.9% are nearest-rank percentiles of all samples.

#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "report/format_util.h"
#include "transport/info_json.h"

namespace rdmabench::report::detail {
namespace {

// perftest's RESULT_LINE: 87 dashes.
const std::string kResultLine(87, '-');

// perftest's test titles: "Send", "RDMA_Write", "RDMA_Read", "Atomic".
std::string verbTitle(const std::string& op) {
  if (op == "send") return "Send";
  if (op == "write") return "RDMA_Write";
  if (op == "read") return "RDMA_Read";
  if (op == "atomic") return "Atomic";
  if (op.empty()) return "Send";
  std::string t = op;
  t[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(t[0])));
  return t;
}

class PerftestReporter : public TextReporter {
 public:
  using TextReporter::TextReporter;

 protected:
  void writePreamble() override {
    const RunInfo& i = info();
    std::string title = verbTitle(i.op);
    if (i.bidirectional) title += " Bidirectional";
    title += kind() == TestKind::kBandwidth ? " BW Test" : " Latency Test";
    out() << kResultLine << '\n' << std::string(20, ' ') << title << '\n';
    field("Tool", fmt::format("rdmabench {} (perftest-style output)", toolVersion(i)));
    field("Transport", i.transport);
    if (!i.localHost.empty()) field("Local host", i.localHost);
    if (!i.remoteHost.empty()) field("Remote host", i.remoteHost);
    if (std::string d = deviceName(transport::toJson(i.local)); !d.empty())
      field("Local device", d);
    if (std::string d = deviceName(transport::toJson(i.remote)); !d.empty())
      field("Remote device", d);
    switch (kind()) {
      case TestKind::kLatency:
        field("Latency", latencyMeaning(i));
        break;
      case TestKind::kBandwidth:
        if (i.extra.is_object() && i.extra.value("mode", std::string()) == "stream")
          field("Mode", fmt::format("stream, TX depth {} (perftest's method)", i.window));
        else {
          // The format only formats: the window-mode figures in perftest's layout, and the flag
          // that measures the way ib_*_bw does.
          field("Mode", fmt::format("window of {} messages (osu_bw's method)", i.window));
          field("Note", "perftest streams: --mode stream gives ib_*_bw's method and figures");
        }
        field("BW units", options().gigabits ? "Gb/sec = 10^9 bit/s"
                                             : "MB/sec = 2^20 B/s (MiB/s, "
                                               "as perftest divides)");
        field("BW peak", "not computed: printed as 0.00, as perftest -N does");
        field("#iterations", "messages per connection and direction, as perftest");
        break;
      case TestKind::kBarrier:
      case TestKind::kAllreduce:
      case TestKind::kRing:
        field("Note", "perftest has no collective layout (use table, osu, imb, json or csv)");
        break;
    }
    if (!i.date.empty()) field("Date", i.date);
    if (std::string c = clockLine(i); !c.empty()) field("Clock", c);
    if (std::string p = placementLine(i); !p.empty()) field("Placement", p);
    for (const std::string& w : headerWarnings(i))
      field("WARNING", w);
    out() << kResultLine << '\n';
  }

  void writeColumns(const Row* /*first*/) override {
    switch (kind()) {
      case TestKind::kLatency:
        out() << " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
                 "t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n";
        break;
      case TestKind::kBandwidth: {
        const char* unit = options().gigabits ? "Gb/sec" : "MB/sec";
        out() << fmt::format(
            " #bytes     #iterations    BW peak[{0}]    BW average[{0}]   MsgRate[Mpps]\n", unit);
        break;
      }
      case TestKind::kBarrier:
      case TestKind::kAllreduce:
      case TestKind::kRing:
        break;
    }
  }

  void writeRow(const Row& row) override {
    switch (kind()) {
      case TestKind::kLatency: {
        stats::Summary s = row.latency.value_or(stats::Summary{});
        out() << fmt::format(
            " {:<7} {}          {:<7.2f}        {:<7.2f}      {:<7.2f}  \t       {:<7.2f}     "
            "\t{:<7.2f}\t\t{:<7.2f} \t\t{:<7.2f}\n",
            row.bytes, row.iterations, s.min, s.max, s.median, s.mean, s.stdev, s.p99, s.p999);
        break;
      }
      case TestKind::kBandwidth: {
        // perftest divides bytes/s by 2^20 under "MB/sec" (docs/metrics.md).
        double bw = options().gigabits ? gigabitsFromMegabytes(row.megabytesPerSec)
                                       : row.megabytesPerSec * 1e6 / 1048576.0;
        out() << fmt::format(
            " {:<7}    {:<10}       {:<7.2f}            {:<7.2f}\t\t     {:<7.6f}\n", row.bytes,
            row.messages > 0 ? row.messages : row.iterations, 0.0, bw, row.messagesPerSec / 1e6);
        break;
      }
      case TestKind::kBarrier:
      case TestKind::kAllreduce:
      case TestKind::kRing:
        break;
    }
    if (!row.descheduled.is_null()) deschedSizes_.push_back(row.bytes);
    if (!row.stalled.is_null()) stallSizes_.push_back(row.bytes);
  }

  // perftest's rows have no room for the table's "desched" and "stall" marks: WARNING lines in
  // the header's shape after the closing line (parsers of the table stop at that line).
  void writeEnd() override {
    out() << kResultLine << '\n';
    if (!deschedSizes_.empty()) field("WARNING", deschedSizesWarning(deschedSizes_));
    if (!stallSizes_.empty()) field("WARNING", stallSizesWarning(stallSizes_));
  }

 private:
  // perftest's info line shape: " Key             : value" (key padded to 16).
  void field(const char* key, const std::string& value) {
    out() << fmt::format(" {:<16}: {}\n", key, value);
  }

  std::vector<uint64_t> deschedSizes_;  // sizes of the rows that lost the CPU
  std::vector<uint64_t> stallSizes_;    // sizes of the rows whose time was mostly one pause
};

}  // namespace

std::unique_ptr<Reporter> makePerftestReporter(std::ostream& out, const ReportOptions& options) {
  return std::make_unique<PerftestReporter>(out, options);
}

}  // namespace rdmabench::report::detail
