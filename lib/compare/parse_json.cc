// rdmabench JSON, read as a stream (parseUntrustedJsonStream: depth-limited, rows handled as
// they complete and then dropped, so memory follows the rows kept, not the file):
//  - one run (`lat`, `bw`, `allreduce`, `barrier`, `ring`, ... --format json):
//      {"tool","version","run":{"test",...},"rows":[...][,"error"]}
//  - an A/B run (`lat --compare ...`, `--provider A --provider B`, --format json):
//      {"tool","comparison","baseline","variants":[{"label","run","rows"[,"error"]}],"by_size"}
//    one series per variant.
// Row values (docs/metrics.md §3): latency: latency_us.mean (min, max); bandwidth: mb_per_s;
// collectives: collective.t_avg_us (t_min_us, t_max_us; `wrong` > 0 is a warning), older
// latency_us / time_us / t_us objects with mean|avg|t_avg, or flat t_avg_us / t_avg / avg_us /
// mean_us; ring: one row per directed link, aggregated per size (mean of the links' mean_us,
// min/max = fastest/slowest link; outlier links are warnings). Fields are read with the typed
// readers of common/json_read.h: a malformed row is counted as skipped (with the reason), a
// value written as null is a failure of that size, never a number.

#include <fmt/format.h>

#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/error.h"
#include "common/json_read.h"
#include "compare/read_detail.h"
#include "compare/text_util.h"

namespace rdmabench::compare::detail {

namespace {

using nlohmann::json;

constexpr uint64_t kMaxBytes = uint64_t{1} << 62;

const std::set<std::string> kCollectives = {"allreduce", "allgather",     "alltoall", "barrier",
                                            "bcast",     "broadcast",     "gather",   "reduce",
                                            "scatter",   "reduce_scatter"};

// A row value that is present but null (rdmabench writes NaN as null).
struct NullValue {
  std::string field;
};

// The first of `keys` present in `obj` as a number; nullopt when none is present; NullValue
// thrown when the first present one is null.
std::optional<double> number(const json& obj, std::initializer_list<const char*> keys,
                             const std::string& what) {
  if (!obj.is_object()) return std::nullopt;
  for (const char* k : keys) {
    auto it = obj.find(k);
    if (it == obj.end()) continue;
    if (it->is_null()) throw NullValue{k};
    return jsonDouble(obj, k, what, 0);
  }
  return std::nullopt;
}

struct RingSize {
  double sum = 0, min = 0, max = 0;
  uint64_t links = 0;
  std::string slowest;
  std::vector<std::string> outliers;
};

// One series being read (the document's, or one A/B variant's).
class SeriesState {
 public:
  explicit SeriesState(ReadContext& ctx) : ctx_(ctx) { b_.series.source = Source::kRdmabench; }

  void run(const json& run, const std::string& what) {
    std::string test = lower(jsonString(run, "test", what, "", 64));
    bool bidir = jsonBool(run, "bidirectional", what, false);
    test_ = test;
    Series& s = b_.series;
    if (test == "lat" || test == "latency") {
      set("latency", Metric::kLatency);
    } else if (test == "bw" || test == "bandwidth" || test == "bibw") {
      set((bidir || test == "bibw") ? "bibw" : "bandwidth", Metric::kBandwidth);
    } else if (test == "ring") {
      set("ring", Metric::kLatency);
      ring_ = true;
    } else if (kCollectives.count(test)) {
      set(test == "broadcast" ? "bcast" : test, Metric::kCollective);
      s.sized = test != "barrier";
    }
    bidir_ = bidir;
    std::string how = jsonString(run, "transport", what, "", 256);
    if (std::string op = jsonString(run, "op", what, "", 256); !op.empty()) how += " " + op;
    s.transport = escapeForLog(how, 80);
    s.toolVersion = escapeForLog(jsonString(run, "tool_version", what, "", 64), 40);
    std::string local = jsonString(run, "local_host", what, "", 256);
    std::string remote = jsonString(run, "remote_host", what, "", 256);
    if (!local.empty() || !remote.empty())
      s.host =
          escapeForLog(remote.empty() || remote == local ? local : local + " -> " + remote, 120);
    if (const json* extra = jsonObject(run, "extra", what)) {
      if (extra->contains("ranks") && (*extra)["ranks"].is_number_unsigned())
        s.processes =
            static_cast<int>(std::min<uint64_t>((*extra)["ranks"].get<uint64_t>(), 1u << 30));
      if (extra->contains("mode") && (*extra)["mode"].is_string() &&
          (*extra)["mode"].get<std::string>() == "stream")
        s.definition = "stream";
    }
    s.title = escapeForLog(fmt::format("rdmabench {} {}", test.empty() ? "run" : test, how), 120);
    while (!s.title.empty() && s.title.back() == ' ')
      s.title.pop_back();
    if (jsonBool(run, "round_trip", what, false)) s.definition = "round trip";
  }

  void row(const json& row, uint64_t index, const std::string& what) {
    try {
      row1(row, index, what);
    } catch (const ProtocolError& e) {
      ctx_.skipped(index, row.dump(-1, ' ', false, json::error_handler_t::replace),
                   fmt::format("not understood ({})", e.what()));
    } catch (const NullValue& n) {
      uint64_t bytes = 0;
      if (row.is_object() && jsonFind(row, "bytes", what) && row["bytes"].is_number_unsigned())
        bytes = std::min<uint64_t>(row["bytes"].get<uint64_t>(), kMaxBytes);
      b_.fail(bytes, fmt::format("rdmabench wrote null for {} (no measurement)", n.field), 0, "",
              ctx_);
    }
  }

  void note(const std::string& n) { b_.series.note += (b_.series.note.empty() ? "" : "; ") + n; }

  // The finished series (empty when no row was read).
  Series finish() {
    if (ring_) finishRing();
    Series s = std::move(b_.series);
    if (!decided_) s.test = test_.empty() ? "latency" : test_;
    s.column = s.metric == Metric::kBandwidth    ? "mb_per_s"
               : ring_                           ? "link mean_us (mean over links)"
               : s.metric == Metric::kCollective ? "t_avg_us"
                                                 : "latency_us.mean";
    return s;
  }

 private:
  void set(const std::string& test, Metric metric) {
    b_.series.test = test;
    b_.series.metric = metric;
    decided_ = true;
  }

  void row1(const json& row, uint64_t index, const std::string& what) {
    if (!row.is_object()) {
      ctx_.skipped(index, row.dump(-1, ' ', false, json::error_handler_t::replace),
                   "not understood (a row that is not an object)");
      return;
    }
    Point p;
    p.bytes = jsonUint(row, "bytes", what, 0, 0, kMaxBytes);
    if (row.contains("iterations")) p.iterations = jsonUint(row, "iterations", what, 0);
    const json* coll = jsonObject(row, "collective", what);
    const json* link = jsonObject(row, "link", what);
    const json* lat = jsonObject(row, "latency_us", what);
    if (!decided_) {
      // Unknown test name: classify from the first row.
      if (link) {
        set(test_.empty() ? "ring" : test_, Metric::kLatency);
        ring_ = true;
      } else if (coll) {
        set(test_, Metric::kCollective);
      } else if (lat) {
        set(test_.empty() ? "latency" : test_, Metric::kLatency);
      } else if (row.contains("mb_per_s")) {
        set(bidir_ ? "bibw" : "bandwidth", Metric::kBandwidth);
      } else {
        set(test_.empty() ? "collective" : test_, Metric::kCollective);
      }
      if (b_.series.test.empty()) b_.series.test = "collective";
    }
    std::optional<double> v;
    if (ring_) {
      if (!link) throw ProtocolError(fmt::format("{}: no \"link\" object in a ring row", what));
      ringRow(*link, p.bytes, what);
      return;
    }
    if (b_.series.metric == Metric::kBandwidth) {
      v = number(row, {"mb_per_s"}, what);
    } else if (b_.series.metric == Metric::kLatency && lat) {
      v = number(*lat, {"mean"}, what);
      p.min = number(*lat, {"min"}, what);
      p.max = number(*lat, {"max"}, what);
    } else if (coll) {
      // The algorithm names the series (tree vs sharp runs of one test look alike otherwise);
      // `auto` may pick a different one per size, so only the first row's is named.
      if (!algorithmNamed_) {
        algorithmNamed_ = true;
        std::string algo = jsonString(*coll, "algorithm", what, "", 64);
        if (!algo.empty()) b_.series.title += escapeForLog(" (" + algo + ")", 80);
      }
      v = number(*coll, {"t_avg_us"}, what);
      p.min = number(*coll, {"t_min_us"}, what);
      p.max = number(*coll, {"t_max_us"}, what);
    } else {
      for (const char* key : {"latency_us", "time_us", "t_us", "collective_us"}) {
        const json* o = jsonObject(row, key, what);
        if (!o) continue;
        v = number(*o, {"mean", "avg", "t_avg", "average"}, what);
        if (!v) continue;
        p.min = number(*o, {"min", "t_min"}, what);
        p.max = number(*o, {"max", "t_max"}, what);
        break;
      }
      if (!v) {
        v = number(row, {"t_avg_us", "t_avg", "avg_us", "mean_us"}, what);
        p.min = number(row, {"t_min_us", "t_min", "min_us"}, what);
        p.max = number(row, {"t_max_us", "t_max", "max_us"}, what);
      }
    }
    if (!v) throw ProtocolError(fmt::format("{}: no {} value", what, metricName(b_.series.metric)));
    p.value = *v;
    if (!b_.add(p, index, "", ctx_)) return;
    if (coll && !b_.series.processes && coll->contains("ranks") &&
        (*coll)["ranks"].is_number_unsigned())
      b_.series.processes =
          static_cast<int>(std::min<uint64_t>((*coll)["ranks"].get<uint64_t>(), 1u << 30));
    if (coll) {
      if (uint64_t wrong = jsonUint(*coll, "wrong", what, 0))
        b_.warn(p.bytes, fmt::format("{} wrong element(s) in the results (--check)", wrong), 0,
                ctx_);
    }
  }

  void ringRow(const json& link, uint64_t bytes, const std::string& what) {
    auto mean = number(link, {"mean_us"}, what);
    if (!mean) throw ProtocolError(fmt::format("{}: no link mean_us", what));
    std::string name = escapeForLog(fmt::format("{}->{}", jsonInt(link, "src_rank", what, -1),
                                                jsonInt(link, "dst_rank", what, -1)),
                                    40);
    RingSize& r = ring_sizes_[bytes];
    if (r.links == 0 || *mean < r.min) r.min = *mean;
    if (r.links == 0 || *mean > r.max) {
      r.max = *mean;
      r.slowest = name;
    }
    r.sum += *mean;
    ++r.links;
    if (jsonBool(link, "outlier", what, false) && r.outliers.size() < 16)
      r.outliers.push_back(name);
  }

  void finishRing() {
    for (const auto& [bytes, r] : ring_sizes_) {
      Point p;
      p.bytes = bytes;
      p.value = r.sum / static_cast<double>(r.links);
      p.min = r.min;
      p.max = r.max;
      b_.add(p, 0, "", ctx_);
      for (const std::string& o : r.outliers)
        b_.warn(bytes, fmt::format("ring link {} flagged as an outlier", o), 0, ctx_);
    }
    if (!ring_sizes_.empty())
      note(fmt::format(
          "ring: value = mean over {} directed links of each link's mean one-way latency; min/max "
          "= fastest/slowest link (slowest: {})",
          ring_sizes_.begin()->second.links, ring_sizes_.begin()->second.slowest));
  }

  ReadContext& ctx_;
  SeriesBuilder b_;
  std::string test_;
  bool decided_ = false, ring_ = false, bidir_ = false, algorithmNamed_ = false;
  std::map<uint64_t, RingSize> ring_sizes_;
};

// What the top level of an rdmabench JSON document said.
struct TopLevel {
  bool rows = false, variants = false, compareOutput = false;
  std::string runTest;  // run.test, when the run header names one
};

// One complete value at depth 1 (run, error, command, rows, variants) into `top` and `seen`.
void topLevel(const JsonStreamValue& v, SeriesState& top, const std::string& path, TopLevel& seen) {
  const std::string& k0 = v.path[0];
  if (k0 == "run" && v.value.is_object()) {
    if (auto t = v.value.find("test"); t != v.value.end() && t->is_string())
      seen.runTest = escapeForLog(t->get<std::string>(), 32);
    top.run(v.value, path + " \"run\"");
  } else if (k0 == "error" && v.value.is_string()) {
    top.note("run ended with error: " + escapeForLog(v.value.get<std::string>(), 200));
  } else if (k0 == "command" && v.value.is_string() && v.value.get<std::string>() == "compare") {
    seen.compareOutput = true;
  } else if (k0 == "rows" && v.value.is_array()) {
    seen.rows = true;
  } else if (k0 == "variants" && v.value.is_array()) {
    seen.variants = true;
  }
}

// A JSON input without result rows: compare's own output, another command's results
// (`runTest`: pairs, congestion, noise) or not rdmabench's. UsageError saying which.
void refuseWithoutRows(const std::string& path, bool compareOutput, bool hasRows,
                       const std::string& runTest) {
  if (compareOutput)
    throw UsageError(fmt::format(
        "{}: this is `rdmabench compare` output, not results; compare its inputs instead", path));
  if (hasRows) return;
  if (!runTest.empty())
    throw UsageError(
        fmt::format("{}: {} JSON is not comparable: compare takes lat, bw and collective (barrier, "
                    "allreduce, ring) results",
                    path, runTest));
  throw UsageError(fmt::format(
      "{}: JSON without a \"rows\" (or A/B \"variants\") array: not `rdmabench --format json` "
      "output",
      path));
}

}  // namespace

std::vector<Series> readRdmabenchJson(std::istream& in, ReadContext& ctx) {
  const std::string& path = ctx.path();
  std::vector<Series> out;
  SeriesState top(ctx);
  std::unique_ptr<SeriesState> variant;
  std::string variantLabel;
  TopLevel seen;
  uint64_t rowIndex = 0;
  // Depths (enclosing containers): run, rows, variants = 1; a row, a variant = 2; a variant's
  // run/label = 3; a variant's row = 4. Values inside a run or a row are kept until it completes;
  // everything else is dropped as soon as it is read.
  auto onValue = [&](const JsonStreamValue& v) -> bool {
    const auto& p = v.path;
    if (p.empty()) return false;
    const std::string& k0 = p[0];
    if (v.depth == 1) {
      topLevel(v, top, path, seen);
      return false;
    }
    if (k0 == "run") return true;
    if (k0 == "rows") {
      if (v.depth == 2 && v.arrayElement) {
        ++rowIndex;
        top.row(v.value, rowIndex, fmt::format("{} row {}", path, rowIndex));
        return false;
      }
      return true;
    }
    if (k0 != "variants") return false;  // by_size, notes, ...
    if (v.depth == 2) {
      // One A/B variant complete (its rows were read as they came).
      if (!variant) variant = std::make_unique<SeriesState>(ctx);
      Series s = variant->finish();
      if (!variantLabel.empty()) {
        s.title += " [" + variantLabel + "]";
        s.variant = variantLabel;
      }
      out.push_back(std::move(s));
      variant.reset();
      variantLabel.clear();
      return false;
    }
    if (!variant) variant = std::make_unique<SeriesState>(ctx);
    const std::string k1 = p.size() >= 2 ? p[1] : std::string();
    if (v.depth == 3) {
      if (k1 == "run" && v.value.is_object())
        variant->run(v.value, path + " variant \"run\"");
      else if (k1 == "label" && v.value.is_string())
        variantLabel = escapeForLog(v.value.get<std::string>(), 80);
      else if (k1 == "error" && v.value.is_string())
        variant->note("run ended with error: " + escapeForLog(v.value.get<std::string>(), 200));
      return false;
    }
    if (v.depth == 4 && k1 == "rows" && v.arrayElement && p.size() == 2) {
      ++rowIndex;
      variant->row(v.value, rowIndex, fmt::format("{} variant row {}", path, rowIndex));
      return false;
    }
    return k1 == "run" || k1 == "rows";
  };
  try {
    parseUntrustedJsonStream(in, path, onValue, kJsonMaxDepth, ctx.options().maxBytes);
  } catch (const ProtocolError& e) {
    throw UsageError(e.what());
  }
  refuseWithoutRows(path, seen.compareOutput, seen.rows || seen.variants, seen.runTest);
  if (seen.rows) out.insert(out.begin(), top.finish());
  return out;
}

}  // namespace rdmabench::compare::detail
