#include "report/format_util.h"

#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/text_escape.h"
#include "common/version.h"
#include "transport/info_json.h"

namespace rdmabench::report::detail {

TestKind testKind(const RunInfo& info) {
  if (!info.test) return TestKind::kLatency;
  switch (*info.test) {
    case Test::kBw:
      return TestKind::kBandwidth;
    case Test::kBarrier:
      return TestKind::kBarrier;
    case Test::kAllreduce:
      return TestKind::kAllreduce;
    case Test::kRing:
      return TestKind::kRing;
    case Test::kLat:
    case Test::kPairs:
    case Test::kCongestion:
      break;
  }
  return TestKind::kLatency;
}

std::string testName(const RunInfo& info) {
  return info.test ? toString(*info.test) : "";
}

std::string toolVersion(const RunInfo& info) {
  return info.toolVersion.empty() ? version::release() : info.toolVersion;
}

std::string gitDescribe(const RunInfo& info) {
  return info.gitDescribe ? *info.gitDescribe : version::gitDescribe();
}

std::string latencyMeaning(const RunInfo& info) {
  return info.roundTrip ? "full round trip (RTT)" : "half round trip (RTT/2)";
}

std::string describeProperties(const nlohmann::json& properties) {
  if (properties.is_null()) return "";
  if (!properties.is_object()) return dumpJson(properties);
  std::string text;
  for (const auto& [key, value] : properties.items()) {
    // Nested objects (caps, connection, protocol knobs) stay in JSON output; a header line
    // keeps only their one-line summary when they have one.
    if (value.is_structured()) {
      if (!value.is_object() || !value.contains("summary") || !value["summary"].is_string())
        continue;
    }
    // The remote side's properties come from the server (untrusted): keys and text escaped.
    if (!text.empty()) text += ' ';
    text += escapeForLog(key, 64);
    text += '=';
    const auto& v = value.is_structured() ? value["summary"] : value;
    text += v.is_string() ? escapeForLog(v.get<std::string>(), 1024) : dumpJson(v);
  }
  return text;
}

std::string deviceName(const nlohmann::json& properties) {
  if (!properties.is_object()) return "";
  for (const char* key : {"device", "domain", "interface", "provider"})
    if (properties.contains(key) && properties[key].is_string())
      return escapeForLog(properties[key].get<std::string>(), 256);
  return "";
}

std::string dumpJson(const nlohmann::ordered_json& value) {
  // Strings from the wire (host, device, provider names of a peer) keep C1 and bidirectional
  // controls only as \u escapes (common/text_escape.h).
  return escapeJsonControls(
      value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

namespace {
// nlohmann::json (sorted keys) -> ordered_json, keeping the value.
nlohmann::ordered_json ordered(const nlohmann::json& value) {
  return nlohmann::ordered_json::parse(
      value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}
}  // namespace

std::string clockLine(const RunInfo& info) {
  if (!info.clock) return "";
  const ClockFacts& c = *info.clock;
  std::string s = c.used == "tsc" ? fmt::format(
                                        "tsc {:.3f} GHz (invariant, calibrated against "
                                        "CLOCK_MONOTONIC_RAW)",
                                        c.tscGhzRounded())
                                  : std::string("clock_gettime(CLOCK_MONOTONIC)");
  s += fmt::format(", one read {:.1f} ns; kernel clocksource {}", c.readCostNsRounded(),
                   c.kernelClocksource);
  if (!c.note.empty()) s += " (tsc not used: " + c.note + ")";
  return s;
}

std::string placementLine(const RunInfo& info) {
  if (!info.placement) return "";
  const PlacementFacts& p = *info.placement;
  const std::string deviceNode =
      p.deviceNumaNode >= 0 ? fmt::format("{}", p.deviceNumaNode) : std::string("unknown");
  std::string s = fmt::format("cpus {} (NUMA node {})", p.cpus, p.cpuNumaNodes);
  s += fmt::format("; device {} NUMA node {}", p.device, deviceNode);
  if (!p.source.empty()) s += "; " + p.source;
  // N-rank runs (collective/rank_placement.h): every rank's CPUs, "rank:cpus", the first 16.
  if (p.ranks.size() > 1) {
    s += "; CPUs per rank:";
    size_t shown = 0;
    for (const RankPlacement& r : p.ranks) {
      if (shown++ == 16) {
        s += fmt::format(" ... ({} ranks)", p.ranks.size());
        break;
      }
      s += fmt::format(" {}:{}", r.rank, r.cpus);
    }
  }
  return s;
}

std::string deschedSizesWarning(const std::vector<uint64_t>& sizes) {
  if (sizes.empty()) return "";
  return fmt::format(
      "size{} {} B lost the CPU during the timed loop (desched: another process ran on its core, "
      "the time includes its work); use -e / --use-event on (event mode), pin to an idle core "
      "(--cpu, taskset), or run fewer ranks per host",
      sizes.size() > 1 ? "s" : "", fmt::join(sizes, ", "));
}

std::string stallSizesWarning(const std::vector<uint64_t>& sizes) {
  if (sizes.empty()) return "";
  return fmt::format(
      "size{} {} B spent most of the timed interval in one pause (stall: one interval between "
      "completions took >= 25% of the row and >= 10x the others, e.g. a TCP retransmission "
      "timeout); the figure is not the link's rate: rerun the size",
      sizes.size() > 1 ? "s" : "", fmt::join(sizes, ", "));
}

std::vector<std::string> headerWarnings(const RunInfo& info) {
  std::vector<std::string> w;
  if (info.clock && !info.clock->warning.empty()) w.push_back(info.clock->warning);
  if (info.placement && !info.placement->warning.empty()) w.push_back(info.placement->warning);
  return w;
}

nlohmann::ordered_json runJson(const RunInfo& info) {
  nlohmann::ordered_json run;
  run["test"] = testName(info);
  run["transport"] = info.transport;
  run["op"] = info.op;
  run["bidirectional"] = info.bidirectional;
  run["round_trip"] = info.roundTrip;
  run["window"] = info.window;
  run["local_host"] = info.localHost;
  run["remote_host"] = info.remoteHost;
  run["local"] = ordered(transport::toJson(info.local));
  run["remote"] = ordered(transport::toJson(info.remote));
  run["command_line"] = info.commandLine;
  run["date"] = info.date;
  run["tool_version"] = toolVersion(info);
  const std::string git = gitDescribe(info);
  run["git_describe"] = git.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(git);
  run["extra"] = ordered(info.extra);
  run["clock"] = ordered(info.clock ? info.clock->toJson() : nlohmann::json::object());
  run["placement"] = ordered(info.placement ? info.placement->toJson() : nlohmann::json::object());
  return run;
}

nlohmann::ordered_json rowJson(const Row& row) {
  nlohmann::ordered_json j;
  j["bytes"] = row.bytes;
  j["iterations"] = row.iterations;
  j["warmup"] = row.warmup;
  // common/desched.h: the counts when this size's loop lost the CPU, else null; always present
  // (a schema member: scripts index rows by name).
  j["descheduled"] = row.descheduled;
  // common/stall.h: bw rows whose time was mostly one pause, else null; always present.
  j["stalled"] = row.stalled;
  if (row.latency) {
    const stats::Summary& s = *row.latency;
    nlohmann::ordered_json lat;
    lat["min"] = s.min;
    lat["max"] = s.max;
    lat["median"] = s.median;
    lat["mean"] = s.mean;
    lat["stdev"] = s.stdev;
    lat["p50"] = s.p50;
    lat["p90"] = s.p90;
    lat["p99"] = s.p99;
    lat["p999"] = s.p999;
    lat["count"] = s.count;
    lat["exact"] = s.exact;
    j["latency_us"] = std::move(lat);
  }
  if (row.collective) {
    const CollectiveRow& c = *row.collective;
    nlohmann::ordered_json k;
    k["ranks"] = c.ranks;
    k["algorithm"] = c.algorithm;
    k["count"] = c.count;
    k["t_min_us"] = c.tMinUs;
    k["t_max_us"] = c.tMaxUs;
    k["t_avg_us"] = c.tAvgUs;
    k["slowest_p50_us"] = c.slowestP50Us;
    k["slowest_p99_us"] = c.slowestP99Us;
    k["slowest_max_us"] = c.slowestMaxUs;
    k["algbw_gb_per_s"] = c.algbwGBs;
    k["busbw_gb_per_s"] =
        c.inNetwork ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.busbwGBs);
    if (c.inNetwork && c.ostPayloadBytes > 0) {
      k["ost_payload_bytes"] = c.ostPayloadBytes;
      k["ost_payloads"] = (row.bytes + c.ostPayloadBytes - 1) / c.ostPayloadBytes;
    }
    k["wrong"] = c.wrong ? nlohmann::ordered_json(*c.wrong) : nlohmann::ordered_json(nullptr);
    j["collective"] = std::move(k);
    return j;
  }
  if (row.link) {
    const RingLinkRow& l = *row.link;
    nlohmann::ordered_json k;
    k["src_rank"] = l.srcRank;
    k["src_host"] = l.srcHost;
    k["src_address"] = l.srcAddress;
    k["dst_rank"] = l.dstRank;
    k["dst_host"] = l.dstHost;
    k["dst_address"] = l.dstAddress;
    k["direction"] = l.direction;
    k["median_us"] = l.medianUs;
    k["min_us"] = l.minUs;
    k["mean_us"] = l.meanUs;
    k["p99_us"] = l.p99Us;
    k["outlier"] = l.outlier;
    j["link"] = std::move(k);
    return j;
  }
  if (!row.latency || row.seconds > 0) {
    j["seconds"] = row.seconds;
    j["mb_per_s"] = row.megabytesPerSec;
    j["msg_per_s"] = row.messagesPerSec;
    j["gbit_per_s"] = gigabitsFromMegabytes(row.megabytesPerSec);
    j["peer_mb_per_s"] = row.peerMegabytesPerSec ? nlohmann::ordered_json(*row.peerMegabytesPerSec)
                                                 : nlohmann::ordered_json(nullptr);
  }
  if (row.messages > 0) j["messages"] = row.messages;
  if (row.wrong) j["wrong"] = *row.wrong;
  if (!row.flags.empty()) j["flags"] = row.flags;
  return j;
}

void TextReporter::begin(const RunInfo& info) {
  if (begun_ || finished_) return;
  begun_ = true;
  info_ = info;
  kind_ = testKind(info_);
  writePreamble();
  out_.flush();
}

void TextReporter::row(const Row& row) {
  if (finished_) return;
  if (!begun_) begin(RunInfo{});
  if (!columns_) {
    columns_ = true;
    writeColumns(&row);
  }
  writeRow(row);
  out_.flush();
}

void TextReporter::end() {
  if (finished_) return;
  if (!begun_) begin(RunInfo{});
  if (!columns_) {
    columns_ = true;
    writeColumns(nullptr);
  }
  writeEnd();
  finished_ = true;
  out_.flush();
}

void TextReporter::abort(const std::string& message) {
  if (finished_) return;
  finished_ = true;
  if (message.empty()) return;  // tableHeaderBlock: the header block only
  // One comment line, so a script that reads the file (or stdout) sees why it ends here.
  std::string line = message;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  out_ << "# error: " << line << '\n';
  out_.flush();
}

std::string tableHeaderBlock(const RunInfo& info, const std::string& title,
                             const std::string& units) {
  std::ostringstream hs;
  auto header = makeReporter("table", hs);
  header->begin(info);
  header->abort("");  // only the header block
  std::string h = hs.str();
  auto replaceLine = [&h](const std::string& from, const std::string& to) {
    if (auto at = h.find(from); at != std::string::npos) h.replace(at, from.size(), to);
  };
  const std::string test = testName(info);
  replaceLine(test + ", latency = half round trip (RTT/2)", test + ", " + title);
  replaceLine("units: microseconds; t_typical = median, pXX = nearest-rank percentile",
              "units: " + units);
  return h;
}

}  // namespace rdmabench::report::detail
