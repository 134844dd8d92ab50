// OSU Micro-Benchmarks text (5.x-7.x). A table is an optional title ("# OSU MPI Latency Test
// v7.5"), optional comment lines ("# Datatype: MPI_CHAR.", "# [ pairs: 1 ] ..."), a header
// ("# Size  Avg Latency(us) [Min Latency(us) Max Latency(us) Iterations] [P50 Tail Lat(us) ..]
// [Validation]", or "# Avg Latency(us) ..." for osu_barrier, which has no size column), then one
// row per size. Header fields are separated by two or more spaces; rows by whitespace. Each
// title (or a header after rows) starts a new table, so concatenated logs give several series.
// Titles containing "MPI-free" or "rdmabench" were written by `rdmabench --format osu` and are
// not MPI results.

// Rows whose value is not a number (OSU prints "-nan" and "inf") are failures, never values;
// a Validation column (-c) other than "Pass" is a warning on the row; lines that are neither
// comments nor rows are counted as skipped.

#include <fmt/format.h>

#include <cctype>
#include <set>

#include "common/json_read.h"
#include "compare/read_detail.h"
#include "compare/text_util.h"

namespace rdmabench::compare::detail {

namespace {

const std::set<std::string> kCollectives = {
    "allreduce", "allgather", "allgatherv", "alltoall",       "alltoallv",
    "alltoallw", "barrier",   "bcast",      "gather",         "gatherv",
    "reduce",    "scatter",   "scatterv",   "reduce_scatter", "reduce_scatter_block",
    "scan",      "exscan"};

// Test kind and metric from an OSU title (without the leading "# ").
void classifyTitle(const std::string& title, Series& s) {
  std::string t = lower(title);
  if (t.find("bi-directional bandwidth") != t.npos) {
    s.test = "bibw";
    s.metric = Metric::kBandwidth;
  } else if (t.find("multiple bandwidth") != t.npos || t.find("message rate") != t.npos) {
    s.test = "mbw_mr";
    s.metric = Metric::kBandwidth;
  } else if (t.find("bandwidth") != t.npos) {
    s.test = "bandwidth";
    s.metric = Metric::kBandwidth;
  } else if (t.find("multi latency") != t.npos || t.find("multi-latency") != t.npos) {
    s.test = "multi_lat";
    s.metric = Metric::kLatency;
  } else {
    // "... <Word> Latency Test": the word names a collective or one-sided test; for the plain
    // latency test it is "MPI" / "MPI-free" / "MPI-CUDA".
    std::vector<std::string> words = splitWhitespace(t);
    std::string word;
    for (size_t i = 1; i < words.size(); ++i)
      if (words[i] == "latency") {
        word = words[i - 1];
        break;
      }
    if (kCollectives.count(word)) {
      s.test = (t.find("non-blocking") != t.npos ? "i" : "") + word;
      s.metric = Metric::kCollective;
      s.sized = word != "barrier";
    } else if (word.empty() || word.rfind("mpi", 0) == 0) {
      s.test = "latency";
      s.metric = Metric::kLatency;
    } else {
      s.test = word;  // "get", "put", "acc", ...
      s.metric = Metric::kLatency;
    }
  }
}

// Why a value token is not a number, for the failure text.
std::string notNumber(std::string_view tool, std::string_view token) {
  return fmt::format("{} printed `{}`, not a number", tool, escapeForLog(token, 40));
}

class OsuReader : public TableReader {
 public:
  explicit OsuReader(ReadContext& ctx) : ctx_(ctx) {}

  void line(std::string_view line, uint64_t no) override {
    if (line.empty()) return;
    if (line.starts_with("# OSU")) {
      finish1();
      open_ = true;
      cur_.series.title = trim(line.substr(1));
      cur_.series.source = (containsNoCase(line, "MPI-free") || containsNoCase(line, "rdmabench"))
                               ? Source::kRdmabench
                               : Source::kOsu;
      classifyTitle(cur_.series.title, cur_.series);
      // "# OSU MPI Latency Test v5.3.2" -> "5.3.2".
      if (size_t v = cur_.series.title.rfind(" v");
          v != std::string::npos && v + 2 < cur_.series.title.size() &&
          std::isdigit(static_cast<unsigned char>(cur_.series.title[v + 2])))
        cur_.series.toolVersion = escapeForLog(cur_.series.title.substr(v + 2), 20);
      return;
    }
    if (line[0] == '#') {
      header(line);
      return;
    }
    if (!open_ || !headerSeen_ || valueCol_ < 0) {
      ctx_.skipped(no, line,
                   open_ ? "not understood (before the column header)"
                         : "not understood (outside an OSU table)");
      return;
    }
    std::vector<std::string> tok = splitWhitespace(line);
    if (tok.size() < headerFields_ && parseNumber(tok[0])) {
      ctx_.truncated(no, line,
                     fmt::format("{} of the {} columns of its header", tok.size(), headerFields_));
      return;
    }
    Point p;
    if (cur_.series.sized) {
      auto bytes = parseCount(tok[0]);
      if (!bytes) {
        ctx_.skipped(no, line, "not understood (no message size)");
        return;
      }
      p.bytes = *bytes;
    }
    const size_t vc = static_cast<size_t>(valueCol_);
    if (vc >= tok.size()) {
      ctx_.skipped(no, line, "not understood (no value column)");
      return;
    }
    auto value = parseNumber(tok[vc]);
    if (!value) {
      cur_.fail(p.bytes, notNumber("OSU", tok[vc]), no, line, ctx_);
      return;
    }
    p.value = *value;
    auto at = [&](int col) -> std::optional<double> {
      if (col < 0 || static_cast<size_t>(col) >= tok.size()) return std::nullopt;
      return parseNumber(tok[static_cast<size_t>(col)]);
    };
    p.min = at(minCol_);
    p.max = at(maxCol_);
    if (iterCol_ >= 0 && static_cast<size_t>(iterCol_) < tok.size())
      p.iterations = parseCount(tok[static_cast<size_t>(iterCol_)]);
    if (!cur_.add(p, no, line, ctx_)) return;
    if (validCol_ >= 0 && static_cast<size_t>(validCol_) < tok.size() &&
        lower(tok[static_cast<size_t>(validCol_)]) != "pass")
      cur_.warn(p.bytes,
                fmt::format("OSU validation (-c) says `{}`",
                            escapeForLog(tok[static_cast<size_t>(validCol_)], 20)),
                no, ctx_);
  }

  std::vector<Series> finish() override {
    finish1();
    return std::move(out_);
  }

 private:
  void finish1() {
    if (open_) out_.push_back(std::move(cur_.series));
    cur_ = SeriesBuilder{};
    open_ = headerSeen_ = false;
    headerFields_ = 0;
    valueCol_ = minCol_ = maxCol_ = iterCol_ = validCol_ = -1;
  }

  void header(std::string_view line) {
    std::vector<std::string> fields = splitColumns(trim(line.substr(1)));
    if (fields.empty()) return;
    bool sized = fields[0] == "Size";
    bool sizeless = containsNoCase(fields[0], "Latency");  // osu_barrier: "# Avg Latency(us)"
    if (!sized && !sizeless) return;                       // "# Datatype: ...", "# [ pairs ..."
    if (!open_ || headerSeen_) {
      // A header without a title (pasted table) or a second table: classify from the header.
      finish1();
      open_ = true;
      cur_.series.source = Source::kOsu;
      bool bw = line.find("MB/s") != line.npos || containsNoCase(line, "Bandwidth");
      cur_.series.test = bw ? "bandwidth" : (sized ? "latency" : "barrier");
      cur_.series.metric =
          bw ? Metric::kBandwidth : (sized ? Metric::kLatency : Metric::kCollective);
    }
    cur_.series.sized = sized;
    headerSeen_ = true;
    headerFields_ = fields.size();
    for (size_t i = 0; i < fields.size(); ++i) {
      const std::string f = lower(fields[i]);
      int col = static_cast<int>(i);
      if (valueCol_ < 0 && (f.find("avg latency") == 0 || f.find("latency") == 0 ||
                            f.find("bandwidth") == 0 || f == "mb/s")) {
        valueCol_ = col;
        cur_.series.column = fields[i];
      } else if (f.find("min latency") == 0) {
        minCol_ = col;
      } else if (f.find("max latency") == 0) {
        maxCol_ = col;
      } else if (f == "iterations") {
        iterCol_ = col;
      } else if (f == "validation") {
        validCol_ = col;
      }
    }
    if (valueCol_ < 0 && fields.size() > (sized ? 1u : 0u)) {
      valueCol_ = sized ? 1 : 0;
      cur_.series.column = fields[static_cast<size_t>(valueCol_)];
    }
  }

  ReadContext& ctx_;
  std::vector<Series> out_;
  SeriesBuilder cur_;
  bool open_ = false, headerSeen_ = false;
  size_t headerFields_ = 0;
  int valueCol_ = -1, minCol_ = -1, maxCol_ = -1, iterCol_ = -1, validCol_ = -1;
};

}  // namespace

std::unique_ptr<TableReader> makeOsuReader(ReadContext& ctx) {
  return std::make_unique<OsuReader>(ctx);
}

}  // namespace rdmabench::compare::detail
