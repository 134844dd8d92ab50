// Unit tests of lib/compare's input side: text splitting, format detection, the parsers of every
// format and rdmabench's own outputs parsed back. Fixtures: tests/fixtures (hand-written).
// Alignment, difference arithmetic, outputs and the gnuplot script: compare_align_test.cc; the
// progress line of docs/compare.md: compare_progress_test.cc.

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "compare/compare.h"
#include "compare/parse.h"
#include "compare/text_util.h"
#include "compare_fixtures.h"
#include "report/report.h"

namespace rdmabench::compare {
namespace {

using test_util::fixture;
using test_util::parseFixture;

// CRLF line endings and trailing blanks/tabs on every line.
std::string windowsStyle(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n')
      out += " \t \r\n";
    else
      out += c;
  }
  return out;
}

void expectSamePoints(const Series& a, const Series& b) {
  ASSERT_EQ(a.points.size(), b.points.size());
  for (size_t i = 0; i < a.points.size(); ++i) {
    EXPECT_EQ(a.points[i].bytes, b.points[i].bytes);
    EXPECT_DOUBLE_EQ(a.points[i].value, b.points[i].value);
  }
}

TEST(CompareText, SplitLinesHandlesCrLfAndTrailingBlanks) {
  auto lines = detail::splitLines("a  \r\nb\t\rc\n\nd");
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], "a");
  EXPECT_EQ(lines[1], "b");
  EXPECT_EQ(lines[2], "c");
  EXPECT_EQ(lines[3], "");
  EXPECT_EQ(lines[4], "d");
  auto cols = detail::splitColumns("Size       Avg Latency(us)   P50 Tail Lat(us)\tX");
  ASSERT_EQ(cols.size(), 4u);
  EXPECT_EQ(cols[1], "Avg Latency(us)");
  EXPECT_EQ(cols[2], "P50 Tail Lat(us)");
  EXPECT_FALSE(detail::parseNumber("1.2.3"));
  EXPECT_FALSE(detail::parseNumber("Pass"));
  EXPECT_FALSE(detail::parseNumber("inf"));
  EXPECT_DOUBLE_EQ(*detail::parseNumber("1315.29"), 1315.29);
}

TEST(CompareDetect, EachFixtureFormat) {
  EXPECT_EQ(detectFormat(fixture("osu_latency_verbs_rxm.txt")), Format::kOsu);
  EXPECT_EQ(detectFormat(fixture("osu_barrier.txt")), Format::kOsu);
  EXPECT_EQ(detectFormat(fixture("osu5_latency.txt")), Format::kOsu);
  EXPECT_EQ(detectFormat(fixture("imb_pingpong_allreduce_barrier.txt")), Format::kImb);
  EXPECT_EQ(detectFormat(fixture("perftest_send_lat.txt")), Format::kPerftest);
  EXPECT_EQ(detectFormat(fixture("perftest_write_bw.txt")), Format::kPerftest);
  EXPECT_EQ(detectFormat(R"({"tool":"rdmabench","rows":[]})"), Format::kRdmabenchJson);
  EXPECT_EQ(detectFormat("hello\nworld\n"), Format::kUnknown);
  EXPECT_EQ(detectFormat(""), Format::kUnknown);
}

TEST(CompareParse, OsuLatency75) {
  auto s = parseFixture("osu_latency_verbs_rxm.txt");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].source, Source::kOsu);
  EXPECT_EQ(s[0].test, "latency");
  EXPECT_EQ(s[0].metric, Metric::kLatency);
  EXPECT_EQ(s[0].title, "OSU MPI Latency Test v7.5");
  ASSERT_EQ(s[0].points.size(), 23u);
  EXPECT_EQ(s[0].points.front().bytes, 1u);
  EXPECT_DOUBLE_EQ(s[0].points.front().value, 11.01);
  EXPECT_EQ(s[0].points.back().bytes, 4u << 20);
  EXPECT_DOUBLE_EQ(s[0].points.back().value, 1315.29);
  EXPECT_EQ(s[0].label, "osu_latency_verbs_rxm.txt");
}

TEST(CompareParse, OsuWindowsLineEndingsTrailingBlanksAndBanners) {
  auto plain = parseFixture("osu_latency_tcp_rxm.txt");
  std::string text = "Warning: an MPI banner before the table\n" +
                     fixture("osu_latency_tcp_rxm.txt") +
                     "[node1:12345] MPI_ABORT was not called\n";
  auto messy = parseText(windowsStyle(text), "tcp.txt");
  ASSERT_EQ(messy.size(), 1u);
  expectSamePoints(plain[0], messy[0]);
  EXPECT_DOUBLE_EQ(messy[0].points.front().value, 16.07);
}

TEST(CompareParse, OsuFullAndTailColumns) {
  auto s = parseFixture("osu_latency_full_z.txt");
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].points.size(), 8u);
  const Point& p = s[0].points[0];
  EXPECT_EQ(p.bytes, 1u);
  EXPECT_DOUBLE_EQ(p.value, 11.01);
  ASSERT_TRUE(p.min && p.max && p.iterations);
  EXPECT_NEAR(*p.min, 10.61, 1e-9);
  EXPECT_NEAR(*p.max, 20.11, 1e-9);
  EXPECT_EQ(*p.iterations, 10000u);
  EXPECT_EQ(s[0].column, "Avg Latency(us)");
}

TEST(CompareParse, Osu5Latency) {
  auto s = parseFixture("osu5_latency.txt");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].test, "latency");
  ASSERT_EQ(s[0].points.size(), 11u);
  EXPECT_EQ(s[0].points[0].bytes, 0u);
  EXPECT_DOUBLE_EQ(s[0].points[0].value, 10.95);
  EXPECT_EQ(s[0].column, "Latency (us)");
}

TEST(CompareParse, OsuBandwidthAllreduceBarrier) {
  auto bw = parseFixture("osu_bw_verbs_rxm.txt");
  ASSERT_EQ(bw.size(), 1u);
  EXPECT_EQ(bw[0].metric, Metric::kBandwidth);
  EXPECT_EQ(bw[0].test, "bandwidth");
  EXPECT_DOUBLE_EQ(bw[0].points.back().value, 3466.35);

  auto ar = parseFixture("osu_allreduce.txt");
  ASSERT_EQ(ar.size(), 1u);
  EXPECT_EQ(ar[0].test, "allreduce");
  EXPECT_EQ(ar[0].metric, Metric::kCollective);
  ASSERT_EQ(ar[0].points.size(), 11u);
  EXPECT_DOUBLE_EQ(ar[0].points[3].value, 3.20);
  EXPECT_DOUBLE_EQ(*ar[0].points[3].min, 3.01);
  EXPECT_DOUBLE_EQ(*ar[0].points[3].max, 3.41);
  EXPECT_EQ(*ar[0].points[3].iterations, 1000u);

  auto ba = parseText(windowsStyle(fixture("osu_barrier.txt")), "barrier.txt");
  ASSERT_EQ(ba.size(), 1u);
  EXPECT_EQ(ba[0].test, "barrier");
  EXPECT_FALSE(ba[0].sized);
  ASSERT_EQ(ba[0].points.size(), 1u);
  EXPECT_DOUBLE_EQ(ba[0].points[0].value, 4.17);
}

TEST(CompareParse, OsuConcatenatedLogsGiveSeveralSeries) {
  auto s =
      parseText(fixture("osu_latency_verbs_rxm.txt") + fixture("osu_bw_verbs_rxm.txt"), "both.txt");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].label, "both.txt:latency");
  EXPECT_EQ(s[1].label, "both.txt:bandwidth");
}

TEST(CompareParse, ImbSeveralBenchmarks) {
  for (const std::string& text : {fixture("imb_pingpong_allreduce_barrier.txt"),
                                  windowsStyle(fixture("imb_pingpong_allreduce_barrier.txt"))}) {
    auto s = parseText(text, "imb.txt");
    ASSERT_EQ(s.size(), 4u);
    EXPECT_EQ(s[0].test, "latency");
    EXPECT_EQ(s[0].source, Source::kImb);
    EXPECT_EQ(s[0].points.size(), 6u);
    EXPECT_DOUBLE_EQ(s[0].points[0].value, 11.20);
    EXPECT_EQ(s[1].test, "allreduce");
    EXPECT_EQ(s[1].processes, 2);
    EXPECT_EQ(s[1].label, "imb.txt:allreduce/np2");
    ASSERT_EQ(s[1].points.size(), 3u);
    EXPECT_EQ(s[1].points[1].bytes, 8u);
    EXPECT_DOUBLE_EQ(s[1].points[1].value, 5.06);  // t_avg
    EXPECT_DOUBLE_EQ(*s[1].points[1].min, 5.01);
    EXPECT_DOUBLE_EQ(*s[1].points[1].max, 5.12);
    EXPECT_EQ(s[1].points[2].bytes, 16u);
    EXPECT_EQ(s[2].processes, 4);
    EXPECT_DOUBLE_EQ(s[2].points[2].value, 8.35);
    EXPECT_EQ(s[3].test, "barrier");
    EXPECT_FALSE(s[3].sized);
    EXPECT_DOUBLE_EQ(s[3].points[0].value, 4.17);
  }
}

TEST(CompareParse, PerftestLatencyAndBandwidth) {
  auto lat = parseText(windowsStyle(fixture("perftest_send_lat.txt")), "lat.txt");
  ASSERT_EQ(lat.size(), 1u);
  EXPECT_EQ(lat[0].source, Source::kPerftest);
  EXPECT_EQ(lat[0].test, "latency");
  ASSERT_EQ(lat[0].points.size(), 5u);
  EXPECT_EQ(lat[0].points[0].bytes, 2u);
  EXPECT_DOUBLE_EQ(lat[0].points[0].value, 10.31);  // t_avg
  EXPECT_DOUBLE_EQ(*lat[0].points[0].min, 9.80);
  EXPECT_DOUBLE_EQ(*lat[0].points[0].max, 30.12);

  auto bw = parseFixture("perftest_write_bw.txt");
  ASSERT_EQ(bw.size(), 1u);
  EXPECT_EQ(bw[0].metric, Metric::kBandwidth);
  ASSERT_EQ(bw[0].points.size(), 5u);
  // perftest 6.06 "MB/sec" is MiB/s: converted to 10^6 B/s.
  EXPECT_NEAR(bw[0].points.back().value, 2941.80 * 1.048576, 1e-9);
  EXPECT_NE(bw[0].note.find("1.048576"), std::string::npos);
}

TEST(CompareParse, RdmabenchJsonLatencyBandwidthCollective) {
  auto lat = parseText(
      R"({"tool":"rdmabench","run":{"test":"lat","transport":"socket","op":"send"},"rows":[
      {"bytes":1,"iterations":10,"latency_us":{"min":1,"max":3,"mean":2.5}},
      {"bytes":2,"iterations":10,"latency_us":{"min":1,"max":3,"mean":2.75}}]})",
      "lat.json");
  ASSERT_EQ(lat.size(), 1u);
  EXPECT_EQ(lat[0].test, "latency");
  EXPECT_EQ(lat[0].title, "rdmabench lat socket send");
  EXPECT_DOUBLE_EQ(lat[0].points[1].value, 2.75);
  EXPECT_DOUBLE_EQ(*lat[0].points[1].max, 3);

  auto bibw = parseText(
      R"({"run":{"test":"bw","bidirectional":true},"rows":[{"bytes":64,"mb_per_s":100.5}]})",
      "bw.json");
  EXPECT_EQ(bibw[0].test, "bibw");
  EXPECT_DOUBLE_EQ(bibw[0].points[0].value, 100.5);

  auto ar = parseText(
      R"({"run":{"test":"allreduce"},"rows":[{"bytes":8,"t_avg_us":5.0,"t_min_us":4.0,"t_max_us":6.0},
      {"bytes":16,"time_us":{"avg":5.5,"min":4.5,"max":6.5}}]})",
      "ar.json");
  EXPECT_EQ(ar[0].test, "allreduce");
  EXPECT_EQ(ar[0].metric, Metric::kCollective);
  ASSERT_EQ(ar[0].points.size(), 2u);
  EXPECT_DOUBLE_EQ(*ar[0].points[0].min, 4.0);
  EXPECT_DOUBLE_EQ(ar[0].points[1].value, 5.5);

  auto bar = parseText(R"({"run":{"test":"barrier"},"rows":[{"iterations":100,"t_avg":3.3}]})",
                       "bar.json");
  EXPECT_FALSE(bar[0].sized);
  EXPECT_DOUBLE_EQ(bar[0].points[0].value, 3.3);
}

TEST(CompareParse, ErrorsNameTheFile) {
  try {
    parseText("{not json", "broken.json");
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.json: not valid JSON"), std::string::npos);
  }
  try {
    parseText("just text\n", "x.txt");
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("x.txt: unknown format"), std::string::npos);
  }
  EXPECT_THROW(parseText("# OSU MPI Latency Test v7.5\n# Size  Avg Latency(us)\n", "e.txt"),
               UsageError);
  EXPECT_THROW(parseFile("/nonexistent/file.txt"), UsageError);  // exit 2 (docs/compare.md)
}

// rdmabench's own pairs/congestion JSON and its CSV: refused saying what compare takes, not
// "without a rows array" or "unknown format" (newcomer trial).
TEST(CompareParse, OwnUncomparableOutputsSayWhy) {
  auto why = [](const std::string& text, const std::string& path) -> std::string {
    try {
      parseText(text, path);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "no throw";
  };
  const std::string pairs =
      "{\"tool\": \"rdmabench\", \"run\": {\"test\": \"pairs\"}, \"links\": []}";
  EXPECT_NE(why(pairs, "p.json")
                .find("p.json: pairs JSON is not comparable: compare takes lat, "
                      "bw and collective"),
            std::string::npos)
      << why(pairs, "p.json");
  const std::string csv =
      "test,transport,op,bidirectional,round_trip,window,bytes\nlat,socket,send,false,false,0,1\n";
  EXPECT_NE(why(csv, "l.csv").find("l.csv: rdmabench CSV output is not read back"),
            std::string::npos)
      << why(csv, "l.csv");
  EXPECT_NE(why("metric,unit,bytes,window\nx,us,8,1\n", "c.csv").find("CSV output"),
            std::string::npos);
}

// rdmabench's own text formats, parsed back: the numbers survive at the printed precision.
std::string rdmabenchOutput(const std::string& format, const std::string& test,
                            const std::vector<std::pair<uint64_t, double>>& rows) {
  std::ostringstream out;
  auto r = report::makeReporter(format, out);
  report::RunInfo info;
  info.test = report::testFromName(test).value();
  info.transport = "socket";
  info.op = "send";
  info.window = 64;
  r->begin(info);
  for (auto [bytes, v] : rows) {
    report::Row row;
    row.bytes = bytes;
    row.iterations = 1000;
    if (test == "lat") {
      stats::Summary s;
      s.count = 1000;
      s.min = v * 0.9;
      s.max = v * 2;
      s.median = v;
      s.mean = v;
      s.p99 = v * 1.5;
      s.p999 = v * 1.9;
      row.latency = s;
    } else {
      row.seconds = 1;
      row.megabytesPerSec = v;
      row.messagesPerSec = v * 1e6 / static_cast<double>(bytes);
    }
    r->row(row);
  }
  r->end();
  return out.str();
}

TEST(CompareRoundTrip, RdmabenchFormatsReproduceTheNumbers) {
  const std::vector<std::pair<uint64_t, double>> lat = {
      {1, 9.87}, {1024, 12.34}, {4u << 20, 987.65}};
  const std::vector<std::pair<uint64_t, double>> bw = {{1, 2.5}, {65536, 3456.78}};
  for (const char* format : {"osu", "imb", "perftest", "json"}) {
    SCOPED_TRACE(format);
    auto l = parseText(rdmabenchOutput(format, "lat", lat), "rb");
    ASSERT_EQ(l.size(), 1u);
    EXPECT_EQ(l[0].source, Source::kRdmabench);  // not MPI
    EXPECT_EQ(l[0].test, "latency");
    ASSERT_EQ(l[0].points.size(), lat.size());
    for (size_t i = 0; i < lat.size(); ++i) {
      EXPECT_EQ(l[0].points[i].bytes, lat[i].first);
      EXPECT_NEAR(l[0].points[i].value, lat[i].second, 0.005);
    }
    auto b = parseText(rdmabenchOutput(format, "bw", bw), "rb");
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0].source, Source::kRdmabench);
    EXPECT_EQ(b[0].metric, Metric::kBandwidth);
    ASSERT_EQ(b[0].points.size(), bw.size());
    for (size_t i = 0; i < bw.size(); ++i)
      EXPECT_NEAR(b[0].points[i].value, bw[i].second, 0.005);
  }
}

}  // namespace
}  // namespace rdmabench::compare
