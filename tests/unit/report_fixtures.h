#pragma once
// Shared by the report tests (report_*_test.cc): a lat and a bw run header, typical rows, a run
// through one reporter, and readers of the text it wrote (lines, RFC 4180 records).

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"

namespace rdmabench::report::test_util {

inline RunInfo latencyRun() {
  RunInfo info;
  info.test = report::Test::kLat;
  info.transport = "socket";
  info.op = "send";
  info.localHost = "node-a";
  info.remoteHost = "node-b";
  transport::addFact(info.local.device.facts, "device", "lo");
  info.local.device.common.mtu = 65536;
  transport::addFact(info.remote.device.facts, "device", "lo");
  info.commandLine = "rdmabench lat --peer node-b -s 2";
  info.date = "2026-01-02T03:04:05Z";
  info.toolVersion = "0.1.0";
  return info;
}

inline RunInfo bandwidthRun(bool bidirectional = false) {
  RunInfo info = latencyRun();
  info.test = report::Test::kBw;
  info.window = 64;
  info.bidirectional = bidirectional;
  return info;
}

inline Row latencyRow(uint64_t bytes, double mean, uint64_t iterations = 1000) {
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

inline Row bandwidthRow(uint64_t bytes, double mbps, double msgs, uint64_t iterations = 100) {
  Row row;
  row.bytes = bytes;
  row.iterations = iterations;
  row.warmup = 10;
  row.seconds = 0.25;
  row.megabytesPerSec = mbps;
  row.messagesPerSec = msgs;
  return row;
}

inline std::string run(std::string_view format, const RunInfo& info, const std::vector<Row>& rows,
                       ReportOptions options = {}) {
  std::ostringstream out;
  auto reporter = makeReporter(format, out, options);
  reporter->begin(info);
  for (const Row& r : rows)
    reporter->row(r);
  reporter->end();
  return out.str();
}

inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    v.push_back(l);
  return v;
}

inline bool hasLine(const std::string& text, const std::string& line) {
  for (const std::string& l : lines(text)) {
    if (l == line) return true;
  }
  return false;
}

// Minimal RFC 4180 reader: records of fields, quoted fields may hold commas, quotes, newlines.
// Minimal RFC 4180 reader: records of fields, quoted fields may hold commas, quotes, newlines.
inline std::vector<std::vector<std::string>> parseCsv(const std::string& text) {
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

}  // namespace rdmabench::report::test_util
