#pragma once
// The common model every input of `rdmabench compare` / `rdmabench plot` is parsed into: one
// Series per benchmark table (an IMB file or a concatenated OSU log can hold several), one Point
// per message size. docs/compare.md describes the mapping of each tool's columns.
//
// Units: sizes in bytes; latency and collective time in microseconds; bandwidth in MB/s =
// 10^6 B/s (perftest's MiB/s and Gb/s are converted on input). Thread-safety: plain values.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rdmabench::compare {

// What a series' value means, and so which inputs can be compared.
enum class Metric {
  kLatency,     // point-to-point latency, us (lower is better): osu_latency, IMB PingPong, ...
  kBandwidth,   // MB/s = 10^6 B/s (higher is better): osu_bw/bibw, IMB Uniband/Biband, ...
  kCollective,  // time of one collective call, us (lower is better): allreduce, barrier, ...
};

// Which tool wrote an input. kOsu and kImb ran under MPI, the others did not.
enum class Source { kRdmabench, kOsu, kImb, kPerftest };

// One message size of one series.
struct Point {
  uint64_t bytes = 0;         // 0 as well for size-less tests (barrier): see Series::sized
  double value = 0;           // the compared figure: mean latency/time (us) or bandwidth (MB/s)
  std::optional<double> min;  // latency/collective: smallest (per-rank mean) time, us
  std::optional<double> max;  // latency/collective: largest, us
  std::optional<uint64_t> iterations;  // iterations / repetitions, when printed
};

// A size the tool printed something else than a result for (a failure), or a result it flagged
// itself (a warning). `text` is one line, already escaped for a terminal.
struct RowIssue {
  uint64_t bytes = 0;  // 0 for size-less tests
  std::string text;    // e.g. "failed in IMB: out-of-mem", "IMB reported 3 defects"
  uint64_t line = 0;   // input line (0 when the input has no lines, e.g. JSON)
};

// One benchmark table.
struct Series {
  std::string path;   // the file it came from ("-" for stdin)
  std::string label;  // short name for column headers and plot keys (file name [+ suffix])
  Source source = Source::kRdmabench;
  // Canonical test kind, used to align inputs: "latency", "bandwidth", "bibw", "allreduce",
  // "barrier", or another tool test name in lower case ("bcast", "sendrecv", "mbw_mr", ...).
  std::string test;
  Metric metric = Metric::kLatency;
  bool sized = true;             // false for tests without a message size (barrier)
  std::string title;             // the tool's own title/banner, e.g. "OSU MPI Latency Test v7.5"
  std::string column;            // the tool's column the value came from, e.g. "Avg Latency(us)"
  std::string note;              // conversions applied, e.g. "perftest MiB/sec converted to MB/s"
  std::optional<int> processes;  // IMB "#processes = N"; rdmabench JSON: its ranks
  // Tool release that wrote the table ("5.3.2", "2021.11", "4.1 Update 1"; rdmabench's version),
  // empty when the input does not say.
  std::string toolVersion;
  // 1-based ordinal of the table in its file (A/B variants of one JSON share theirs) and the
  // input lines it spans (0 when unknown): named when compare asks to choose a section.
  int section = 0;
  uint64_t firstLine = 0, lastLine = 0;
  std::string variant;    // rdmabench A/B: the variant's label
  std::string transport;  // rdmabench JSON: "socket", "verbs read", ... (empty otherwise)
  std::string host;       // rdmabench JSON: "local_host -> remote_host" (empty when not said)
  // What the value measures, for like-for-like checks (docs/compare.md, "Like for like"):
  // latency: "one-way" (half round trip) or "round trip"; bandwidth: "window" (osu_bw, IMB,
  // rdmabench window mode), "stream" (rdmabench --mode stream) or "perftest"; collective
  // "t_avg". Empty = the usual definition of its kind.
  std::string definition;
  std::vector<Point> points;  // in file order; one per size (repeats are dropped on input)
  // Sizes the tool reports as failed (IMB out-of-mem / time-out, OSU nan, a JSON null): never a
  // value, shown as "failed" in the comparison.
  std::vector<RowIssue> failures;
  // Sizes whose value the tool itself flagged (IMB defects > 0, OSU validation Fail, rdmabench
  // --check wrong elements, a ring outlier link): compared, with the warning in the row.
  std::vector<RowIssue> warnings;
};

// "rdmabench", "OSU", "IMB-MPI1", "perftest".
const char* sourceName(Source source);
// True for the inputs that ran under MPI (OSU, IMB).
bool isMpi(Source source);
// "latency", "bandwidth", "collective".
const char* metricName(Metric metric);
// Unit of a metric's value: "us" or "MB/s".
const char* metricUnit(Metric metric);
// True when a smaller value is better (latency, collective time).
bool lowerIsBetter(Metric metric);

}  // namespace rdmabench::compare
