// OSU Micro-Benchmarks text (5.x-7.x). A table is an optional title ("# OSU MPI Latency Test
// v7.5"), optional comment lines ("# Datatype: MPI_CHAR.", "# [ pairs: 1 ] ..."), a header
// ("# Size  Avg Latency(us) [Min Latency(us) Max Latency(us) Iterations] [P50 Tail Lat(us) ..]
// [Validation]", or "# Avg Latency(us) ..." for osu_barrier, which has no size column), then one
// row per size. Header fields are separated by two or more spaces; rows by whitespace. Each
// title (or a header after rows) starts a new table, so concatenated logs give several series.
// Titles containing "MPI-free" or "rdmabench" were written by `rdmabench --format osu` and are
// not MPI results.

#include <set>

#include "compare/parse.h"
#include "compare/text_util.h"

namespace rdmabench::compare {

using namespace detail;

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

struct Table {
  Series series;
  bool headerSeen = false;
  int valueCol = -1, minCol = -1, maxCol = -1, iterCol = -1;
};

}  // namespace

std::vector<Series> parseOsu(std::string_view text, const std::string& path) {
  std::vector<Series> out;
  Table cur;
  bool open = false;
  auto finish = [&] {
    if (open) out.push_back(std::move(cur.series));
    cur = Table{};
    open = false;
  };
  for (const std::string& raw : splitLines(text)) {
    std::string line = trim(raw);
    if (line.empty()) continue;
    if (line.rfind("# OSU", 0) == 0) {
      finish();
      open = true;
      cur.series.path = path;
      cur.series.title = trim(line.substr(1));
      cur.series.source = (containsNoCase(line, "MPI-free") || containsNoCase(line, "rdmabench"))
                              ? Source::kRdmabench
                              : Source::kOsu;
      classifyTitle(cur.series.title, cur.series);
      continue;
    }
    if (line[0] == '#') {
      std::vector<std::string> fields = splitColumns(trim(line.substr(1)));
      if (fields.empty()) continue;
      bool sized = fields[0] == "Size";
      bool sizeless = containsNoCase(fields[0], "Latency");  // osu_barrier: "# Avg Latency(us)"
      if (!sized && !sizeless) continue;                     // "# Datatype: ...", "# [ pairs ..."
      if (!open || cur.headerSeen) {
        // A header without a title (pasted table) or a second table: classify from the header.
        finish();
        open = true;
        cur.series.path = path;
        cur.series.source = Source::kOsu;
        bool bw = line.find("MB/s") != line.npos || containsNoCase(line, "Bandwidth");
        cur.series.test = bw ? "bandwidth" : (sized ? "latency" : "barrier");
        cur.series.metric =
            bw ? Metric::kBandwidth : (sized ? Metric::kLatency : Metric::kCollective);
      }
      cur.series.sized = sized;
      cur.headerSeen = true;
      for (size_t i = 0; i < fields.size(); ++i) {
        const std::string f = lower(fields[i]);
        int col = static_cast<int>(i);
        if (cur.valueCol < 0 && (f.find("avg latency") == 0 || f.find("latency") == 0 ||
                                 f.find("bandwidth") == 0 || f == "mb/s")) {
          cur.valueCol = col;
          cur.series.column = fields[i];
        } else if (f.find("min latency") == 0) {
          cur.minCol = col;
        } else if (f.find("max latency") == 0) {
          cur.maxCol = col;
        } else if (f == "iterations") {
          cur.iterCol = col;
        }
      }
      if (cur.valueCol < 0 && fields.size() > (sized ? 1u : 0u)) {
        cur.valueCol = sized ? 1 : 0;
        cur.series.column = fields[static_cast<size_t>(cur.valueCol)];
      }
      continue;
    }
    if (!open || !cur.headerSeen || cur.valueCol < 0) continue;
    std::vector<std::string> tok = splitWhitespace(line);
    auto at = [&](int col) -> std::optional<double> {
      if (col < 0 || static_cast<size_t>(col) >= tok.size()) return std::nullopt;
      return parseNumber(tok[static_cast<size_t>(col)]);
    };
    Point p;
    if (cur.series.sized) {
      auto bytes = parseCount(tok[0]);
      if (!bytes) continue;  // a warning or other text between rows
      p.bytes = *bytes;
    }
    auto value = at(cur.valueCol);
    if (!value) continue;
    p.value = *value;
    p.min = at(cur.minCol);
    p.max = at(cur.maxCol);
    if (auto it = at(cur.iterCol); it && *it >= 0) p.iterations = static_cast<uint64_t>(*it);
    cur.series.points.push_back(p);
  }
  finish();
  return out;
}

}  // namespace rdmabench::compare
