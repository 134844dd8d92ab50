#pragma once
// Output of `rdmabench congestion` (docs/congestion.md), laid out like GPCNeT's tables: per
// victim metric the isolated and congested p50 / p99 and the congestion impact factors.
// Units: latency in microseconds per ring iteration, bandwidth in MB/s = 10^6 B/s per victim;
// a bandwidth "p99" is the rate of the 99th-percentile (slow) iteration.
// Thread-safety: pure functions of their arguments; they write only to the given stream.

#include <iosfwd>
#include <string>
#include <vector>

#include "collective/congestion.h"

namespace rdmabench::collective {

// A metric's figure at a time quantile in its unit: us for latency, MB/s for bandwidth.
double congestionFigure(const CongestionMetric& m, double timeUs);

// "table": the `#` header block (report/table_format), the split and the pattern as `#`
// lines, then one line per metric. "json": one document {"tool","version","run","split",
// "aggressors","metrics"} (run.extra carries ranks, nodes, victims, aggressors, pattern, seed,
// sizes and launch). "csv": a header line and one line per metric (RFC 4180). A failed run
// (r.failed: the isolated phase measured) adds its error: JSON "phases_measured" and "error",
// the table `# measured:` and `# error:` lines (the CSV: its rows only).
// UsageError for any other format.
void writeCongestion(std::ostream& out, const std::string& format, const CongestionResult& r);

}  // namespace rdmabench::collective
