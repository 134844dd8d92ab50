// Unit tests of lib/compare (parsers, format detection, alignment, difference arithmetic,
// outputs, gnuplot script). Fixtures: tests/fixtures (hand-written). The progress line of
// docs/compare.md is tested in compare_progress_test.cc.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "compare/compare.h"
#include "compare/parse.h"
#include "compare/plot.h"
#include "compare/text_util.h"
#include "fixtures.h"
#include "report/report.h"

namespace rdmabench::compare {
namespace {

namespace fs = std::filesystem;

fs::path fixtureDir() {
  return fs::path(rdmabench::testing::fixturesDir());
}

std::string fixture(const std::string& name) {
  std::ifstream in(fixtureDir() / name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<Series> parseFixture(const std::string& name) {
  return parseText(fixture(name), name);
}

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

TEST(CompareMath, DifferenceAndMpiOverhead) {
  Cell d = difference(Metric::kLatency, false, false, 16.07, 11.01);
  EXPECT_NEAR(*d.absolute, 5.06, 1e-9);
  EXPECT_NEAR(*d.percent, 5.06 / 11.01 * 100, 1e-9);
  // Latency overhead: MPI - fabric, whichever is the baseline.
  Cell m1 = difference(Metric::kLatency, true, true, 12.0, 10.0);
  Cell m2 = difference(Metric::kLatency, true, false, 10.0, 12.0);
  EXPECT_DOUBLE_EQ(*m1.absolute, 2.0);
  EXPECT_DOUBLE_EQ(*m2.absolute, 2.0);
  EXPECT_DOUBLE_EQ(*m1.percent, 20.0);
  EXPECT_DOUBLE_EQ(*m2.percent, 20.0);
  // Bandwidth: MB/s lost = fabric - MPI, % of fabric.
  Cell b = difference(Metric::kBandwidth, true, true, 900.0, 1000.0);
  EXPECT_DOUBLE_EQ(*b.absolute, 100.0);
  EXPECT_DOUBLE_EQ(*b.percent, 10.0);
  Cell z = difference(Metric::kBandwidth, false, false, 5.0, 0.0);
  EXPECT_FALSE(z.percent);
  EXPECT_FALSE(z.ratio);
  // The ratio is always [of] / [to]: a SHARP run at 2 us against a tree at 5 us gives 0.4.
  EXPECT_NEAR(*d.ratio, 16.07 / 11.01, 1e-12);
  EXPECT_DOUBLE_EQ(*difference(Metric::kLatency, false, false, 2.0, 5.0).ratio, 0.4);
  EXPECT_DOUBLE_EQ(*m2.ratio, 10.0 / 12.0);
  EXPECT_DOUBLE_EQ(*b.ratio, 0.9);
}

Series makeSeries(const std::string& label, Source source, Metric metric, const std::string& test,
                  const std::vector<std::pair<uint64_t, double>>& points) {
  Series s;
  s.label = s.path = label;
  s.source = source;
  s.metric = metric;
  s.test = test;
  for (auto [b, v] : points)
    s.points.push_back(Point{b, v, {}, {}, {}});
  return s;
}

TEST(CompareAlign, MpiOverheadAndSizesOnlyInOneInput) {
  auto osu = makeSeries("osu", Source::kOsu, Metric::kLatency, "latency",
                        {{1, 11.0}, {2, 12.0}, {4, 15.0}});
  auto rb = makeSeries("rb", Source::kRdmabench, Metric::kLatency, "latency",
                       {{0, 9.0}, {1, 10.0}, {2, 10.0}});
  Comparison c = compareSeries({{osu}, {rb}}, {1, ""});
  ASSERT_EQ(c.groups.size(), 1u);
  const Group& g = c.groups[0];
  EXPECT_EQ(g.baseline, 1u);
  ASSERT_EQ(g.differences.size(), 1u);
  EXPECT_TRUE(g.differences[0].mpiOverhead);
  EXPECT_EQ(g.differences[0].label, "MPI overhead");
  ASSERT_EQ(g.rows.size(), 4u);  // 0, 1, 2, 4: union
  EXPECT_EQ(g.rows[0].bytes, 0u);
  EXPECT_FALSE(g.rows[0].values[0]);
  EXPECT_FALSE(g.rows[0].complete());
  EXPECT_DOUBLE_EQ(*g.rows[1].cells[0].absolute, 1.0);
  EXPECT_DOUBLE_EQ(*g.rows[1].cells[0].percent, 10.0);
  EXPECT_DOUBLE_EQ(*g.rows[2].cells[0].absolute, 2.0);
  EXPECT_FALSE(g.rows[3].cells[0].absolute);
  EXPECT_EQ(g.rows[3].bytes, 4u);

  std::ostringstream table;
  writeComparison(c, "table", table);
  EXPECT_NE(table.str().find("MPI_overhead[1]us"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("only in [1]"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("only in [2]"), std::string::npos) << table.str();

  std::ostringstream js;
  writeComparison(c, "json", js);
  auto doc = nlohmann::json::parse(js.str());
  EXPECT_EQ(doc["groups"][0]["differences"][0]["label"], "MPI overhead");
  EXPECT_EQ(doc["groups"][0]["rows"][1]["bytes"], 1);
  EXPECT_DOUBLE_EQ(doc["groups"][0]["rows"][1]["differences"][0]["absolute"].get<double>(), 1.0);
  EXPECT_TRUE(doc["groups"][0]["rows"][0]["values"][0].is_null());
  EXPECT_EQ(doc["groups"][0]["rows"][0]["only_in"], nlohmann::json::array({1}));

  std::ostringstream csv;
  writeComparison(c, "csv", csv);
  std::string line;
  size_t lines = 0;
  std::istringstream in(csv.str());
  while (std::getline(in, line))
    ++lines;
  EXPECT_EQ(lines, 1u + 4u * 2u);  // header + (sizes x inputs)
  EXPECT_THROW(writeComparison(c, "osu", csv), UsageError);
}

TEST(CompareAlign, BandwidthLostAndPlainDifference) {
  auto osu = makeSeries("osu", Source::kOsu, Metric::kBandwidth, "bandwidth", {{1024, 900.0}});
  auto rb = makeSeries("rb", Source::kRdmabench, Metric::kBandwidth, "bandwidth", {{1024, 1000.0}});
  auto pt = makeSeries("pt", Source::kPerftest, Metric::kBandwidth, "bandwidth", {{1024, 1100.0}});
  Comparison c = compareSeries({{rb}, {osu}, {pt}});
  const Group& g = c.groups[0];
  ASSERT_EQ(g.differences.size(), 2u);
  EXPECT_EQ(g.differences[0].unit, "MB/s lost");
  EXPECT_DOUBLE_EQ(*g.rows[0].cells[0].absolute, 100.0);
  EXPECT_DOUBLE_EQ(*g.rows[0].cells[0].percent, 10.0);
  EXPECT_FALSE(g.differences[1].mpiOverhead);
  EXPECT_DOUBLE_EQ(*g.rows[0].cells[1].absolute, 100.0);  // 1100 - 1000
}

TEST(CompareAlign, RatioInEveryFormat) {
  Comparison c = compareSeries({{makeSeries("tree.json", Source::kRdmabench, Metric::kCollective,
                                            "allreduce", {{8, 5.0}, {16, 6.0}})},
                                {makeSeries("sharp.json", Source::kRdmabench, Metric::kCollective,
                                            "allreduce", {{8, 2.0}, {16, 3.0}})}});
  std::ostringstream table, js, csv;
  writeComparison(c, "table", table);
  EXPECT_NE(table.str().find("# ratio [2]: [2] / [1]"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("ratio[2]"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("-60.00     0.400"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("-50.00     0.500"), std::string::npos) << table.str();
  writeComparison(c, "json", js);
  auto doc = nlohmann::json::parse(js.str());
  EXPECT_DOUBLE_EQ(doc["groups"][0]["rows"][0]["differences"][0]["ratio"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(doc["groups"][0]["rows"][1]["differences"][0]["ratio"].get<double>(), 0.5);
  writeComparison(c, "csv", csv);
  EXPECT_NE(csv.str().find("diff_percent,diff_ratio,note\n"), std::string::npos) << csv.str();
  EXPECT_NE(csv.str().find(",-60,0.4,"), std::string::npos) << csv.str();
}

TEST(CompareAlign, FixturesVerbsVsTcp) {
  Comparison c = compareSeries(
      {parseFixture("osu_latency_verbs_rxm.txt"), parseFixture("osu_latency_tcp_rxm.txt")});
  const Group& g = c.groups[0];
  EXPECT_EQ(g.rows.size(), 23u);
  EXPECT_FALSE(g.differences[0].mpiOverhead);  // both MPI: a plain difference
  EXPECT_NEAR(*g.rows[0].cells[0].absolute, 16.07 - 11.01, 1e-9);
}

TEST(CompareAlign, ImbAgainstOsuCollectives) {
  // IMB ran Allreduce at 2 and 4 processes, OSU prints no count: compare refuses to guess.
  EXPECT_THROW(compareSeries({parseFixture("imb_pingpong_allreduce_barrier.txt"),
                              parseFixture("osu_allreduce.txt"), parseFixture("osu_barrier.txt")}),
               UsageError);
  CompareOptions np4;
  np4.np = 4;
  Comparison c = compareSeries({parseFixture("imb_pingpong_allreduce_barrier.txt"),
                                parseFixture("osu_allreduce.txt"), parseFixture("osu_barrier.txt")},
                               np4);
  ASSERT_EQ(c.groups.size(), 2u);
  EXPECT_EQ(c.groups[0].test, "allreduce");
  EXPECT_EQ(c.groups[0].inputs.size(), 2u);  // IMB np4, OSU
  EXPECT_EQ(c.groups[0].inputs[0].processes, 4);
  EXPECT_EQ(c.groups[1].test, "barrier");
  EXPECT_FALSE(c.groups[1].sized);
  EXPECT_NEAR(*c.groups[1].rows[0].cells[0].absolute, 0.0, 1e-9);  // 4.17 vs 4.17
  bool noted = false;
  for (const auto& n : c.notes)
    noted = noted || n.find("latency has no counterpart") != n.npos;
  EXPECT_TRUE(noted);
  CompareOptions onlyAllreduce;
  onlyAllreduce.test = "allreduce";
  onlyAllreduce.section = 2;  // the np 2 table
  Comparison only = compareSeries(
      {parseFixture("imb_pingpong_allreduce_barrier.txt"), parseFixture("osu_allreduce.txt")},
      onlyAllreduce);
  EXPECT_EQ(only.groups[0].inputs[0].processes, 2);
  EXPECT_EQ(only.groups.size(), 1u);
}

TEST(CompareAlign, MismatchesAreClearErrors) {
  auto lat = makeSeries("a.txt", Source::kOsu, Metric::kLatency, "latency", {{1, 1.0}});
  auto bw = makeSeries("b.txt", Source::kOsu, Metric::kBandwidth, "bandwidth", {{1, 1.0}});
  try {
    compareSeries({{lat}, {bw}});
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("latency cannot be compared with bandwidth"),
              std::string::npos)
        << e.what();
  }
  auto far = makeSeries("c.txt", Source::kRdmabench, Metric::kLatency, "latency", {{1024, 1.0}});
  try {
    compareSeries({{lat}, {far}});
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no message size in common"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("c.txt has 1024 B"), std::string::npos) << e.what();
  }
  EXPECT_THROW(compareSeries({{lat}}), UsageError);
  EXPECT_THROW(compareSeries({{lat}, {lat}}, {0, "allreduce"}), UsageError);
}

TEST(ComparePlot, ScriptShape) {
  auto a = parseFixture("osu_latency_verbs_rxm.txt");
  auto b = parseFixture("osu_bw_verbs_rxm.txt");
  auto bar = parseFixture("osu_barrier.txt");
  PlotOptions o;
  o.output = "out.svg";
  PlotScript s = gnuplotScript({a[0], b[0], bar[0]}, o);
  EXPECT_EQ(s.panels, 2);
  EXPECT_NE(s.text.find("set terminal svg size 800,600"), std::string::npos);
  EXPECT_NE(s.text.find("set multiplot layout 2,1"), std::string::npos);
  EXPECT_NE(s.text.find("4194304 1315.29"), std::string::npos);
  EXPECT_NE(s.text.find("set logscale y 10"), std::string::npos);
  EXPECT_EQ(s.skipped.size(), 1u);  // the barrier
  EXPECT_EQ(terminalFor("X.PNG"), "pngcairo");
  EXPECT_THROW(terminalFor("x.jpg"), UsageError);
  o.output = "it's.png";
  EXPECT_NE(gnuplotScript({a[0]}, o).text.find("set output 'it''s.png'"), std::string::npos);
  EXPECT_THROW(gnuplotScript({bar[0]}, o), UsageError);
}

TEST(ComparePlot, RendersPngOfTheRequestedSize) {
  if (findGnuplot().empty()) GTEST_SKIP() << "gnuplot not installed (Debian: gnuplot-nox)";
  fs::path out =
      fs::temp_directory_path() / ("rdmabench-plot-test-" + std::to_string(getpid()) + ".png");
  PlotOptions o;
  o.output = out.string();
  o.width = 640;
  o.height = 400;
  renderPlot(gnuplotScript(parseFixture("osu_latency_verbs_rxm.txt"), o), o);
  std::ifstream in(out, std::ios::binary);
  unsigned char h[24] = {};
  in.read(reinterpret_cast<char*>(h), sizeof h);
  ASSERT_EQ(in.gcount(), 24);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(h) + 1, 3), "PNG");
  auto be32 = [&](int at) {
    return (uint32_t{h[at]} << 24) | (uint32_t{h[at + 1]} << 16) | (uint32_t{h[at + 2]} << 8) |
           uint32_t{h[at + 3]};
  };
  EXPECT_EQ(be32(16), 640u);
  EXPECT_EQ(be32(20), 400u);
  fs::remove(out);
}

TEST(ComparePlot, MissingGnuplotIsOneLineError) {
  setenv("RDMABENCH_GNUPLOT", "/nonexistent/gnuplot", 1);
  PlotOptions o;
  o.output = "/tmp/never.png";
  try {
    renderPlot(gnuplotScript(parseFixture("osu_latency_verbs_rxm.txt"), o), o);
    unsetenv("RDMABENCH_GNUPLOT");
    FAIL() << "no throw";
  } catch (const Error& e) {
    unsetenv("RDMABENCH_GNUPLOT");
    std::string m = e.what();
    EXPECT_NE(m.find("gnuplot not found"), std::string::npos) << m;
    EXPECT_NE(m.find("gnuplot-nox"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace rdmabench::compare
