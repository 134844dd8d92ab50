// IMB-MPI1 output: any number of benchmarks, each a banner
//   #----------------------------------------------------------------
//   # Benchmarking Allreduce
//   # #processes = 2
//   #----------------------------------------------------------------
// then a header of single-word columns ("#bytes #repetitions t_min[usec] t_max[usec]
// t_avg[usec]", Barrier without "#bytes", PingPong "t[usec] Mbytes/sec", Uniband/Biband
// "Mbytes/sec Msg/sec") and one row per size. PingPong/PingPing -> latency (t[usec]);
// Uniband -> bandwidth, Biband -> bibw (Mbytes/sec, 10^6 B/s in current IMB); tables with
// t_avg -> collective time (t_avg, with t_min/t_max). rdmabench's preamble line ("rdmabench
// X, IMB-MPI1 layout (no MPI)") marks
// `rdmabench --format imb` output, which did not run under MPI.
//
// Attribution is per table: the banner before it ("Intel(R) MPI Benchmarks 2021.11, MPI-1 part",
// 4.x: "Intel (R) MPI Benchmarks 4.1 Update 1, MPI-1 part") or rdmabench's preamble decides
// the tool and version of every table that follows, until the next banner (concatenated files).
// Units by version: IMB 4.1 and older print Mbytes/sec in 2^20 B/s (MEGA = 1.0/1048576.0 in their
// IMB_output.c; e.g. 4.1 Update 1: 4194304 B in 1077.75 us printed 3711.45), IMB 2017 and later in
// 10^6 B/s (MEGA = 1.0/1e6); older figures are converted to MB/s (x 1.048576), and a table
// without a readable version is taken as 10^6 B/s with a note naming the assumption.
//
// A row must have one number per header column; a row with fewer is a row cut short (dropped with
// a note). IMB prints a failed sample as the size followed
// by a sentence ("4194304 out-of-mem.; needed X=   2.148 GB; use flag ...", "... time-out.; ...",
// "... int-overflow.; ..."): that size becomes a failure ("failed in IMB: out-of-mem"), never a
// value. With data checking (-check) IMB adds a `defects` column: a row with defects > 0 is
// compared with a warning in the row.

#include <fmt/format.h>

#include "common/json_read.h"
#include "compare/read_detail.h"
#include "compare/text_util.h"

namespace rdmabench::compare::detail {

namespace {

int columnIndex(const std::vector<std::string>& columns, const char* name) {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return static_cast<int>(i);
  return -1;
}

// "out-of-mem.;" -> "out-of-mem"; a sentence -> its first words, escaped and shortened.
std::string failureReason(const std::vector<std::string>& tok, size_t from) {
  if (from >= tok.size()) return "row ends early";
  std::string word = tok[from];
  while (!word.empty() && (word.back() == ';' || word.back() == '.' || word.back() == ','))
    word.pop_back();
  for (const char* known : {"out-of-mem", "time-out", "int-overflow"})
    if (lower(word) == known) return known;
  std::string rest;
  for (size_t i = from; i < tok.size() && rest.size() < 60; ++i)
    rest += (rest.empty() ? "" : " ") + tok[i];
  return fmt::format("`{}`", escapeForLog(rest, 60));  // "`" + string&&: GCC 12 -Wrestrict
}

class ImbReader : public TableReader {
 public:
  explicit ImbReader(ReadContext& ctx) : ctx_(ctx) {}

  void line(std::string_view line, uint64_t no) override {
    if (line.empty()) return;
    std::vector<std::string> tok = splitWhitespace(line);
    if (line.starts_with("# Benchmarking ")) {
      start(trim(line.substr(15)));
      return;
    }
    if (line[0] == '#' && tok[0] != "#bytes" && tok[0] != "#repetitions") {
      // rdmabench's preamble: "#    rdmabench 0.1.0, IMB-MPI1 layout (no MPI)"; IMB's banner.
      if (containsNoCase(line, "rdmabench") && containsNoCase(line, "layout (no MPI)")) {
        banner(Source::kRdmabench, line, "rdmabench");
      } else if (size_t at = line.find("MPI Benchmarks");
                 at != std::string_view::npos && containsNoCase(line.substr(0, at), "Intel")) {
        banner(Source::kImb, line.substr(at), "MPI Benchmarks");
      }
      if (open_ && line.starts_with("# #processes = ")) {
        if (auto n = parseCount(trim(line.substr(15))); n && *n <= 1u << 30)
          cur_.series.processes = static_cast<int>(*n);
      }
      return;
    }
    if (tok[0] == "#bytes" || tok[0] == "#repetitions") {
      header(tok);
      return;
    }
    if (!open_ || columns_.empty() || valueCol_ < 0) {
      ctx_.skipped(no, line, "not understood (outside an IMB table)");
      return;
    }
    Series& s = cur_.series;
    uint64_t bytes = 0;
    if (s.sized) {
      auto b = parseCount(tok[0]);
      if (!b) {
        ctx_.skipped(no, line, "not understood (no message size)");
        return;
      }
      bytes = *b;
    }
    // Every column must be a number; the first that is not starts IMB's failure sentence.
    const size_t firstValue = s.sized ? 1 : 0;
    for (size_t i = firstValue; i < columns_.size() && i < tok.size(); ++i) {
      if (parseNumber(tok[i])) continue;
      if (!s.sized && !containsNoCase(line, "out-of-mem") && !containsNoCase(line, "time-out") &&
          !containsNoCase(line, "overflow")) {
        ctx_.skipped(no, line);
        return;
      }
      // Appended, not `"..." + std::string`: GCC 12 at -O3 raises a -Wrestrict false positive.
      std::string reason = "failed in IMB: ";
      reason += failureReason(tok, i);
      cur_.fail(bytes, reason, no, line, ctx_);
      return;
    }
    if (tok.size() < columns_.size()) {
      ctx_.truncated(
          no, line, fmt::format("{} of the {} columns of its header", tok.size(), columns_.size()));
      return;
    }
    if (tok.size() != columns_.size()) {
      ctx_.skipped(
          no, line,
          fmt::format("not understood ({} fields for {} columns)", tok.size(), columns_.size()));
      return;
    }
    auto at = [&](int col) -> std::optional<double> {
      if (col < 0 || static_cast<size_t>(col) >= tok.size()) return std::nullopt;
      return parseNumber(tok[static_cast<size_t>(col)]);
    };
    Point p;
    p.bytes = bytes;
    p.value = *at(valueCol_) * scale_;
    p.min = at(minCol_);
    p.max = at(maxCol_);
    if (repCol_ >= 0) p.iterations = parseCount(tok[static_cast<size_t>(repCol_)]);
    if (!cur_.add(p, no, line, ctx_)) return;
    if (auto defects = at(defectsCol_); defects && *defects != 0)
      cur_.warn(bytes, fmt::format("IMB reported {} defects (data check failed)", *defects), no,
                ctx_);
  }

  std::vector<Series> finish() override {
    finish1();
    return std::move(out_);
  }

 private:
  void finish1() {
    if (open_) out_.push_back(std::move(cur_.series));
    cur_ = SeriesBuilder{};
    open_ = false;
    columns_.clear();
    valueCol_ = minCol_ = maxCol_ = repCol_ = defectsCol_ = -1;
    scale_ = 1.0;
  }

  // A banner or preamble: the tool and version of the tables that follow.
  void banner(Source source, std::string_view text, std::string_view word) {
    finish1();
    source_ = source;
    version_.clear();
    // "...Benchmarks 2021.11, MPI-1 part" / "rdmabench 0.1.0, IMB-MPI1 layout (no MPI)".
    size_t at = lower(text).find(lower(word));
    if (at != std::string::npos) {
      std::string rest = trim(text.substr(at + word.size()));
      size_t comma = rest.find(',');
      version_ = escapeForLog(trim(rest.substr(0, comma)), 40);
    }
  }

  // Mbytes/sec multiplier to MB/s for the current banner's version, and the note that says so
  // (empty for 10^6 B/s versions).
  std::pair<double, std::string> unitFor() const {
    if (source_ != Source::kImb) return {1.0, ""};
    auto major = parseCount(version_.substr(0, version_.find_first_of(". ")));
    if (!major)
      return {1.0, fmt::format("IMB version {}: Mbytes/sec taken as 10^6 B/s (IMB 2017 and "
                               "later); IMB 4.1 and older print 2^20 B/s",
                               version_.empty() ? "not printed (no banner)"
                                                : "`" + version_ + "` not understood")};
    if (*major <= 4)
      return {1.048576, fmt::format("IMB {} prints Mbytes/sec in 2^20 B/s (IMB 4.1 and older); "
                                    "converted to MB/s = 10^6 B/s (x 1.048576)",
                                    version_)};
    return {1.0, ""};
  }

  void start(const std::string& name) {
    finish1();
    open_ = true;
    name_ = name;
    cur_.series.source = source_;
    cur_.series.toolVersion = version_;
    cur_.series.title = name.empty() ? "IMB-MPI1" : "IMB-MPI1 " + name;
    if (source_ == Source::kRdmabench) cur_.series.title += " (rdmabench --format imb)";
  }

  void header(const std::vector<std::string>& tok) {
    if (!open_ || !columns_.empty()) {
      std::optional<int> processes = cur_.series.processes;
      start(open_ ? name_ : std::string());
      cur_.series.processes = processes;
    }
    columns_ = tok;
    Series& s = cur_.series;
    s.sized = tok[0] == "#bytes";
    repCol_ = columnIndex(tok, "#repetitions");
    defectsCol_ = columnIndex(tok, "defects");
    std::string lname = lower(name_);
    if (int avg = columnIndex(tok, "t_avg[usec]"); avg >= 0) {
      valueCol_ = avg;
      minCol_ = columnIndex(tok, "t_min[usec]");
      maxCol_ = columnIndex(tok, "t_max[usec]");
      s.column = "t_avg[usec]";
      s.metric = Metric::kCollective;
      s.test = lname.empty() ? "collective" : lname;
    } else if (int t = columnIndex(tok, "t[usec]"); t >= 0) {
      valueCol_ = t;
      s.column = "t[usec]";
      s.metric = Metric::kLatency;
      s.test = (lname.empty() || lname == "pingpong") ? "latency" : lname;
    } else if (int bw = columnIndex(tok, "Mbytes/sec"); bw >= 0) {
      valueCol_ = bw;
      s.column = "Mbytes/sec";
      s.metric = Metric::kBandwidth;
      auto [scale, note] = unitFor();
      scale_ = scale;
      s.note = note;
      s.test = lname == "biband"                       ? "bibw"
               : (lname.empty() || lname == "uniband") ? "bandwidth"
                                                       : lname;
    }
    if (!s.sized && s.test == "collective") s.test = "barrier";
  }

  ReadContext& ctx_;
  std::vector<Series> out_;
  SeriesBuilder cur_;
  std::string name_;  // IMB benchmark name
  std::vector<std::string> columns_;
  bool open_ = false;
  Source source_ = Source::kImb;  // from the last banner/preamble (IMB when none)
  std::string version_;           // its version ("" when none)
  double scale_ = 1.0;            // Mbytes/sec -> MB/s for the current table
  int valueCol_ = -1, minCol_ = -1, maxCol_ = -1, repCol_ = -1, defectsCol_ = -1;
};

}  // namespace

std::unique_ptr<TableReader> makeImbReader(ReadContext& ctx) {
  return std::make_unique<ImbReader>(ctx);
}

}  // namespace rdmabench::compare::detail
