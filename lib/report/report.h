#pragma once
// Results and their output formats. Engines produce Rows; a Reporter prints them.
//
// Units: sizes in bytes; times in microseconds; bandwidth in MB/s = 10^6 B/s (OSU, IMB);
// Gb/s = 10^9 bit/s; Row::messagesPerSec in messages/s, shown by table/perftest as Mmsg/s =
// 10^6 messages/s (perftest's MsgRate[Mpps]).
// Formats (docs/metrics.md defines every column):
//  - "table" (default): header block of `#` lines, then right-aligned columns for humans;
//  - "json": one JSON document {"tool","version","run","rows"[,"error"]}, streamed row by row;
//  - "csv": one header line and one line per row (RFC 4180 quoting, no comment lines);
//  - "perftest", "osu", "imb": the column layouts of ib_*_lat/ib_*_bw, OSU 7.x and IMB-MPI1,
//    so rows can be pasted next to (and parsed like) those tools' output.
// Each format picks its layout from RunInfo::test (report::Test, mapped by detail::testKind in
// format_util.h); a new layout is a new enumerator there plus one case per format. Thread-safety:
// one Reporter per thread; a Reporter writes only to the ostream it was given.

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/measure_clock.h"
#include "common/placement.h"
#include "stats/summary.h"
#include "transport/info.h"

namespace rdmabench::report {

// Which command produced the run: its name in every format ("lat", "bw", "barrier",
// "allreduce", "ring", "pairs", "congestion"). The engine (engine::TestKind) and the N-rank
// commands (collective::RankParams::test) set it; the formats pick their layout from it.
enum class Test : uint8_t { kLat, kBw, kBarrier, kAllreduce, kRing, kPairs, kCongestion };

// The command's name, as above.
const char* toString(Test test);
// The inverse, for the command line and tests; empty for an unknown name.
std::optional<Test> testFromName(std::string_view name);

// What was run, printed once as the header block / JSON "run" object.
struct RunInfo {
  // Empty = not known: a run that failed before its header (JSON and CSV print "", the table
  // "?"; the layout is the latency one).
  std::optional<Test> test;
  std::string transport;  // "socket", "verbs", "ofi"
  std::string op;         // "send", "write", "read", ...
  bool bidirectional = false;
  bool roundTrip = false;  // latency column is the full round trip (RDMA read), not RTT/2
  uint32_t window = 0;     // bandwidth: messages in flight per iteration
  std::string localHost, remoteHost;
  // This side's device, connection and caps (N-rank runs: the device only); the writers turn
  // them into JSON with transport::toJson (info_json.h).
  transport::SideInfo local;
  // The peer's device and caps, decoded once from its accept (transport::deviceInfoFromJson,
  // capsFromJson); empty for N-rank runs.
  transport::SideInfo remote;
  std::string commandLine;
  std::string date;         // ISO 8601, UTC
  std::string toolVersion;  // empty = this build's release version (common/version.h)
  // `git describe` of the build (common/version.h): unset = this build's, "" = none.
  std::optional<std::string> gitDescribe;
  nlohmann::json extra = nlohmann::json::object();  // anything else (iteration policy, ...)
  // Measurement clock of the measuring side (common/measure_clock.h); empty = not recorded.
  // The writers turn it into text (clockLine) or JSON (ClockFacts::toJson).
  std::optional<ClockFacts> clock;
  // Where the benchmark thread ran (common/placement.h; N-rank runs: every rank's CPUs in
  // PlacementFacts::ranks); empty = not recorded.
  std::optional<PlacementFacts> placement;
};

// Collective measurements of one size (barrier: bytes = 0), computed by rank 0 from every
// rank's per-iteration times. Definitions (docs/metrics.md): each rank averages its own
// iterations; tMin/tMax/tAvg are the min/max/mean of those per-rank means (IMB's t_min, t_max,
// t_avg; OSU's Min/Max/Avg Latency). slowest* describe, over iterations, the time of the slowest
// rank in that iteration (jitter). algbw = bytes / tAvg, busbw = algbw * 2(n-1)/n (nccl-tests'
// allreduce factor), both in GB/s = 10^9 B/s.
struct CollectiveRow {
  int ranks = 0;
  std::string algorithm;  // "tree", "ring", "rd", "rabenseifner", "dissemination"
  uint64_t count = 0;     // elements
  double tMinUs = 0, tMaxUs = 0, tAvgUs = 0;
  double slowestP50Us = 0, slowestP99Us = 0, slowestMaxUs = 0;
  double algbwGBs = 0, busbwGBs = 0;
  std::optional<uint64_t> wrong;  // mismatched elements summed over ranks; empty = not checked
  // In-network reduction (--algo sharp): busbw does not apply (printed n/a, JSON null, CSV
  // empty); a request of `bytes` travels as ceil(bytes / ostPayloadBytes) OST payloads.
  bool inNetwork = false;
  uint64_t ostPayloadBytes = 0;  // 0 = not known
};

// One directed link of `rdmabench ring`: rank src ping-pongs with dst; latency = RTT/2 in us.
struct RingLinkRow {
  int srcRank = 0, dstRank = 0;
  std::string srcHost, dstHost, srcAddress, dstAddress;
  std::string direction;  // "right" or "left"
  double medianUs = 0, minUs = 0, meanUs = 0, p99Us = 0;
  bool outlier = false;
};

// A row timed over less than this (seconds, in total) is flagged "short".
inline constexpr double kShortIntervalSec = 1e-3;

// One measured message size.
struct Row {
  uint64_t bytes = 0;
  uint64_t iterations = 0;  // measured (warmup excluded)
  uint64_t warmup = 0;
  // Latency tests: one-way latency = RTT/2 per iteration (RunInfo::roundTrip: full RTT), us.
  std::optional<stats::Summary> latency;
  // Bandwidth tests (as measured by the sending side; bidirectional: both directions summed).
  double seconds = 0;                         // timed interval
  double megabytesPerSec = 0;                 // MB/s, 10^6 B/s
  double messagesPerSec = 0;                  // messages/s
  std::optional<double> peerMegabytesPerSec;  // what the target measured on its own interval
  // Messages per connection and direction in the timed interval (bw: window mode = iterations x
  // window, stream mode = iterations; lat: iterations); perftest's #iterations column.
  uint64_t messages = 0;
  // --check: messages (bw) or iterations (lat) whose payload was wrong, both sides summed;
  // empty = not checked (nccl-tests' #wrong).
  std::optional<uint64_t> wrong;
  // What the reader must know about this row, as short words (table: a last cell "[short]";
  // JSON/CSV "flags"): "short" = timed over less than kShortIntervalSec in total (the clock's
  // and the loop's overheads weigh in); "capped" = fewer iterations than the automatic count,
  // cut by --max-time. Empty for most rows.
  std::vector<std::string> flags;
  std::optional<CollectiveRow> collective;  // barrier / allreduce runs
  std::optional<RingLinkRow> link;          // ring runs: one row per directed link
  // The timed loop lost the CPU (common/desched.h DeschedDelta::toJson: involuntary_switches,
  // steal_us, run_delay_us); null = not flagged. Table: a "desched" mark and a WARNING line.
  nlohmann::json descheduled;
  // bw: one pause took most of the timed interval (common/stall.h GapStats::toJson:
  // longest_gap_us, share, typical_gap_us, intervals); null = not flagged. Table: a "stall" mark
  // and a WARNING line; osu/imb: a "# WARNING" line after the table.
  nlohmann::json stalled;
};

struct ReportOptions {
  bool gigabits = false;  // table: add a Gb/s column; perftest: print Gb/sec (--report_gbits)
  bool full = false;      // osu: add Min/Max Latency(us) and Iterations columns (OSU -f)
};

// Call order: begin() once, row() per size, then exactly one of end() or abort(). Calls after
// end()/abort() are ignored; row() before begin() behaves as if begin(RunInfo{}) had been called.
// Output is flushed after every row so a long sweep shows progress. Writing never throws.
class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void begin(const RunInfo& info) = 0;
  virtual void row(const Row& row) = 0;  // called once per size, in sweep order
  virtual void end() = 0;                // JSON closes its document here
  // The run failed (before or after begin()): machine formats record `message` and stay valid
  // (JSON gets an "error" member and is closed; CSV gets a last line whose "error" column holds
  // the message); the text formats (table, perftest, osu, imb) end with a comment line
  // `# error: MESSAGE` (stderr has the error too). A JSON reporter destroyed after begin() without
  // end()/abort() aborts itself.
  virtual void abort(const std::string& message) = 0;
};

// Formats known to makeReporter, in help order: table, json, csv, perftest, osu, imb.
const std::vector<std::string>& formatNames();

// A Reporter writing `format` to `out` (which must outlive it). Names are case-sensitive.
// Throws UsageError naming --format and the valid names for an unknown `format`.
std::unique_ptr<Reporter> makeReporter(std::string_view format, std::ostream& out,
                                       const ReportOptions& options = {});

}  // namespace rdmabench::report
