// perftest ib_*_lat / ib_*_bw result tables (docs/metrics.md §3, research/perftest.md §3):
//   " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec] ..."
//   " #bytes        #iterations       t_avg[usec]    tps average"        (duration mode)
//   " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"
// The value is t_avg (with t_min/t_max) for latency and BW average for bandwidth. Units: real
// perftest's "MB/sec" (<= 6.06) and "MiB/sec" are 2^20 B/s and are converted to MB/s = 10^6 B/s
// (x 1.048576); "Gb/sec" is 10^9 bit/s (x 125). Output of `rdmabench --format perftest` (its
// " Tool : rdmabench" info line) already uses 10^6 B/s under "MB/sec". The title line ("Send
// Latency Test", "RDMA_Write Bidirectional BW Test") gives the test and "bibw".

#include "compare/parse.h"
#include "compare/text_util.h"

namespace rdmabench::compare {

using namespace detail;

std::vector<Series> parsePerftest(std::string_view text, const std::string& path) {
  std::vector<Series> out;
  std::string title;
  bool rdmabench = false;
  bool open = false;
  Series cur;
  int valueCol = -1, minCol = -1, maxCol = -1;
  double scale = 1.0;
  auto finish = [&] {
    if (open) out.push_back(std::move(cur));
    cur = Series{};
    open = false;
  };
  for (const std::string& raw : splitLines(text)) {
    std::string line = trim(raw);
    if (line.empty() || line.find_first_not_of('-') == std::string::npos) continue;
    std::vector<std::string> tok = splitWhitespace(line);
    if (line.size() > 5 && (line.ends_with("Latency Test") || line.ends_with("BW Test"))) {
      title = line;
      continue;
    }
    if (tok[0] == "Tool" && containsNoCase(line, "rdmabench")) {
      rdmabench = true;
      continue;
    }
    if (tok[0] == "#bytes") {
      finish();
      open = true;
      cur.path = path;
      cur.source = rdmabench ? Source::kRdmabench : Source::kPerftest;
      cur.title = title.empty() ? "perftest" : title;
      scale = 1.0;
      minCol = maxCol = -1;
      if (line.find("t_min[usec]") != line.npos) {
        cur.metric = Metric::kLatency;
        cur.test = "latency";
        minCol = 2;
        maxCol = 3;
        valueCol = 5;
        cur.column = "t_avg[usec]";
      } else if (line.find("t_avg[usec]") != line.npos) {
        cur.metric = Metric::kLatency;
        cur.test = "latency";
        valueCol = 2;
        cur.column = "t_avg[usec]";
      } else if (size_t at = line.find("BW average["); at != line.npos) {
        cur.metric = Metric::kBandwidth;
        cur.test = containsNoCase(title, "Bidirectional") ? "bibw" : "bandwidth";
        valueCol = 3;
        size_t close = line.find(']', at);
        std::string unit = line.substr(at + 11, close == line.npos ? 0 : close - at - 11);
        cur.column = "BW average[" + unit + "]";
        if (unit == "Gb/sec") {
          scale = 125.0;
          cur.note = "Gb/sec converted to MB/s (x 125)";
        } else if (unit == "MiB/sec" || (unit == "MB/sec" && !rdmabench)) {
          scale = 1.048576;
          cur.note = "perftest " + unit + " (2^20 B/s) converted to MB/s = 10^6 B/s (x 1.048576)";
        }
      } else {
        open = false;
        valueCol = -1;
        continue;
      }
      if (containsNoCase(title, "RDMA_Read") || containsNoCase(title, "Atomic"))
        cur.note = "latency is the full round trip (perftest read/atomic)";
      continue;
    }
    if (!open || valueCol < 0 || static_cast<size_t>(valueCol) >= tok.size()) continue;
    auto bytes = parseCount(tok[0]);
    auto value = parseNumber(tok[static_cast<size_t>(valueCol)]);
    if (!bytes || !value || !parseCount(tok[1])) continue;
    Point p;
    p.bytes = *bytes;
    p.value = *value * scale;
    p.iterations = parseCount(tok[1]);
    if (minCol >= 0) p.min = parseNumber(tok[static_cast<size_t>(minCol)]);
    if (maxCol >= 0) p.max = parseNumber(tok[static_cast<size_t>(maxCol)]);
    cur.points.push_back(p);
  }
  finish();
  return out;
}

}  // namespace rdmabench::compare
