#pragma once
// Output of `rdmabench pairs` (docs/fabric-map.md): the all-pairs matrices as a table for
// people, JSON or CSV, the ranked outlier list, and a gnuplot heat map script.
// Units: latency in microseconds (one-way, RTT/2), bandwidth in MB/s = 10^6 B/s.
// Thread-safety: pure functions of their arguments; they write only to the given stream.

#include <iosfwd>
#include <string>
#include <vector>

#include "collective/pairs.h"

namespace rdmabench::collective {

// How ranks are named: the host name when every rank's host name is distinct, else
// "host (address)" (several ranks per host, or network namespaces sharing one host name).
std::string pairsNodeName(const PairsResult& r, int rank);

// "table": the usual `#` header block (report/table_format), then one line per ordered pair
// (src, dst, hosts, latency median/min/avg/p99, MB/s, outlier flags), the two matrices when
// ranks <= 16, the findings (pairs_findings.h) as `#` lines and the verdict line. "json": one
// document {"tool","version","run","ranks","links","matrix","thresholds","outliers","verdict"}.
// "csv": a header line and one line per ordered pair (RFC 4180). A failed run (r.failed: the
// rounds measured before the failure) adds its error: JSON "rounds_measured" and "error", the
// table `# measured:` and `# error:` lines (none when r.error is empty); the CSV: its rows only.
// UsageError for any other format.
void writePairs(std::ostream& out, const std::string& format, const PairsResult& r);

// Formats writePairs accepts.
const std::vector<std::string>& pairsFormatNames();

// A complete gnuplot script drawing two heat maps side by side (latency median, bandwidth),
// rows = src, columns = dst, ranks labelled with pairsNodeName; `output` ends in .png or .svg
// (UsageError otherwise, naming --plot).
std::string pairsHeatMapScript(const PairsResult& r, const std::string& output);

}  // namespace rdmabench::collective
