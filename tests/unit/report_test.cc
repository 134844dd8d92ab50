#include "report/report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "report/ab_report.h"

namespace rdmabench::report {
namespace {

RunInfo latencyRun() {
  RunInfo info;
  info.test = "lat";
  info.transport = "socket";
  info.op = "send";
  info.localHost = "node-a";
  info.remoteHost = "node-b";
  info.local = {{"device", "lo"}, {"mtu", 65536}};
  info.remote = {{"device", "lo"}};
  info.commandLine = "rdmabench lat --peer node-b -s 2";
  info.date = "2026-01-02T03:04:05Z";
  info.toolVersion = "0.1.0";
  return info;
}

RunInfo bandwidthRun(bool bidirectional = false) {
  RunInfo info = latencyRun();
  info.test = "bw";
  info.window = 64;
  info.bidirectional = bidirectional;
  return info;
}

Row latencyRow(uint64_t bytes, double mean, uint64_t iterations = 1000) {
  stats::Summary s;
  s.count = iterations;
  s.min = 1.02;
  s.max = 3.56;
  s.median = 1.05;
  s.mean = mean;
  s.stdev = 0.04;
  s.p50 = 1.05;
  s.p90 = 1.10;
  s.p99 = 1.20;
  s.p999 = 3.56;
  Row row;
  row.bytes = bytes;
  row.iterations = iterations;
  row.warmup = 100;
  row.latency = s;
  return row;
}

Row bandwidthRow(uint64_t bytes, double mbps, double msgs, uint64_t iterations = 100) {
  Row row;
  row.bytes = bytes;
  row.iterations = iterations;
  row.warmup = 10;
  row.seconds = 0.25;
  row.megabytesPerSec = mbps;
  row.messagesPerSec = msgs;
  return row;
}

std::string run(std::string_view format, const RunInfo& info, const std::vector<Row>& rows,
                ReportOptions options = {}) {
  std::ostringstream out;
  auto reporter = makeReporter(format, out, options);
  reporter->begin(info);
  for (const Row& r : rows)
    reporter->row(r);
  reporter->end();
  return out.str();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    v.push_back(l);
  return v;
}

bool hasLine(const std::string& text, const std::string& line) {
  for (const std::string& l : lines(text)) {
    if (l == line) return true;
  }
  return false;
}

// A server's device properties reach the client's header: no terminal escape, no forged line
// (issue 24, item 6), in every text format.
TEST(Report, ServerDevicePropertiesAreEscapedInEveryTextHeader) {
  RunInfo info = latencyRun();
  info.remote = {{"device", "lo\x1b]0;owned\x07"},
                 {"x\x1b[2Jkey", "v\nrdmabench: run OK"},
                 {"protocol", {{"summary", "eager\x1b[31m <= 16 KiB\r"}}}};
  for (const char* format : {"table", "perftest", "osu", "imb"}) {
    const std::string text = run(format, info, {latencyRow(64, 1000)});
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << format << ":\n" << text;
    EXPECT_EQ(text.find('\r'), std::string::npos) << format;
    EXPECT_FALSE(hasLine(text, "rdmabench: run OK")) << format;
  }
  const std::string table = run("table", info, {latencyRow(64, 1000)});
  EXPECT_NE(table.find("device=lo\\x1b]0;owned\\x07"), std::string::npos) << table;
  EXPECT_NE(table.find("x\\x1b[2Jkey=v\\nrdmabench: run OK"), std::string::npos) << table;
  EXPECT_NE(table.find("protocol=eager\\x1b[31m <= 16 KiB\\r"), std::string::npos) << table;
}

// ---------------------------------------------------------------- registry

TEST(Report, FormatNamesListsEveryFormat) {
  std::vector<std::string> want{"table", "json", "csv", "perftest", "osu", "imb"};
  EXPECT_EQ(formatNames(), want);
  for (const std::string& name : formatNames()) {
    std::ostringstream out;
    EXPECT_NE(makeReporter(name, out), nullptr) << name;
  }
}

TEST(Report, UnknownFormatIsAUsageErrorNamingTheOptionAndTheChoices) {
  std::ostringstream out;
  try {
    makeReporter("xml", out);
    FAIL() << "accepted xml";
  } catch (const UsageError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("--format"), std::string::npos) << msg;
    EXPECT_NE(msg.find("xml"), std::string::npos) << msg;
    for (const std::string& name : formatNames()) {
      EXPECT_NE(msg.find(name), std::string::npos) << name << " missing in: " << msg;
    }
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line";
  }
  EXPECT_THROW(makeReporter("JSON", out), UsageError);  // case-sensitive
  EXPECT_THROW(makeReporter("", out), UsageError);
}

// ---------------------------------------------------------------- osu

TEST(ReportOsu, LatencyMatchesOsu7Layout) {
  std::string text = run("osu", latencyRun(), {latencyRow(1, 1.67), latencyRow(4194304, 412.77)});
  // Lines below are shaped exactly as OSU 7.5 osu_latency prints them ("%-10d%18.2f").
  EXPECT_EQ(text,
            "\n"
            "# OSU MPI-free Latency Test (rdmabench 0.1.0, socket send)\n"
            "# Datatype: MPI_CHAR.\n"
            "# Size       Avg Latency(us)\n"
            "1                       1.67\n"
            "4194304               412.77\n");
}

TEST(ReportOsu, FullAddsMinMaxIterations) {
  ReportOptions options;
  options.full = true;
  std::string text = run("osu", latencyRun(), {latencyRow(8, 1.5, 10000)}, options);
  auto l = lines(text);
  ASSERT_EQ(l.size(), 5u) << text;
  EXPECT_EQ(l[3], "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations");
  EXPECT_EQ(l[4], "8                       1.50              1.02              3.56       10000");
}

TEST(ReportOsu, BandwidthAndBidirectionalTitles) {
  std::string bw = run("osu", bandwidthRun(),
                       {bandwidthRow(1, 3.45, 3.45e6), bandwidthRow(1024, 1893.21, 1.8e6)});
  EXPECT_EQ(bw,
            "\n"
            "# OSU MPI-free Bandwidth Test (rdmabench 0.1.0, socket send)\n"
            "# Datatype: MPI_CHAR.\n"
            "# Size      Bandwidth (MB/s)\n"
            "1                       3.45\n"
            "1024                 1893.21\n");
  std::string bibw = run("osu", bandwidthRun(true), {bandwidthRow(1, 6.9, 6.9e6)});
  EXPECT_TRUE(hasLine(bibw,
                      "# OSU MPI-free Bi-Directional Bandwidth Test (rdmabench 0.1.0, "
                      "socket send)"))
      << bibw;
}

TEST(ReportOsu, RoundTripIsNamedInTheTitle) {
  RunInfo info = latencyRun();
  info.op = "read";
  info.roundTrip = true;
  std::string text = run("osu", info, {latencyRow(8, 2.5)});
  EXPECT_TRUE(hasLine(text,
                      "# OSU MPI-free Latency Test (rdmabench 0.1.0, socket read, full "
                      "round trip)"))
      << text;
}

// ---------------------------------------------------------------- perftest

TEST(ReportPerftest, LatencyTableMatchesPerftestColumns) {
  std::string text = run("perftest", latencyRun(), {latencyRow(2, 1.06)});
  auto l = lines(text);
  const std::string dashes(87, '-');
  ASSERT_GE(l.size(), 6u) << text;
  EXPECT_EQ(l.front(), dashes);
  EXPECT_EQ(l[1], "                    Send Latency Test");
  EXPECT_EQ(l.back(), dashes);
  // perftest's header and row: " %-7lu %lu          %-7.2f        %-7.2f      %-7.2f  \t
  // %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f".
  EXPECT_EQ(l[l.size() - 3],
            " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
            "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ");
  EXPECT_EQ(l[l.size() - 2],
            " 2       1000          1.02           3.56         1.05     \t       1.06        "
            "\t0.04   \t\t1.20    \t\t3.56   ");
  EXPECT_EQ(l[l.size() - 4], dashes);
}

TEST(ReportPerftest, BandwidthTableInMegabytesAndGigabits) {
  std::vector<Row> rows{bandwidthRow(65536, 11234.56, 171425.0, 5000)};
  rows[0].messages = 320000;  // perftest's #iterations counts messages
  std::string mb = run("perftest", bandwidthRun(), rows);
  EXPECT_TRUE(hasLine(mb, "                    Send BW Test")) << mb;
  EXPECT_TRUE(hasLine(
      mb, " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"))
      << mb;
  // perftest's row: " %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t     %-7.6lf";
  // MB/sec = 2^20 B/s as perftest divides (11234.56 * 10^6 / 2^20 = 10714.11), peak not
  // computed = 0.00 (perftest -N), #iterations = messages.
  EXPECT_TRUE(hasLine(mb,
                      " 65536      320000           0.00               10714.11\t\t     "
                      "0.171425"))
      << mb;
  EXPECT_TRUE(hasLine(mb, " BW units        : MB/sec = 2^20 B/s (MiB/s, as perftest divides)"))
      << mb;
  // Issue 22 item 8: window mode in perftest's layout says which flag gives perftest's method;
  // a stream-mode run needs no such line.
  EXPECT_TRUE(hasLine(
      mb, " Note            : perftest streams: --mode stream gives ib_*_bw's method and figures"))
      << mb;
  RunInfo stream = bandwidthRun();
  stream.extra["mode"] = "stream";
  EXPECT_EQ(run("perftest", stream, rows).find("--mode stream"), std::string::npos);

  ReportOptions gbits;
  gbits.gigabits = true;
  std::string gb = run("perftest", bandwidthRun(), rows, gbits);
  EXPECT_TRUE(hasLine(
      gb, " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"))
      << gb;
  EXPECT_TRUE(hasLine(gb,
                      " 65536      320000           0.00               89.88  \t\t     "
                      "0.171425"))
      << gb;
}

TEST(ReportPerftest, TitlesFollowTheOperation) {
  RunInfo info = bandwidthRun(true);
  info.op = "write";
  EXPECT_TRUE(hasLine(run("perftest", info, {}),
                      "                    RDMA_Write Bidirectional "
                      "BW Test"));
}

// ---------------------------------------------------------------- imb

TEST(ReportImb, PingPongMatchesImbLayout) {
  // t and Mbytes/sec below are taken from a published IMB-MPI1 2021 PingPong log; the means are
  // chosen so that bytes / t rounds as IMB's did (Mbytes/sec = 10^6 B/s).
  std::string text = run("imb", latencyRun(),
                         {latencyRow(0, 1.66), latencyRow(8, 1.656), latencyRow(1024, 2.341053)});
  const std::string rule = "#" + std::string(51, '-');
  std::string expected = rule + "\n" +
                         "# Benchmarking PingPong \n"
                         "# #processes = 2 \n" +
                         rule + "\n" +
                         "       #bytes #repetitions      t[usec]   Mbytes/sec\n"
                         "            0         1000         1.66         0.00\n"
                         "            8         1000         1.66         4.83\n"
                         "         1024         1000         2.34       437.41\n"
                         "\n";
  ASSERT_GE(text.size(), expected.size());
  EXPECT_EQ(text.substr(text.size() - expected.size()), expected) << text;
  EXPECT_NE(text.find("# Calling sequence was:"), std::string::npos);
  EXPECT_NE(text.find("rdmabench lat --peer node-b -s 2"), std::string::npos);
}

TEST(ReportImb, BandwidthMapsToUnibandAndBiband) {
  std::string uni = run("imb", bandwidthRun(), {bandwidthRow(0, 0.0, 2189915.0, 1000)});
  EXPECT_TRUE(hasLine(uni, "# Benchmarking Uniband ")) << uni;
  EXPECT_TRUE(hasLine(uni, "       #bytes #repetitions   Mbytes/sec      Msg/sec")) << uni;
  EXPECT_TRUE(hasLine(uni, "            0         1000         0.00      2189915")) << uni;
  std::string bi = run("imb", bandwidthRun(true), {bandwidthRow(4096, 9000.5, 2.2e6)});
  EXPECT_TRUE(hasLine(bi, "# Benchmarking Biband ")) << bi;
  EXPECT_TRUE(hasLine(bi, "         4096          100      9000.50      2200000")) << bi;
}

// ---------------------------------------------------------------- json

TEST(ReportJson, DocumentParsesBackFieldByField) {
  RunInfo info = latencyRun();
  info.extra = {{"iteration_policy", "fixed"}};
  std::string text = run("json", info, {latencyRow(2, 1.06), latencyRow(4096, 2.5)});
  nlohmann::json doc = nlohmann::json::parse(text);  // throws (fails the test) when invalid
  EXPECT_EQ(doc["tool"], "rdmabench");
  EXPECT_EQ(doc["version"], "0.1.0");
  EXPECT_FALSE(doc.contains("error"));
  const auto& r = doc["run"];
  EXPECT_EQ(r["test"], "lat");
  EXPECT_EQ(r["transport"], "socket");
  EXPECT_EQ(r["op"], "send");
  EXPECT_EQ(r["bidirectional"], false);
  EXPECT_EQ(r["round_trip"], false);
  EXPECT_EQ(r["window"], 0);
  EXPECT_EQ(r["local_host"], "node-a");
  EXPECT_EQ(r["remote_host"], "node-b");
  EXPECT_EQ(r["local"]["mtu"], 65536);
  EXPECT_EQ(r["remote"]["device"], "lo");
  EXPECT_EQ(r["command_line"], "rdmabench lat --peer node-b -s 2");
  EXPECT_EQ(r["date"], "2026-01-02T03:04:05Z");
  EXPECT_EQ(r["extra"]["iteration_policy"], "fixed");
  ASSERT_EQ(doc["rows"].size(), 2u);
  const auto& row = doc["rows"][1];
  EXPECT_EQ(row["bytes"], 4096);
  EXPECT_EQ(row["iterations"], 1000);
  EXPECT_EQ(row["warmup"], 100);
  const auto& lat = row["latency_us"];
  EXPECT_DOUBLE_EQ(lat["min"].get<double>(), 1.02);
  EXPECT_DOUBLE_EQ(lat["max"].get<double>(), 3.56);
  EXPECT_DOUBLE_EQ(lat["median"].get<double>(), 1.05);
  EXPECT_DOUBLE_EQ(lat["mean"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(lat["stdev"].get<double>(), 0.04);
  EXPECT_DOUBLE_EQ(lat["p50"].get<double>(), 1.05);
  EXPECT_DOUBLE_EQ(lat["p90"].get<double>(), 1.10);
  EXPECT_DOUBLE_EQ(lat["p99"].get<double>(), 1.20);
  EXPECT_DOUBLE_EQ(lat["p999"].get<double>(), 3.56);
  EXPECT_EQ(lat["count"], 1000);
  EXPECT_EQ(lat["exact"], true);
  EXPECT_FALSE(row.contains("mb_per_s"));
}

TEST(ReportJson, BandwidthRows) {
  Row withPeer = bandwidthRow(65536, 12000.0, 183105.5);
  withPeer.peerMegabytesPerSec = 11990.0;
  std::string text = run("json", bandwidthRun(), {withPeer, bandwidthRow(1, 2.0, 2e6)});
  nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["run"]["window"], 64);
  const auto& r0 = doc["rows"][0];
  EXPECT_FALSE(r0.contains("latency_us"));
  EXPECT_DOUBLE_EQ(r0["seconds"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(r0["mb_per_s"].get<double>(), 12000.0);
  EXPECT_DOUBLE_EQ(r0["msg_per_s"].get<double>(), 183105.5);
  EXPECT_DOUBLE_EQ(r0["gbit_per_s"].get<double>(), 96.0);
  EXPECT_DOUBLE_EQ(r0["peer_mb_per_s"].get<double>(), 11990.0);
  EXPECT_TRUE(doc["rows"][1]["peer_mb_per_s"].is_null());
}

TEST(ReportJson, AbortKeepsTheDocumentValidAndRecordsTheError) {
  std::ostringstream out;
  auto reporter = makeReporter("json", out);
  reporter->begin(latencyRun());
  reporter->row(latencyRow(2, 1.06));
  reporter->abort("timeout: no completion from peer node-b after 10 s");
  reporter->row(latencyRow(4, 1.1));  // ignored after abort
  reporter->end();                    // ignored after abort
  nlohmann::json doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["error"], "timeout: no completion from peer node-b after 10 s");
  EXPECT_EQ(doc["rows"].size(), 1u);
  EXPECT_EQ(doc["run"]["test"], "lat");
}

TEST(ReportJson, AbortBeforeAnyRowOrBeginIsValid) {
  std::ostringstream a, b;
  {
    auto reporter = makeReporter("json", a);
    reporter->begin(latencyRun());
    reporter->abort("connect failed");
  }
  nlohmann::json docA = nlohmann::json::parse(a.str());
  EXPECT_TRUE(docA["rows"].empty());
  EXPECT_EQ(docA["error"], "connect failed");
  {
    auto reporter = makeReporter("json", b);
    reporter->abort("bad option");
  }
  nlohmann::json docB = nlohmann::json::parse(b.str());
  EXPECT_EQ(docB["error"], "bad option");
  EXPECT_EQ(docB["tool"], "rdmabench");
}

TEST(ReportJson, DestroyedWithoutEndStillClosesTheDocument) {
  std::ostringstream out;
  {
    auto reporter = makeReporter("json", out);
    reporter->begin(latencyRun());
    reporter->row(latencyRow(2, 1.06));
  }
  nlohmann::json doc = nlohmann::json::parse(out.str());
  EXPECT_TRUE(doc.contains("error"));
  EXPECT_EQ(doc["rows"].size(), 1u);
}

TEST(ReportJson, InvalidUtf8AndEscapesStayValid) {
  RunInfo info = latencyRun();
  info.commandLine = "rdmabench \"quoted\" \xff\xfe tab\there";
  std::string text = run("json", info, {latencyRow(2, 1.0)});
  nlohmann::json doc = nlohmann::json::parse(text);
  std::string cmd = doc["run"]["command_line"];
  EXPECT_NE(cmd.find("\"quoted\""), std::string::npos);
  EXPECT_NE(cmd.find("tab\there"), std::string::npos);
}

TEST(ReportJson, HistogramRowsAreMarkedInexact) {
  Row row = latencyRow(2, 1.0);
  row.latency->exact = false;
  nlohmann::json doc = nlohmann::json::parse(run("json", latencyRun(), {row}));
  EXPECT_EQ(doc["rows"][0]["latency_us"]["exact"], false);
}

// ---------------------------------------------------------------- csv

// Minimal RFC 4180 reader: records of fields, quoted fields may hold commas, quotes, newlines.
std::vector<std::vector<std::string>> parseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      fields.push_back(field);
      field.clear();
    } else if (c == '\n') {
      fields.push_back(field);
      records.push_back(fields);
      fields.clear();
      field.clear();
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quote";
  EXPECT_TRUE(fields.empty() && field.empty() && !any) << "last line lacks a newline";
  return records;
}

TEST(ReportCsv, EveryLineHasTheHeaderColumnCount) {
  std::ostringstream out;
  auto reporter = makeReporter("csv", out);
  reporter->begin(latencyRun());
  reporter->row(latencyRow(2, 1.06));
  reporter->row(latencyRow(4, 1.07));
  reporter->end();
  auto records = parseCsv(out.str());
  ASSERT_EQ(records.size(), 3u);
  const auto& header = records[0];
  for (const auto& r : records)
    EXPECT_EQ(r.size(), header.size());
  auto col = [&](const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return i;
    }
    ADD_FAILURE() << "no column " << name;
    return size_t{0};
  };
  // The same fields as the JSON rows, plus the run identity on every line.
  for (const char* name :
       {"test",         "transport",     "op",         "bytes",         "iterations",
        "warmup",       "lat_min_us",    "lat_max_us", "lat_median_us", "lat_mean_us",
        "lat_stdev_us", "lat_p50_us",    "lat_p90_us", "lat_p99_us",    "lat_p999_us",
        "lat_count",    "lat_exact",     "seconds",    "mb_per_s",      "msg_per_s",
        "gbit_per_s",   "peer_mb_per_s", "error"}) {
    col(name);
  }
  EXPECT_EQ(records[1][col("test")], "lat");
  EXPECT_EQ(records[1][col("bytes")], "2");
  EXPECT_EQ(records[2][col("lat_mean_us")], "1.07");
  EXPECT_EQ(records[2][col("lat_exact")], "true");
  EXPECT_EQ(records[2][col("mb_per_s")], "");
  EXPECT_EQ(records[2][col("error")], "");
  EXPECT_EQ(out.str().find('#'), std::string::npos) << "no comment lines";
}

TEST(ReportCsv, BandwidthRowsQuotingAndAbort) {
  RunInfo info = bandwidthRun();
  info.transport = "ofi,\"verbs\"";  // forces RFC 4180 quoting
  std::ostringstream out;
  auto reporter = makeReporter("csv", out);
  reporter->begin(info);
  Row r = bandwidthRow(65536, 12000.0, 183105.5);
  r.peerMegabytesPerSec = 11990.5;
  reporter->row(r);
  reporter->abort("peer \"node-b\" lost,\nretry exceeded");
  auto records = parseCsv(out.str());
  ASSERT_EQ(records.size(), 3u) << out.str();
  for (const auto& rec : records)
    EXPECT_EQ(rec.size(), records[0].size());
  const auto& header = records[0];
  auto at = [&](const std::vector<std::string>& rec, const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return rec[i];
    }
    return std::string("<missing>");
  };
  EXPECT_EQ(at(records[1], "transport"), "ofi,\"verbs\"");
  EXPECT_EQ(at(records[1], "mb_per_s"), "12000");
  EXPECT_EQ(at(records[1], "gbit_per_s"), "96");
  EXPECT_EQ(at(records[1], "peer_mb_per_s"), "11990.5");
  EXPECT_EQ(at(records[1], "window"), "64");
  EXPECT_EQ(at(records[1], "lat_mean_us"), "");
  EXPECT_EQ(at(records[2], "error"), "peer \"node-b\" lost,\nretry exceeded");
  EXPECT_EQ(at(records[2], "test"), "bw");
}

// ---------------------------------------------------------------- table

TEST(ReportTable, LatencyHeaderBlockAndColumns) {
  std::string text = run("table", latencyRun(), {latencyRow(2, 1.06)});
  auto l = lines(text);
  EXPECT_NE(text.find("# rdmabench 0.1.0"), std::string::npos) << text;
  EXPECT_NE(text.find("socket"), std::string::npos);
  EXPECT_NE(text.find("node-a"), std::string::npos);
  EXPECT_NE(text.find("mtu=65536"), std::string::npos);
  EXPECT_NE(text.find("2026-01-02T03:04:05Z"), std::string::npos);
  EXPECT_NE(text.find("rdmabench lat --peer node-b -s 2"), std::string::npos);
  EXPECT_NE(text.find("RTT/2"), std::string::npos);
  // Column labels and one value per label, aligned on the right edge.
  std::string header, row;
  for (const auto& line : l) {
    if (line.find("t_min[us]") != std::string::npos) header = line;
    if (!line.empty() && line[0] != '#' && line.find("#bytes") == std::string::npos) row = line;
  }
  ASSERT_FALSE(header.empty()) << text;
  ASSERT_FALSE(row.empty()) << text;
  EXPECT_EQ(header.size(), row.size()) << "columns aligned";
  std::istringstream hs(header), rs(row);
  std::vector<std::string> labels, values;
  for (std::string w; hs >> w;)
    labels.push_back(w);
  for (std::string w; rs >> w;)
    values.push_back(w);
  std::vector<std::string> wantLabels{"#bytes",        "#iterations", "t_min[us]",   "t_max[us]",
                                      "t_typical[us]", "t_avg[us]",   "t_stdev[us]", "p50[us]",
                                      "p90[us]",       "p99[us]",     "p99.9[us]"};
  EXPECT_EQ(labels, wantLabels);
  std::vector<std::string> wantValues{"2",    "1000", "1.02", "3.56", "1.05", "1.06",
                                      "0.04", "1.05", "1.10", "1.20", "3.56"};
  EXPECT_EQ(values, wantValues);
}

TEST(ReportTable, RoundTripRenamesLatencyColumns) {
  RunInfo info = latencyRun();
  info.roundTrip = true;
  std::string text = run("table", info, {latencyRow(2, 1.06)});
  EXPECT_NE(text.find("rtt_min[us]"), std::string::npos) << text;
  EXPECT_NE(text.find("rtt_p99.9[us]"), std::string::npos) << text;
  EXPECT_EQ(
      text.find("t_min[us]") != std::string::npos && text.find("rtt_min[us]") == std::string::npos,
      false);
  EXPECT_NE(text.find("full round trip"), std::string::npos) << text;
}

TEST(ReportTable, BandwidthColumnsWithGigabitsAndPeer) {
  Row r = bandwidthRow(65536, 12000.0, 183105.5);
  r.peerMegabytesPerSec = 11990.0;
  ReportOptions options;
  options.gigabits = true;
  std::string text = run("table", bandwidthRun(), {r}, options);
  std::string header, row;
  for (const auto& line : lines(text)) {
    if (line.find("BW[MB/s]") != std::string::npos) header = line;
    if (!line.empty() && line.find('#') == std::string::npos) row = line;
  }
  std::istringstream hs(header), rs(row);
  std::vector<std::string> labels, values;
  for (std::string w; hs >> w;)
    labels.push_back(w);
  for (std::string w; rs >> w;)
    values.push_back(w);
  EXPECT_EQ(labels, (std::vector<std::string>{"#bytes", "#iterations", "BW[MB/s]", "BW[Gb/s]",
                                              "MsgRate[Mmsg/s]", "peer_BW[MB/s]"}))
      << text;
  EXPECT_EQ(values,
            (std::vector<std::string>{"65536", "100", "12000.00", "96.00", "0.183106", "11990.00"}))
      << text;
  EXPECT_NE(text.find("window 64"), std::string::npos) << text;

  std::string plain = run("table", bandwidthRun(), {bandwidthRow(1, 1.0, 1e6)});
  EXPECT_EQ(plain.find("Gb/s]"), std::string::npos);
  EXPECT_EQ(plain.find("peer_BW"), std::string::npos);
}

TEST(ReportTable, HistogramRowsGetAFootnote) {
  Row row = latencyRow(1024, 1.0);
  row.latency->exact = false;
  std::string text = run("table", latencyRun(), {latencyRow(2, 1.0), row});
  EXPECT_NE(text.find("0.78%"), std::string::npos) << text;
  EXPECT_NE(text.find("1024"), std::string::npos);
  EXPECT_EQ(run("table", latencyRun(), {latencyRow(2, 1.0)}).find("0.78%"), std::string::npos);
}

// ---------------------------------------------------------------- all text formats

// Issue 22: a failed run's text document ends with one `# error:` comment line (a script that
// reads the file sees why it stops), and nothing comes after it.
TEST(Report, TextFormatsEndWithOneErrorLineOnAbortAndIgnoreLateCalls) {
  for (const char* format : {"table", "perftest", "osu", "imb"}) {
    std::ostringstream out;
    auto reporter = makeReporter(format, out);
    reporter->begin(latencyRun());
    reporter->row(latencyRow(2, 1.06));
    std::string before = out.str();
    reporter->abort("failed:\nconnect refused");
    reporter->row(latencyRow(4, 1.06));
    reporter->end();
    EXPECT_EQ(out.str(), before + "# error: failed: connect refused\n") << format;
  }
  // Before begin (connect refused): the error line alone.
  std::ostringstream early;
  makeReporter("table", early)->abort("connect: Connection refused");
  EXPECT_EQ(early.str(), "# error: connect: Connection refused\n");
}

TEST(Report, RowsAreWrittenAsTheyCome) {
  for (const std::string& format : formatNames()) {
    std::ostringstream out;
    auto reporter = makeReporter(format, out);
    reporter->begin(latencyRun());
    reporter->row(latencyRow(123457, 1.06));
    EXPECT_NE(out.str().find("123457"), std::string::npos) << format << " buffers rows";
    reporter->end();
  }
}

}  // namespace
}  // namespace rdmabench::report

namespace rdmabench::report {
namespace {

// Issue 22 item 11: an A/B run whose variants all failed names each variant's error under a
// title that still says what was compared (it printed "A/B:  ,"); an interrupted A/B document
// carries the error (JSON "error", table `# error:`).
TEST(AbReport, AllFailedNamesEachErrorAndInterruptedCarriesTheError) {
  std::vector<RunCapture> runs(2);
  runs[0].label = "ofi:tcp;ofi_rxm";
  runs[1].label = "ofi:nosuch";
  for (auto& r : runs) {
    r.info.test = "lat";
    r.info.op = "send";
  }
  runs[0].error = "connect: Connection refused";
  runs[1].error = "fi_getinfo(nosuch): No data available";
  std::ostringstream table;
  printAb(table, "table", runs);
  EXPECT_NE(table.str().find("A/B: lat send,"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("# ofi:tcp;ofi_rxm: FAILED: connect: Connection refused"),
            std::string::npos)
      << table.str();
  EXPECT_NE(table.str().find("# ofi:nosuch: FAILED: fi_getinfo(nosuch)"), std::string::npos);

  std::ostringstream json, text;
  runs[1].error.clear();
  printAb(json, "json", runs, "interrupted (SIGINT)");
  nlohmann::json doc = nlohmann::json::parse(json.str());
  EXPECT_EQ(doc["error"], "interrupted (SIGINT)");
  EXPECT_EQ(doc["variants"][0]["error"], "connect: Connection refused");
  printAb(text, "table", runs, "interrupted (SIGINT)");
  EXPECT_EQ(text.str().substr(text.str().rfind("# error:")), "# error: interrupted (SIGINT)\n");
}

}  // namespace
}  // namespace rdmabench::report

namespace rdmabench::report {
namespace {

// Issue 22 items 2 and 10: a row timed over too short an interval, or whose count --max-time
// cut, says so in the row: JSON "flags", CSV "flags", a last table cell and a note.
TEST(Report, RowFlagsInJsonCsvAndTable) {
  Row r = latencyRow(8, 1.06);
  r.seconds = 0.0004;
  r.flags = {"short", "capped"};
  std::ostringstream json, csv, table;
  for (auto [format, out] : {std::pair<const char*, std::ostringstream*>{"json", &json},
                             {"csv", &csv},
                             {"table", &table}}) {
    auto rep = makeReporter(format, *out);
    rep->begin(latencyRun());
    rep->row(r);
    rep->row(latencyRow(16, 1.07));
    rep->end();
  }
  nlohmann::json doc = nlohmann::json::parse(json.str());
  EXPECT_EQ(doc["rows"][0]["flags"], nlohmann::json({"short", "capped"}));
  EXPECT_FALSE(doc["rows"][1].contains("flags"));
  EXPECT_NE(csv.str().find(",flags,error\n"), std::string::npos) << csv.str();
  EXPECT_NE(csv.str().find(",short;capped,\n"), std::string::npos) << csv.str();
  EXPECT_NE(table.str().find(" [short,capped]\n"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("# note: [short] = timed over less than 1 ms"), std::string::npos);
  EXPECT_NE(table.str().find("# note: [capped] = fewer iterations"), std::string::npos);
}

}  // namespace
}  // namespace rdmabench::report
