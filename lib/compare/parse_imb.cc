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

#include "compare/parse.h"
#include "compare/text_util.h"

namespace rdmabench::compare {

using namespace detail;

namespace {

struct Table {
  Series series;
  std::string name;  // IMB benchmark name
  std::vector<std::string> columns;
};

int columnIndex(const std::vector<std::string>& columns, const char* name) {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

std::vector<Series> parseImb(std::string_view text, const std::string& path) {
  std::vector<Series> out;
  Table cur;
  bool open = false;
  bool rdmabench = false;  // preamble written by rdmabench --format imb
  int valueCol = -1, minCol = -1, maxCol = -1, repCol = -1;
  auto finish = [&] {
    if (open) out.push_back(std::move(cur.series));
    cur = Table{};
    open = false;
    valueCol = minCol = maxCol = repCol = -1;
  };
  auto start = [&](const std::string& name) {
    finish();
    open = true;
    cur.name = name;
    cur.series.path = path;
    cur.series.source = rdmabench ? Source::kRdmabench : Source::kImb;
    cur.series.title = name.empty() ? "IMB-MPI1" : "IMB-MPI1 " + name;
  };
  for (const std::string& raw : splitLines(text)) {
    std::string line = trim(raw);
    if (line.empty()) continue;
    std::vector<std::string> tok = splitWhitespace(line);
    if (line.rfind("# Benchmarking ", 0) == 0) {
      start(trim(line.substr(15)));
      continue;
    }
    if (line[0] == '#' && tok[0] != "#bytes" && tok[0] != "#repetitions") {
      // rdmabench's preamble: "#    rdmabench 0.1.0, IMB-MPI1 layout (no MPI)".
      if (!open && containsNoCase(line, "rdmabench") && containsNoCase(line, "layout (no MPI)"))
        rdmabench = true;
      if (open && line.rfind("# #processes = ", 0) == 0) {
        if (auto n = parseCount(trim(line.substr(15)))) cur.series.processes = static_cast<int>(*n);
      }
      continue;
    }
    if (tok[0] == "#bytes" || tok[0] == "#repetitions") {
      if (!open || !cur.columns.empty()) start(open ? cur.name : std::string());
      cur.columns = tok;
      Series& s = cur.series;
      s.sized = tok[0] == "#bytes";
      repCol = columnIndex(tok, "#repetitions");
      std::string lname = lower(cur.name);
      if (int avg = columnIndex(tok, "t_avg[usec]"); avg >= 0) {
        valueCol = avg;
        minCol = columnIndex(tok, "t_min[usec]");
        maxCol = columnIndex(tok, "t_max[usec]");
        s.column = "t_avg[usec]";
        s.metric = Metric::kCollective;
        s.test = lname.empty() ? "collective" : lname;
      } else if (int t = columnIndex(tok, "t[usec]"); t >= 0) {
        valueCol = t;
        s.column = "t[usec]";
        s.metric = Metric::kLatency;
        s.test = (lname.empty() || lname == "pingpong") ? "latency" : lname;
      } else if (int bw = columnIndex(tok, "Mbytes/sec"); bw >= 0) {
        valueCol = bw;
        s.column = "Mbytes/sec";
        s.metric = Metric::kBandwidth;
        s.test = lname == "biband"                       ? "bibw"
                 : (lname.empty() || lname == "uniband") ? "bandwidth"
                                                         : lname;
      }
      if (!s.sized && s.test == "collective") s.test = "barrier";
      continue;
    }
    if (!open || cur.columns.empty() || valueCol < 0) continue;
    auto at = [&](int col) -> std::optional<double> {
      if (col < 0 || static_cast<size_t>(col) >= tok.size()) return std::nullopt;
      return parseNumber(tok[static_cast<size_t>(col)]);
    };
    Point p;
    if (cur.series.sized) {
      auto bytes = parseCount(tok[0]);
      if (!bytes) continue;
      p.bytes = *bytes;
    }
    auto value = at(valueCol);
    if (!value) continue;
    p.value = *value;
    p.min = at(minCol);
    p.max = at(maxCol);
    if (auto r = at(repCol); r && *r >= 0) p.iterations = static_cast<uint64_t>(*r);
    cur.series.points.push_back(p);
  }
  finish();
  return out;
}

}  // namespace rdmabench::compare
