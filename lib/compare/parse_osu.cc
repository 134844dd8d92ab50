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

#include "common/error.h"
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
      header(line, no);
      return;
    }
    std::vector<std::string> tok = splitWhitespace(line);
    if (graphLine(line, tok)) {
      inGraph_ = true;
      ctx_.ignored(no, line, "a graph (OSU -G tty), not a row");
      return;
    }
    inGraph_ = false;
    if (!open_ || !headerSeen_ || valueCol_ < 0) {
      ctx_.skipped(no, line,
                   open_ ? "not understood (before the column header)"
                         : "not understood (outside an OSU table)");
      return;
    }
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

  void header(std::string_view line, uint64_t no) {
    std::vector<std::string> fields = splitColumns(trim(line.substr(1)));
    if (fields.empty()) return;
    bool sized = fields[0] == "Size";
    bool sizeless = containsNoCase(fields[0], "Latency");  // osu_barrier: "# Avg Latency(us)"
    if (!sized && !sizeless) return;                       // "# Datatype: ...", "# [ pairs ..."
    const bool bw = line.find("MB/s") != line.npos || containsNoCase(line, "Bandwidth");
    if (!open_ || headerSeen_) {
      // A header without a title (pasted table) or a second table: classified from the header,
      // a guess that the notes name.
      finish1();
      open_ = true;
      guessFromHeader(line, no, bw, sized);
    } else if (bw != (cur_.series.metric == Metric::kBandwidth)) {
      throw UsageError(fmt::format(
          "{}: the OSU title `{}` is a {} test but its column header `{}` is {}: a table under "
          "another test's title? fix the title line (or cut the table out) and retry",
          ctx_.where(no), escapeForLog(cur_.series.title, 80), metricName(cur_.series.metric),
          escapeForLog(trim(line.substr(1)), 80), bw ? "bandwidth (MB/s)" : "latency (us)"));
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

  // A line of the text graphs `-G tty` draws after the rows (gnuplot's dumb terminal): a frame
  // or plot line ("|", "+---"), the x axis's numbers (more columns than the header), or, inside
  // a graph, anything that is not a row of the table (axis labels, the graph's title).
  bool graphLine(std::string_view line, const std::vector<std::string>& tok) const {
    if (line.find('|') != line.npos || line.find("+-") != line.npos || line.find("-+") != line.npos)
      return true;
    bool numbers = !tok.empty();
    for (const std::string& t : tok)
      numbers = numbers && parseNumber(t).has_value();
    if (numbers && headerFields_ > 0 && tok.size() > headerFields_) return true;
    return inGraph_ && !(tok.size() == headerFields_ && parseNumber(tok[0]));
  }

  // The test of a table without an OSU title, from its header alone; Series::note names the
  // guess (several OSU tests print the same header).
  void guessFromHeader(std::string_view line, uint64_t no, bool bw, bool sized) {
    Series& s = cur_.series;
    s.source = Source::kOsu;
    s.test = bw ? "bandwidth" : (sized ? "latency" : "barrier");
    s.metric = bw ? Metric::kBandwidth : (sized ? Metric::kLatency : Metric::kCollective);
    const std::string header = escapeForLog(trim(line.substr(1)), 60);
    const char* why = bw       ? "osu_bibw prints the same header; taken as osu_bw"
                      : !sized ? "taken as osu_barrier, the size-less collective"
                      : containsNoCase(line, "Avg Latency")
                          ? "osu_allreduce and the other collectives print the same header; "
                            "taken as osu_latency (point-to-point)"
                          : "taken as osu_latency";
    s.note = fmt::format(
        "no OSU title above the header `{}` (line {}): a guess: {}; keep the "
        "`# OSU ...` title line in the log to be sure",
        header, no, why);
  }

  ReadContext& ctx_;
  std::vector<Series> out_;
  SeriesBuilder cur_;
  bool open_ = false, headerSeen_ = false;
  bool inGraph_ = false;  // the last line was part of a -G tty graph
  size_t headerFields_ = 0;
  int valueCol_ = -1, minCol_ = -1, maxCol_ = -1, iterCol_ = -1, validCol_ = -1;
};

}  // namespace

std::unique_ptr<TableReader> makeOsuReader(ReadContext& ctx) {
  return std::make_unique<OsuReader>(ctx);
}

}  // namespace rdmabench::compare::detail
