// "imb": the tables of Intel MPI Benchmarks (IMB-MPI1), every column 13 characters wide,
// right-aligned, 2 decimals, as IMB prints them:
//
//   #---------------------------------------------------
//   # Benchmarking PingPong
//   # #processes = 2
//   #---------------------------------------------------
//          #bytes #repetitions      t[usec]   Mbytes/sec
//               0         1000         2.23         0.00
//
// Latency runs map to PingPong: t[usec] = mean latency (half round trip, as IMB's PingPong; the
// full RTT with RunInfo::roundTrip), Mbytes/sec = bytes / t[usec] = 10^6 B/s (as recent IMB;
// old IMB 4.x logs show 2^20). Bandwidth runs map to IMB's Uniband (Biband when bidirectional):
// "#bytes #repetitions Mbytes/sec Msg/sec", Msg/sec as an integer; #repetitions is the number of
// windows (IMB's Uniband also counts iterations of a window of messages). The banner lines end
// with a space as IMB prints them. Collectives: Allreduce "#bytes #repetitions t_min[usec]
// t_max[usec] t_avg[usec]" and Barrier "#repetitions t_min[usec] t_max[usec] t_avg[usec]", where
// t_min/t_max/t_avg are taken across ranks of each rank's mean time per call (as IMB), and
// "#processes" is the world size. A short preamble in IMB's "# Key : value" style replaces
// IMB's MPI description.

#include <fmt/format.h>

#include <ostream>
#include <string>
#include <vector>

#include "report/format_util.h"

namespace rdmabench::report::detail {
namespace {

constexpr int kWidth = 13;                                   // IMB's column width
const std::string kBannerLine = "#" + std::string(51, '-');  // IMB's benchmark banner rule
const std::string kPreambleLine = "#" + std::string(60, '-');

class ImbReporter : public TextReporter {
 public:
  using TextReporter::TextReporter;

 protected:
  void writePreamble() override {
    const RunInfo& i = info();
    out() << kPreambleLine << '\n'
          << "#    rdmabench " << toolVersion(i) << ", IMB-MPI1 layout (no MPI)\n"
          << kPreambleLine << '\n';
    field("Date", i.date);
    field("Machine", i.localHost);
    field("Peer", i.remoteHost);
    field("Transport", i.op.empty() ? i.transport : i.transport + " " + i.op);
    if (kind() == TestKind::kBandwidth) field("Window", fmt::format("{}", i.window));
    if (std::string c = clockLine(i); !c.empty()) field("Clock", c);
    if (std::string p = placementLine(i); !p.empty()) field("Placement", p);
    for (const std::string& w : headerWarnings(i))
      field("WARNING", w);
    if (!i.commandLine.empty()) {
      out() << "\n# Calling sequence was:\n\n# " << i.commandLine << '\n';
    }
    out() << '\n';
  }

  void writeColumns(const Row* /*first*/) override {
    std::string name;
    switch (kind()) {
      case TestKind::kLatency:
        name = "PingPong";
        break;
      case TestKind::kBandwidth:
        name = info().bidirectional ? "Biband" : "Uniband";
        break;
      case TestKind::kBarrier:
        name = "Barrier";
        break;
      case TestKind::kAllreduce:
        name = "Allreduce";
        break;
      case TestKind::kRing:
        name = "PingPong (ring: every rank with its neighbours)";
        break;
    }
    int procs = info().extra.value("ranks", 2);
    out() << kBannerLine << '\n'
          << "# Benchmarking " << name << " \n"
          << "# #processes = " << procs << " \n"
          << kBannerLine << '\n';
    switch (kind()) {
      case TestKind::kLatency:
        cells("#bytes", "#repetitions", "t[usec]", "Mbytes/sec");
        break;
      case TestKind::kBandwidth:
        cells("#bytes", "#repetitions", "Mbytes/sec", "Msg/sec");
        break;
      case TestKind::kBarrier:
        out() << fmt::format("{:>{}}{:>{}}{:>{}}{:>{}}\n", "#repetitions", kWidth, "t_min[usec]",
                             kWidth, "t_max[usec]", kWidth, "t_avg[usec]", kWidth);
        break;
      case TestKind::kAllreduce:
        out() << fmt::format("{:>{}}{:>{}}{:>{}}{:>{}}{:>{}}\n", "#bytes", kWidth, "#repetitions",
                             kWidth, "t_min[usec]", kWidth, "t_max[usec]", kWidth, "t_avg[usec]",
                             kWidth);
        break;
      case TestKind::kRing:
        out() << fmt::format("{:>{}}{:>{}}{:>{}}{:>{}}\n", "src", kWidth, "dst", kWidth, "#bytes",
                             kWidth, "t[usec]", kWidth);
        break;
    }
  }

  void writeRow(const Row& row) override {
    if (!row.descheduled.is_null()) deschedSizes_.push_back(row.bytes);
    if (!row.stalled.is_null()) stallSizes_.push_back(row.bytes);
    switch (kind()) {
      case TestKind::kLatency: {
        double t = row.latency ? row.latency->mean : 0.0;
        double mbps = t > 0 ? static_cast<double>(row.bytes) / t : 0.0;
        out() << fmt::format("{:>{}}{:>{}}{:>{}.2f}{:>{}.2f}\n", row.bytes, kWidth, row.iterations,
                             kWidth, t, kWidth, mbps, kWidth);
        break;
      }
      case TestKind::kBandwidth:
        out() << fmt::format("{:>{}}{:>{}}{:>{}.2f}{:>{}.0f}\n", row.bytes, kWidth, row.iterations,
                             kWidth, row.megabytesPerSec, kWidth, row.messagesPerSec, kWidth);
        break;
      case TestKind::kBarrier: {
        CollectiveRow c = row.collective.value_or(CollectiveRow{});
        out() << fmt::format("{:>{}}{:>{}.2f}{:>{}.2f}{:>{}.2f}\n", row.iterations, kWidth,
                             c.tMinUs, kWidth, c.tMaxUs, kWidth, c.tAvgUs, kWidth);
        break;
      }
      case TestKind::kAllreduce: {
        CollectiveRow c = row.collective.value_or(CollectiveRow{});
        out() << fmt::format("{:>{}}{:>{}}{:>{}.2f}{:>{}.2f}{:>{}.2f}\n", row.bytes, kWidth,
                             row.iterations, kWidth, c.tMinUs, kWidth, c.tMaxUs, kWidth, c.tAvgUs,
                             kWidth);
        break;
      }
      case TestKind::kRing: {
        RingLinkRow l = row.link.value_or(RingLinkRow{});
        out() << fmt::format("{:>{}}{:>{}}{:>{}}{:>{}.2f}{}\n", l.srcRank, kWidth, l.dstRank,
                             kWidth, row.bytes, kWidth, l.medianUs, kWidth,
                             l.outlier ? "  (outlier)" : "");
        break;
      }
    }
  }

  // IMB's rows have no room for the table's "desched" mark: one "#" comment line after the table
  // (IMB logs carry "#" lines between tables), none when no row lost the CPU.
  void writeEnd() override {
    if (!deschedSizes_.empty())
      out() << "# WARNING: " << deschedSizesWarning(deschedSizes_) << '\n';
    if (!stallSizes_.empty()) out() << "# WARNING: " << stallSizesWarning(stallSizes_) << '\n';
    out() << '\n';
  }

 private:
  std::vector<uint64_t> deschedSizes_;  // sizes of the rows that lost the CPU
  std::vector<uint64_t> stallSizes_;    // sizes of the rows whose time was mostly one pause
  void cells(const char* a, const char* b, const char* c, const char* d) {
    out() << fmt::format("{:>{}}{:>{}}{:>{}}{:>{}}\n", a, kWidth, b, kWidth, c, kWidth, d, kWidth);
  }
  // IMB's preamble shape: "# Date                  : ...".
  void field(const char* key, const std::string& value) {
    if (!value.empty()) out() << fmt::format("# {:<22}: {}\n", key, value);
  }
};

}  // namespace

std::unique_ptr<Reporter> makeImbReporter(std::ostream& out, const ReportOptions& options) {
  return std::make_unique<ImbReporter>(out, options);
}

}  // namespace rdmabench::report::detail
