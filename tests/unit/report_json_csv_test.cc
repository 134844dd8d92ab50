// The machine-readable reporters: json (a document that parses back field by field, valid
// after an abort) and csv (RFC 4180, one column count, quoting).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "report/report.h"
#include "report_fixtures.h"

namespace rdmabench::report {
namespace {

using namespace test_util;

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

// A schema member is always there: "descheduled" is null for a row whose loop kept its CPU
// and the counts for a flagged one (docs/metrics.md, "Descheduling").
TEST(ReportJson, DescheduledIsInEveryRowNullUnlessFlagged) {
  Row flagged = bandwidthRow(64, 10.0, 1e5);
  flagged.descheduled = {{"involuntary_switches", 3}, {"steal_us", 0.0}};
  Row lat = latencyRow(8, 1.0);
  std::string text = run("json", bandwidthRun(), {bandwidthRow(1, 2.0, 2e6), flagged});
  nlohmann::json doc = nlohmann::json::parse(text);
  ASSERT_TRUE(doc["rows"][0].contains("descheduled"));
  EXPECT_TRUE(doc["rows"][0]["descheduled"].is_null());
  EXPECT_EQ(doc["rows"][1]["descheduled"]["involuntary_switches"], 3);
  doc = nlohmann::json::parse(run("json", latencyRun(), {lat}));
  ASSERT_TRUE(doc["rows"][0].contains("descheduled"));
  EXPECT_TRUE(doc["rows"][0]["descheduled"].is_null());
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

}  // namespace
}  // namespace rdmabench::report
