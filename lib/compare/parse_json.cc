// rdmabench --format json (docs/metrics.md §3): {"tool","version","run":{"test",...},"rows":[...]}.
// Latency rows: latency_us.mean (min, max); bandwidth rows: mb_per_s; collective rows
// (run.test "allreduce", "barrier", ...): the first of latency_us / time_us / t_us objects with
// mean|avg|t_avg (min|t_min, max|t_max), or flat t_avg_us / t_avg / avg_us / mean_us keys with
// their t_min*/t_max* companions. A row without "bytes" (barrier) makes the series size-less.

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "common/error.h"
#include "compare/parse.h"
#include "compare/text_util.h"

namespace rdmabench::compare {

namespace {

using nlohmann::json;

const std::set<std::string> kCollectives = {"allreduce", "allgather",      "alltoall", "barrier",
                                            "bcast",     "broadcast",      "gather",   "reduce",
                                            "scatter",   "reduce_scatter", "ring"};

std::optional<double> number(const json& obj, std::initializer_list<const char*> keys) {
  if (!obj.is_object()) return std::nullopt;
  for (const char* k : keys) {
    auto it = obj.find(k);
    if (it != obj.end() && it->is_number()) return it->get<double>();
  }
  return std::nullopt;
}

// Collective or latency time of one row: {value, min, max}.
bool timeOf(const json& row, Point& p) {
  for (const char* key : {"latency_us", "time_us", "t_us", "collective_us"}) {
    auto it = row.find(key);
    if (it == row.end() || !it->is_object()) continue;
    auto v = number(*it, {"mean", "avg", "t_avg", "average"});
    if (!v) continue;
    p.value = *v;
    p.min = number(*it, {"min", "t_min"});
    p.max = number(*it, {"max", "t_max"});
    return true;
  }
  if (auto v = number(row, {"t_avg_us", "t_avg", "avg_us", "mean_us"})) {
    p.value = *v;
    p.min = number(row, {"t_min_us", "t_min", "min_us"});
    p.max = number(row, {"t_max_us", "t_max", "max_us"});
    return true;
  }
  return false;
}

}  // namespace

std::vector<Series> parseRdmabenchJson(std::string_view text, const std::string& path) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("{}: invalid JSON: {}", path, e.what()));
  }
  if (!doc.is_object() || !doc.contains("rows") || !doc["rows"].is_array())
    throw UsageError(fmt::format(
        "{}: JSON without a \"rows\" array: not `rdmabench --format json` output", path));
  const json run = doc.value("run", json::object());
  Series s;
  s.path = path;
  s.source = Source::kRdmabench;
  std::string test = detail::lower(run.value("test", std::string()));
  const bool bidir = run.value("bidirectional", false);
  if (test == "lat" || test == "latency") {
    s.test = "latency";
    s.metric = Metric::kLatency;
  } else if (test == "bw" || test == "bandwidth" || test == "bibw") {
    s.test = (bidir || test == "bibw") ? "bibw" : "bandwidth";
    s.metric = Metric::kBandwidth;
  } else if (kCollectives.count(test)) {
    s.test = test == "broadcast" ? "bcast" : test;
    s.metric = Metric::kCollective;
  } else {
    // Unknown test name: classify from the first row.
    const json first = doc["rows"].empty() ? json::object() : doc["rows"][0];
    if (first.contains("mb_per_s")) {
      s.test = bidir ? "bibw" : "bandwidth";
      s.metric = Metric::kBandwidth;
    } else {
      s.test = test.empty() ? "latency" : test;
      s.metric = first.contains("latency_us") ? Metric::kLatency : Metric::kCollective;
    }
  }
  std::string how = run.value("transport", std::string());
  if (std::string op = run.value("op", std::string()); !op.empty()) how += " " + op;
  s.title = fmt::format("rdmabench {} {}", test.empty() ? s.test : test, how);
  while (!s.title.empty() && s.title.back() == ' ')
    s.title.pop_back();
  s.column = s.metric == Metric::kBandwidth ? "mb_per_s" : "mean (us)";
  if (run.value("round_trip", false)) s.note = "latency is the full round trip";
  if (doc.contains("error") && doc["error"].is_string())
    s.note +=
        (s.note.empty() ? "" : "; ") + ("run ended with error: " + doc["error"].get<std::string>());
  bool anyBytes = false;
  for (const json& row : doc["rows"]) {
    if (!row.is_object()) continue;
    Point p;
    if (auto it = row.find("bytes"); it != row.end() && it->is_number_unsigned()) {
      p.bytes = it->get<uint64_t>();
      anyBytes = true;
    }
    if (s.metric == Metric::kBandwidth) {
      auto v = number(row, {"mb_per_s"});
      if (!v) continue;
      p.value = *v;
    } else if (!timeOf(row, p)) {
      continue;
    }
    if (auto it = row.find("iterations"); it != row.end() && it->is_number_unsigned())
      p.iterations = it->get<uint64_t>();
    s.points.push_back(p);
  }
  s.sized = anyBytes && s.test != "barrier";
  return {std::move(s)};
}

}  // namespace rdmabench::compare
