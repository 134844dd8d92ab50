// perftest ib_*_lat / ib_*_bw result tables (docs/metrics.md §3, research/perftest.md §3):
//   " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec] ..."
//   " #bytes        #iterations       t_avg[usec]    tps average"        (duration mode)
//   " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"
// The value is t_avg (with t_min/t_max) for latency and BW average for bandwidth. Units: real
// perftest's "MB/sec" (<= 6.06) and "MiB/sec" are 2^20 B/s and are converted to MB/s = 10^6 B/s
// (x 1.048576); "Gb/sec" is 10^9 bit/s (x 125). Output of `rdmabench --format perftest` (its
// " Tool : rdmabench" info line) used 10^6 B/s under "MB/sec" before it printed a "BW units" line;
// with that line saying 2^20 it is converted like perftest's. The title line ("Send
// Latency Test", "RDMA_Write Bidirectional BW Test") gives the test and "bibw".
//
// Cycles: with -C perftest prints CPU cycles under headers that still say [usec]; only its -U /
// -H sample dumps say so ("#, cycles"). A file with such a line (or a [cycles] header) is never
// read as microseconds: its latencies are divided by ReadOptions::cpuMhz (cycles per us), and
// without it the file is refused with one line naming it. The sample dump lines ("12, 1.53")
// are understood and not used (the table rows carry the statistics).

#include <fmt/format.h>

#include "common/error.h"
#include "common/json_read.h"
#include "compare/read_detail.h"
#include "compare/text_util.h"

namespace rdmabench::compare::detail {

namespace {

bool dashes(std::string_view line) {
  return line.size() >= 3 && line.find_first_not_of('-') == std::string_view::npos;
}

// "12, 1.53": one sample of a -U / -H dump.
bool dumpSample(const std::vector<std::string>& tok) {
  return tok.size() == 2 && tok[0].size() > 1 && tok[0].back() == ',' &&
         parseCount(std::string_view(tok[0]).substr(0, tok[0].size() - 1)) && parseNumber(tok[1]);
}

class PerftestReader : public TableReader {
 public:
  explicit PerftestReader(ReadContext& ctx) : ctx_(ctx) {}

  void line(std::string_view line, uint64_t no) override {
    if (line.empty()) return;
    std::vector<std::string> tok = splitWhitespace(line);
    if (dashes(line)) {
      if (inTable_ && rows_ > 0) inTable_ = false;
      return;
    }
    if (line == "#, usec" || line == "#, cycles") {
      if (line == "#, cycles" && !cyclesLine_) cyclesLine_ = no;
      return;
    }
    if (dumpSample(tok)) {
      ++dumpLines_;
      return;
    }
    if (line.size() > 5 && (line.ends_with("Latency Test") || line.ends_with("BW Test"))) {
      title_ = line;
      return;
    }
    if (tok[0] == "Tool" && containsNoCase(line, "rdmabench")) {
      rdmabench_ = true;
      return;
    }
    // rdmabench >= 0.1 states its unit ("BW units : MB/sec = 2^20 B/s ..."), as perftest divides.
    if (tok[0] == "BW" && tok.size() > 1 && tok[1] == "units") {
      binaryUnits_ = line.find("2^20") != line.npos;
      return;
    }
    if (tok[0] == "#bytes") {
      header(line, no);
      return;
    }
    bool rowShape = tok.size() >= 3 && parseCount(tok[0]) && parseCount(tok[1]);
    if (!inTable_ || valueCol_ < 0) {
      // Banners and " Key : value" info lines are perftest's; a row here has no header.
      if (rowShape) ctx_.skipped(no, line, "not understood (a row outside a perftest table)");
      return;
    }
    if (!rowShape) {
      ctx_.skipped(no, line);
      return;
    }
    const size_t vc = static_cast<size_t>(valueCol_);
    if (vc >= tok.size()) {
      ctx_.skipped(no, line, "not understood (no value column)");
      return;
    }
    ++rows_;
    Point p;
    p.bytes = *parseCount(tok[0]);
    p.iterations = parseCount(tok[1]);
    auto value = parseNumber(tok[vc]);
    if (!value) {
      cur_.fail(p.bytes,
                fmt::format("perftest printed `{}`, not a number", escapeForLog(tok[vc], 40)), no,
                line, ctx_);
      return;
    }
    p.value = *value * scale_;
    if (minCol_ >= 0 && static_cast<size_t>(minCol_) < tok.size())
      p.min = parseNumber(tok[static_cast<size_t>(minCol_)]);
    if (maxCol_ >= 0 && static_cast<size_t>(maxCol_) < tok.size())
      p.max = parseNumber(tok[static_cast<size_t>(maxCol_)]);
    cur_.add(p, no, line, ctx_);
  }

  std::vector<Series> finish() override {
    finish1();
    if (cyclesLine_) convertCycles();
    if (dumpLines_)
      for (Series& s : out_)
        s.note += (s.note.empty() ? "" : "; ") +
                  fmt::format(
                      "{} sample line(s) of perftest's -U/-H dump not used (the table "
                      "rows carry the statistics)",
                      dumpLines_);
    return std::move(out_);
  }

 private:
  void finish1() {
    if (open_) out_.push_back(std::move(cur_.series));
    cur_ = SeriesBuilder{};
    open_ = inTable_ = false;
    valueCol_ = minCol_ = maxCol_ = -1;
    rows_ = 0;
  }

  void header(std::string_view line, uint64_t no) {
    finish1();
    open_ = inTable_ = true;
    Series& s = cur_.series;
    s.source = rdmabench_ ? Source::kRdmabench : Source::kPerftest;
    s.title = title_.empty() ? "perftest" : title_;
    scale_ = 1.0;
    if (line.find("[cycles]") != line.npos && !cyclesLine_) cyclesLine_ = no;
    if (line.find("t_min[") != line.npos) {
      s.metric = Metric::kLatency;
      s.test = "latency";
      minCol_ = 2;
      maxCol_ = 3;
      valueCol_ = 5;
      s.column = "t_avg[usec]";
    } else if (line.find("t_avg[") != line.npos) {
      s.metric = Metric::kLatency;
      s.test = "latency";
      valueCol_ = 2;
      s.column = "t_avg[usec]";
    } else if (size_t at = line.find("BW average["); at != line.npos) {
      s.metric = Metric::kBandwidth;
      s.test = containsNoCase(title_, "Bidirectional") ? "bibw" : "bandwidth";
      valueCol_ = 3;
      size_t close = line.find(']', at);
      std::string unit(line.substr(at + 11, close == line.npos ? 0 : close - at - 11));
      s.column = "BW average[" + unit + "]";
      if (unit == "Gb/sec") {
        scale_ = 125.0;
        s.note = "Gb/sec converted to MB/s (x 125)";
      } else if (unit == "MiB/sec" || (unit == "MB/sec" && (!rdmabench_ || binaryUnits_))) {
        scale_ = 1.048576;
        s.note = "perftest " + unit + " (2^20 B/s) converted to MB/s = 10^6 B/s (x 1.048576)";
      }
    } else {
      open_ = inTable_ = false;
      ctx_.skipped(no, line, "not understood (a perftest header without a known value column)");
      return;
    }
    if (containsNoCase(title_, "RDMA_Read") || containsNoCase(title_, "Atomic"))
      s.note = "latency is the full round trip (perftest read/atomic)";
  }

  void convertCycles() {
    const auto& mhz = ctx_.options().cpuMhz;
    if (!mhz)
      throw UsageError(fmt::format(
          "{}: perftest reported CPU cycles, not microseconds (-C; line {} says so); give "
          "--cpu-mhz MHZ, the CPU frequency of that run, to convert",
          ctx_.path(), cyclesLine_));
    for (Series& s : out_) {
      if (s.metric != Metric::kLatency) continue;
      for (Point& p : s.points) {
        p.value /= *mhz;
        if (p.min) *p.min /= *mhz;
        if (p.max) *p.max /= *mhz;
      }
      s.note += (s.note.empty() ? "" : "; ") +
                fmt::format("perftest -C cycles converted to us at {} MHz (--cpu-mhz)", *mhz);
    }
  }

  ReadContext& ctx_;
  std::vector<Series> out_;
  SeriesBuilder cur_;
  std::string title_;
  bool rdmabench_ = false, open_ = false, inTable_ = false;
  bool binaryUnits_ = false;  // an rdmabench "BW units" line said MB/sec = 2^20 B/s
  int valueCol_ = -1, minCol_ = -1, maxCol_ = -1;
  uint64_t rows_ = 0, dumpLines_ = 0, cyclesLine_ = 0;
  double scale_ = 1.0;
};

}  // namespace

std::unique_ptr<TableReader> makePerftestReader(ReadContext& ctx) {
  return std::make_unique<PerftestReader>(ctx);
}

}  // namespace rdmabench::compare::detail
