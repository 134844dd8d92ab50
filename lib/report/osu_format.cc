// "osu": the text layout of OSU Micro-Benchmarks 7.x (osu_latency, osu_bw, osu_bibw), so OSU
// parsers and plotting scripts read rdmabench output unchanged:
//
//   <blank line>
//   # OSU MPI-free Latency Test (rdmabench 0.1.0, socket send)
//   # Datatype: MPI_CHAR.
//   # Size       Avg Latency(us)                  <- "%-10s%18s"
//   1                       1.56                  <- "%-10d%18.2f"
//
// Widths: OSU's point-to-point tests (osu_latency, osu_bw, osu_bibw) print 28-character lines,
// i.e. a 10-wide size column and 18-wide value columns (their extra "Validation" column is 18
// wide too), as every published OSU 7.x pt2pt log shows; OSU's collectives use 20-wide fields
// ("%-10s%20s"): osu_allreduce prints "# Size       Avg Latency(us)" and "%-10d%20.2f" rows,
// osu_barrier "# Avg Latency(us)" and "%20.2f" rows (no size column); with -f (full) both add
// Min/Max Latency(us) (%20.2f) and Iterations (%12d). Avg/Min/Max are the mean/min/max over
// ranks of each rank's mean (as OSU). Ring runs (no OSU equivalent) print one line per link.
// The title starts with "# OSU" and keeps OSU's "<kind> Test" wording; the parenthesis says which
// rdmabench, transport and op produced it (and "full round trip" for RunInfo::roundTrip, where
// the latency column is the RTT instead of OSU's RTT/2). Bandwidth: "# Size      Bandwidth
// (MB/s)", MB/s = 10^6 B/s as OSU; RunInfo::bidirectional gives osu_bibw's "Bi-Directional
// Bandwidth Test" title. ReportOptions::full (OSU -f) adds "Min Latency(us)", "Max Latency(us)"
// (18 wide, as the other pt2pt columns) and "Iterations" (%12d, as OSU's collective tests) to
// latency tables.

#include <fmt/format.h>

#include <ostream>
#include <string>
#include <vector>

#include "report/format_util.h"

namespace rdmabench::report::detail {
namespace {

constexpr int kSizeWidth = 10;   // OSU: "%-10s" / "%-10d"
constexpr int kFieldWidth = 18;  // OSU pt2pt value columns (collectives: 20)
constexpr int kIterWidth = 12;   // OSU: "%12d" Iterations
constexpr int kCollWidth = 20;   // OSU collectives: "%-10s%20s" / "%20.2f"

class OsuReporter : public TextReporter {
 public:
  using TextReporter::TextReporter;

 private:
  bool isCollective() const {
    return kind() == TestKind::kBarrier || kind() == TestKind::kAllreduce ||
           kind() == TestKind::kRing;
  }

 protected:
  void writePreamble() override {
    const RunInfo& i = info();
    std::string title;
    switch (kind()) {
      case TestKind::kLatency:
        title = "Latency Test";
        break;
      case TestKind::kBandwidth:
        title = i.bidirectional ? "Bi-Directional Bandwidth Test" : "Bandwidth Test";
        break;
      case TestKind::kBarrier:
        title = "Barrier Latency Test";
        break;
      case TestKind::kAllreduce:
        title = "Allreduce Latency Test";
        break;
      case TestKind::kRing:
        title = "Ring Ping-Pong Latency Test";
        break;
    }
    std::string who = fmt::format("rdmabench {}", toolVersion(i));
    std::string how = i.transport;
    if (!i.op.empty()) how += (how.empty() ? "" : " ") + i.op;
    if (!how.empty()) who += ", " + how;
    if (kind() == TestKind::kLatency && i.roundTrip) who += ", full round trip";
    if (!i.remoteHost.empty() && isCollective()) who += ", " + i.remoteHost;
    out() << "\n# OSU MPI-free " << title << " (" << who << ")\n";
    if (kind() == TestKind::kAllreduce) {
      out() << "# Datatype: " << i.extra.value("mpi_datatype", std::string("MPI_FLOAT")) << ".\n";
    } else if (kind() != TestKind::kBarrier) {
      out() << "# Datatype: MPI_CHAR.\n";
    }
    if (std::string c = clockLine(i); !c.empty()) out() << "# Clock: " << c << '\n';
    if (std::string p = placementLine(i); !p.empty()) out() << "# Placement: " << p << '\n';
    for (const std::string& w : headerWarnings(i))
      out() << "# WARNING: " << w << '\n';
  }

  void writeColumns(const Row* /*first*/) override {
    std::string header = fmt::format("{:<{}}", "# Size", kSizeWidth);
    switch (kind()) {
      case TestKind::kLatency:
        header += fmt::format("{:>{}}", "Avg Latency(us)", kFieldWidth);
        if (options().full) {
          header += fmt::format("{:>{}}{:>{}}{:>{}}", "Min Latency(us)", kFieldWidth,
                                "Max Latency(us)", kFieldWidth, "Iterations", kIterWidth);
        }
        break;
      case TestKind::kBandwidth:
        header += fmt::format("{:>{}}", "Bandwidth (MB/s)", kFieldWidth);
        break;
      case TestKind::kBarrier:
      case TestKind::kAllreduce:
        // osu_barrier has no size column: "# Avg Latency(us)".
        header = kind() == TestKind::kBarrier ? std::string("# Avg Latency(us)")
                                              : fmt::format("{:<{}}{:>{}}", "# Size", kSizeWidth,
                                                            "Avg Latency(us)", kCollWidth);
        if (options().full) {
          header += fmt::format("{:>{}}{:>{}}{:>{}}", "Min Latency(us)", kCollWidth,
                                "Max Latency(us)", kCollWidth, "Iterations", kIterWidth);
        }
        break;
      case TestKind::kRing:
        header =
            fmt::format("# {:<8}{:<8}{:>{}}  {}", "Src", "Dst", "Latency(us)", kCollWidth, "Hosts");
        break;
    }
    out() << header << '\n';
  }

  void writeRow(const Row& row) override {
    std::string line = fmt::format("{:<{}}", row.bytes, kSizeWidth);
    switch (kind()) {
      case TestKind::kLatency: {
        stats::Summary s = row.latency.value_or(stats::Summary{});
        line += fmt::format("{:>{}.2f}", s.mean, kFieldWidth);
        if (options().full) {
          line += fmt::format("{:>{}.2f}{:>{}.2f}{:>{}}", s.min, kFieldWidth, s.max, kFieldWidth,
                              row.iterations, kIterWidth);
        }
        break;
      }
      case TestKind::kBandwidth:
        line += fmt::format("{:>{}.2f}", row.megabytesPerSec, kFieldWidth);
        break;
      case TestKind::kBarrier:
      case TestKind::kAllreduce: {
        CollectiveRow c = row.collective.value_or(CollectiveRow{});
        // osu_barrier: "%20.2f" alone (avg); osu_allreduce: "%-10d%20.2f".
        line = kind() == TestKind::kBarrier
                   ? fmt::format("{:>{}.2f}", c.tAvgUs, kCollWidth)
                   : fmt::format("{:<{}}{:>{}.2f}", row.bytes, kSizeWidth, c.tAvgUs, kCollWidth);
        if (options().full) {
          line += fmt::format("{:>{}.2f}{:>{}.2f}{:>{}}", c.tMinUs, kCollWidth, c.tMaxUs,
                              kCollWidth, row.iterations, kIterWidth);
        }
        break;
      }
      case TestKind::kRing: {
        RingLinkRow l = row.link.value_or(RingLinkRow{});
        line = fmt::format("  {:<8}{:<8}{:>{}.2f}  {} -> {}{}", l.srcRank, l.dstRank, l.medianUs,
                           kCollWidth, l.srcHost, l.dstHost, l.outlier ? "  OUTLIER" : "");
        break;
      }
    }
    out() << line << '\n';
    if (!row.descheduled.is_null()) deschedSizes_.push_back(row.bytes);
    if (!row.stalled.is_null()) stallSizes_.push_back(row.bytes);
  }

  // OSU rows have no room for the table's "desched" mark: one "#" line after the table (OSU
  // parsers skip comment lines), none when no row lost the CPU.
  void writeEnd() override {
    if (!deschedSizes_.empty())
      out() << "# WARNING: " << deschedSizesWarning(deschedSizes_) << '\n';
    if (!stallSizes_.empty()) out() << "# WARNING: " << stallSizesWarning(stallSizes_) << '\n';
  }

  std::vector<uint64_t> deschedSizes_;
  std::vector<uint64_t> stallSizes_;  // sizes of the rows whose time was mostly one pause
};

}  // namespace

std::unique_ptr<Reporter> makeOsuReporter(std::ostream& out, const ReportOptions& options) {
  return std::make_unique<OsuReporter>(out, options);
}

}  // namespace rdmabench::report::detail
