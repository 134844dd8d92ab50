// "table" (default): for people. A header block of `#` lines (so gnuplot and `grep -v '^#'`
// skip it), then one right-aligned line per size under labelled columns with their units:
//
//   # rdmabench 0.2.0 (git v0.2.0-3-gdda7cb0): lat, latency = half round trip (RTT/2)
//   # transport: socket   op: send
//   ...
//       #bytes  #iterations  t_min[us]  t_max[us] t_typical[us] ...
//            2         1000       1.02       3.56          1.05 ...
//
// Latency columns: #bytes #iterations t_min t_max t_typical t_avg t_stdev p50 p90 p99 p99.9 in
// microseconds (RunInfo::roundTrip renames t_ to rtt_). Bandwidth columns: #bytes #iterations
// BW[MB/s] [BW[Gb/s] with --gigabits] MsgRate[Mmsg/s] [peer_BW[MB/s] when the first row has it].

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "common/desched.h"
#include "common/stall.h"
#include "common/version.h"
#include "report/format_util.h"
#include "transport/info_json.h"

namespace rdmabench::report::detail {
namespace {

struct Column {
  std::string label;
  size_t width;
};

Column column(std::string label, size_t minWidth = 10) {
  size_t width = std::max(label.size(), minWidth);
  return Column{std::move(label), width};
}

class TableReporter : public TextReporter {
 public:
  using TextReporter::TextReporter;

 protected:
  void writePreamble() override {
    const RunInfo& i = info();
    std::string what;
    switch (kind()) {
      case TestKind::kLatency:
        what = "latency = " + latencyMeaning(i);
        break;
      case TestKind::kBandwidth:
        what =
            fmt::format("bandwidth, {}, {}",
                        i.extra.is_object() && i.extra.value("mode", std::string()) == "stream"
                            ? fmt::format("stream mode, {} posts in flight", i.window)
                            : fmt::format("window {} messages (window mode)", i.window),
                        i.bidirectional ? "bidirectional (both directions summed)"
                                        : "unidirectional (first post to delivery at the target)");
        break;
      case TestKind::kBarrier:
      case TestKind::kAllreduce:
        what = "time per call; t_min/t_max/t_avg = min/max/mean over ranks of each rank's mean";
        break;
      case TestKind::kRing:
        what = "every rank ping-pongs with its right, then its left neighbour; latency = RTT/2";
        break;
    }
    line("rdmabench {}: {}, {}", version::describe(toolVersion(i), gitDescribe(i)),
         i.test ? toString(*i.test) : "?", what);
    if (i.op.empty())  // barrier, ring: no operation to name
      line("transport: {}", i.transport);
    else
      line("transport: {}   op: {}", i.transport, i.op);
    if (isCollective()) {
      line("ranks: {}", i.remoteHost);
      hostLine("rank 0", i.localHost, transport::toJson(i.local));
    } else {
      hostLine("local ", i.localHost, transport::toJson(i.local));
      hostLine("remote", i.remoteHost, transport::toJson(i.remote));
    }
    if (!i.extra.is_null() && !i.extra.empty()) line("extra: {}", describeProperties(i.extra));
    if (std::string c = clockLine(i); !c.empty()) line("clock: {}", c);
    if (std::string p = placementLine(i); !p.empty()) line("placement: {}", p);
    for (const std::string& w : headerWarnings(i))
      line("WARNING: {}", w);
    if (!i.date.empty()) line("date: {}", i.date);
    if (!i.commandLine.empty()) line("command: {}", i.commandLine);
    switch (kind()) {
      case TestKind::kLatency:
        line("units: microseconds; t_typical = median, pXX = nearest-rank percentile");
        break;
      case TestKind::kBandwidth:
        line("units: MB/s = 10^6 B/s, Gb/s = 10^9 bit/s, Mmsg/s = 10^6 messages/s");
        break;
      case TestKind::kBarrier:
      case TestKind::kAllreduce:
        line(
            "units: microseconds; slowest_* = distribution over iterations of the slowest "
            "rank's time; GB/s = 10^9 B/s, busbw = algbw * 2(n-1)/n");
        break;
      case TestKind::kRing:
        line("units: microseconds (median / min / mean / p99 of RTT/2 per link)");
        break;
    }
  }

  void writeColumns(const Row* first) override {
    columns_ = {column("#bytes"), column("#iterations", 11)};
    switch (kind()) {
      case TestKind::kLatency: {
        std::string t = info().roundTrip ? "rtt_" : "t_";
        std::string p = info().roundTrip ? "rtt_" : "";
        for (const char* name : {"min", "max", "typical", "avg", "stdev"}) {
          columns_.push_back(column(t + name + "[us]"));
        }
        for (const char* name : {"p50", "p90", "p99", "p99.9"}) {
          columns_.push_back(column(p + name + "[us]"));
        }
        wrong_ = first && first->wrong.has_value();
        if (wrong_) columns_.push_back(column("#wrong", 6));
        break;
      }
      case TestKind::kBandwidth:
        columns_.push_back(column("BW[MB/s]", 12));
        if (options().gigabits) columns_.push_back(column("BW[Gb/s]"));
        columns_.push_back(column("MsgRate[Mmsg/s]"));
        // A first row whose peer figure was dropped (flag peer_late) still has the column.
        peer_ = first && (first->peerMegabytesPerSec.has_value() ||
                          std::find(first->flags.begin(), first->flags.end(), "peer_late") !=
                              first->flags.end());
        if (peer_) columns_.push_back(column("peer_BW[MB/s]", 12));
        wrong_ = first && first->wrong.has_value();
        if (wrong_) columns_.push_back(column("#wrong", 6));
        break;
      case TestKind::kBarrier:
      case TestKind::kAllreduce:
        if (kind() == TestKind::kBarrier) columns_.erase(columns_.begin());
        for (const char* name : {"ranks", "algo"})
          columns_.push_back(column(name, 6));
        for (const char* name : {"t_min[us]", "t_max[us]", "t_avg[us]", "slowest_p50[us]",
                                 "slowest_p99[us]", "slowest_max[us]"})
          columns_.push_back(column(name));
        if (kind() == TestKind::kAllreduce) {
          columns_.push_back(column("algbw[GB/s]"));
          columns_.push_back(column("busbw[GB/s]"));
          columns_.push_back(column("#wrong", 6));
        }
        break;
      case TestKind::kRing:
        columns_.clear();
        for (const char* name : {"src", "src_host", "dst", "dst_host", "dir"})
          columns_.push_back(column(name, 5));
        for (const char* name : {"lat[us]", "min[us]", "mean[us]", "p99[us]"})
          columns_.push_back(column(name));
        columns_.push_back(column("outlier", 7));
        break;
    }
    std::vector<std::string> labels;
    for (const Column& c : columns_)
      labels.push_back(c.label);
    writeCells(labels);
  }

  void writeRow(const Row& row) override {
    std::vector<std::string> cells{fmt::format("{}", row.bytes), fmt::format("{}", row.iterations)};
    switch (kind()) {
      case TestKind::kLatency: {
        stats::Summary s = row.latency.value_or(stats::Summary{});
        for (double v : {s.min, s.max, s.median, s.mean, s.stdev, s.p50, s.p90, s.p99, s.p999}) {
          cells.push_back(fmt::format("{:.2f}", v));
        }
        if (!s.exact) inexact_.push_back(row.bytes);
        if (wrong_) cells.push_back(row.wrong ? fmt::format("{}", *row.wrong) : "N/A");
        break;
      }
      case TestKind::kBandwidth:
        cells.push_back(fmt::format("{:.2f}", row.megabytesPerSec));
        if (options().gigabits) {
          cells.push_back(fmt::format("{:.2f}", gigabitsFromMegabytes(row.megabytesPerSec)));
        }
        cells.push_back(fmt::format("{:.6f}", row.messagesPerSec / 1e6));
        if (peer_) {
          cells.push_back(row.peerMegabytesPerSec ? fmt::format("{:.2f}", *row.peerMegabytesPerSec)
                                                  : std::string("-"));
        }
        if (wrong_) cells.push_back(row.wrong ? fmt::format("{}", *row.wrong) : "N/A");
        break;
      case TestKind::kBarrier:
      case TestKind::kAllreduce: {
        CollectiveRow c = row.collective.value_or(CollectiveRow{});
        if (kind() == TestKind::kBarrier) cells.erase(cells.begin());
        cells.push_back(fmt::format("{}", c.ranks));
        cells.push_back(c.algorithm);
        for (double v :
             {c.tMinUs, c.tMaxUs, c.tAvgUs, c.slowestP50Us, c.slowestP99Us, c.slowestMaxUs})
          cells.push_back(fmt::format("{:.2f}", v));
        if (kind() == TestKind::kAllreduce) {
          cells.push_back(fmt::format("{:.3f}", c.algbwGBs));
          cells.push_back(c.inNetwork ? std::string("n/a") : fmt::format("{:.3f}", c.busbwGBs));
          if (c.inNetwork) {
            inNetwork_ = true;
            if (c.ostPayloadBytes) {
              ostPayload_ = c.ostPayloadBytes;
              largest_ = std::max(largest_, row.bytes);
            }
          }
          cells.push_back(c.wrong ? fmt::format("{}", *c.wrong) : std::string("N/A"));
        }
        break;
      }
      case TestKind::kRing: {
        RingLinkRow l = row.link.value_or(RingLinkRow{});
        cells = {fmt::format("{}", l.srcRank), l.srcHost, fmt::format("{}", l.dstRank), l.dstHost,
                 l.direction};
        for (double v : {l.medianUs, l.minUs, l.meanUs, l.p99Us})
          cells.push_back(fmt::format("{:.2f}", v));
        cells.push_back(l.outlier ? "YES" : "-");
        break;
      }
    }
    if (!row.flags.empty()) {  // Row::flags: one cell before the desched mark, e.g. [short,capped]
      std::string flags;
      for (const std::string& flag : row.flags) {
        flags += (flags.empty() ? "" : ",") + flag;
        if (std::find(flagsSeen_.begin(), flagsSeen_.end(), flag) == flagsSeen_.end())
          flagsSeen_.push_back(flag);
      }
      cells.push_back("[" + flags + "]");
    }
    // common/desched.h: this size's loop lost the CPU (last cell); the WARNING follows the
    // table (writeEnd), not a line mid-table.
    if (!row.descheduled.is_null()) {
      deschedWarned_ = true;
      cells.push_back("desched");
    }
    if (!row.stalled.is_null()) {  // common/stall.h: one pause took most of the row
      stallWarned_ = true;
      cells.push_back("stall");
    }
    writeCells(cells);
  }

  void writeEnd() override {
    if (deschedWarned_) line("WARNING: {}", deschedAdvice());
    if (stallWarned_) line("WARNING: {}", stallAdvice());
    for (const std::string& flag : flagsSeen_) {
      if (flag == "short")
        line(
            "note: [short] = timed over less than {} ms in total: clock and loop overheads weigh "
            "in (raise -n or use -D)",
            kShortIntervalSec * 1000);
      else if (flag == "capped")
        line(
            "note: [capped] = fewer iterations than OSU's count: the size would have taken longer "
            "than --max-time");
    }
    if (inNetwork_) {
      line(
          "note: sharp = in-network reduction (the switches reduce): busbw n/a, nccl-tests' "
          "2(n-1)/n factor does not apply");
      if (ostPayload_)
        line(
            "note: sharp: one sharp_coll_do_allreduce per iteration; libsharp_coll splits it into "
            "ceil(bytes / {}) OST payloads of {} bytes (caps_query), {} for {} bytes",
            ostPayload_, ostPayload_, (largest_ + ostPayload_ - 1) / ostPayload_, largest_);
    }
    if (inexact_.empty()) return;
    line(
        "note: percentiles of {} byte rows come from the log-linear histogram past the sample "
        "cap (relative error <= 0.78%); min/max/avg/stdev stay exact",
        fmt::join(inexact_, ", "));
  }

 private:
  bool deschedWarned_ = false;
  bool stallWarned_ = false;
  template <typename... Args>
  void line(fmt::format_string<Args...> format, Args&&... args) {
    out() << "# " << fmt::format(format, std::forward<Args>(args)...) << '\n';
  }

  bool isCollective() const {
    return kind() == TestKind::kBarrier || kind() == TestKind::kAllreduce ||
           kind() == TestKind::kRing;
  }

  void hostLine(const char* side, const std::string& host, const nlohmann::json& props) {
    if (host.empty() && (props.is_null() || props.empty())) return;
    std::string desc = describeProperties(props);
    line("{}: {}{}{}", side, host.empty() ? "?" : host, desc.empty() ? "" : "  ", desc);
    if (props.is_object() && props.contains("connection")) {
      std::string conn = describeProperties(props["connection"]);
      if (!conn.empty())
        line("{}  connection: {}", std::string(std::string_view(side).size(), ' '), conn);
    }
  }

  void writeCells(const std::vector<std::string>& cells) {
    std::string text;
    for (size_t i = 0; i < cells.size(); ++i) {
      size_t width = i < columns_.size() ? columns_[i].width : cells[i].size();
      text += fmt::format(" {:>{}}", cells[i], width);
    }
    out() << text << '\n';
  }

  std::vector<Column> columns_;
  std::vector<uint64_t> inexact_;
  std::vector<std::string> flagsSeen_;  // Row::flags met so far, for the notes at the end
  bool inNetwork_ = false;
  uint64_t ostPayload_ = 0, largest_ = 0;
  bool peer_ = false;
  bool wrong_ = false;  // --check: a #wrong column
};

}  // namespace

std::unique_ptr<Reporter> makeTableReporter(std::ostream& out, const ReportOptions& options) {
  return std::make_unique<TableReporter>(out, options);
}

}  // namespace rdmabench::report::detail
