// Unit tests of what `rdmabench compare` refuses to guess (issue 13 §1, issue 12): IMB failed
// samples and defects, launcher prefixes, perftest cycles, OSU nan/inf, hexadecimal numbers,
// skipped-line reports, streaming limits and deep JSON. Fixtures: tests/fixtures (hand-written).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "compare/compare.h"
#include "compare/parse.h"
#include "compare/read_detail.h"
#include "compare/text_util.h"
#include "report/report.h"

#include "fixtures.h"

namespace rdmabench::compare {
namespace {

namespace fs = std::filesystem;

using rdmabench::testing::fixture;  // tests/unit/fixtures.h

ParsedInput readFixture(const std::string& name, const ReadOptions& o = {}) {
  return readText(fixture(name), name, o);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines)
    s += l + "\n";
  return s;
}

std::string tableOf(const Comparison& c) {
  std::ostringstream out;
  writeComparison(c, "table", out);
  return out.str();
}

TEST(CompareNumbers, OnlyDecimalNumbers) {
  EXPECT_FALSE(detail::parseNumber("0x10"));
  EXPECT_FALSE(detail::parseNumber("0X1p4"));
  EXPECT_FALSE(detail::parseNumber("nan"));
  EXPECT_FALSE(detail::parseNumber("-nan"));
  EXPECT_FALSE(detail::parseNumber("inf"));
  EXPECT_FALSE(detail::parseNumber("1e"));
  EXPECT_FALSE(detail::parseNumber("."));
  EXPECT_FALSE(detail::parseNumber("2.148GB"));
  EXPECT_FALSE(detail::parseNumber("1e999"));
  EXPECT_DOUBLE_EQ(*detail::parseNumber("1e3"), 1000);
  EXPECT_DOUBLE_EQ(*detail::parseNumber("-.5"), -0.5);
  EXPECT_DOUBLE_EQ(*detail::parseNumber("+2.25E-1"), 0.225);
}

// The issue's Allreduce table: the out-of-mem row is a failure, never t_avg = 2.148 us.
TEST(CompareImb, FailedSamplesAreFailuresNotValues) {
  ParsedInput in = readFixture("imb_allreduce_failed.txt");
  ASSERT_EQ(in.series.size(), 1u);
  const Series& s = in.series[0];
  EXPECT_EQ(s.test, "allreduce");
  ASSERT_EQ(s.points.size(), 3u);
  for (const Point& p : s.points)
    EXPECT_LT(p.bytes, 2097152u) << "a failed size became a value: " << p.value;
  ASSERT_EQ(s.failures.size(), 2u);
  EXPECT_EQ(s.failures[0].bytes, 2097152u);
  EXPECT_EQ(s.failures[0].text, "failed in IMB: time-out");
  EXPECT_EQ(s.failures[1].bytes, 4194304u);
  EXPECT_EQ(s.failures[1].text, "failed in IMB: out-of-mem");
  EXPECT_EQ(in.report.failed, 2u);
  EXPECT_EQ(in.report.skipped, 0u);

  // Compared with a file that has 4 MiB: the row says failed, with the reason, and no difference.
  const std::string other =
      "# Benchmarking Allreduce\n# #processes = 4\n"
      "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
      "         1024         1000         5.00         5.50         5.20\n"
      "      4194304           10      2000.00      2100.00      2050.00\n";
  Comparison c = compareSeries({in.series, parseText(other, "ok.txt")});
  ASSERT_EQ(c.groups.size(), 1u);
  const auto& rows = c.groups[0].rows;
  const ComparedRow& big = rows.back();
  EXPECT_EQ(big.bytes, 4194304u);
  EXPECT_FALSE(big.values[0]);
  EXPECT_EQ(big.failed[0], "failed in IMB: out-of-mem");
  EXPECT_FALSE(big.cells[0].absolute);
  std::string table = tableOf(c);
  EXPECT_NE(table.find("failed"), std::string::npos) << table;
  EXPECT_NE(table.find("[1] failed in IMB: out-of-mem"), std::string::npos) << table;
  EXPECT_EQ(table.find("2.15"), std::string::npos) << table;
  EXPECT_EQ(table.find("-99.9"), std::string::npos) << table;
  std::ostringstream js;
  writeComparison(c, "json", js);
  EXPECT_NE(js.str().find("\"reason\": \"failed in IMB: out-of-mem\""), std::string::npos)
      << js.str();
  std::ostringstream csv;
  writeComparison(c, "csv", csv);
  EXPECT_NE(csv.str().find(",note\n"), std::string::npos);
  EXPECT_NE(csv.str().find("failed in IMB: time-out"), std::string::npos) << csv.str();
}

TEST(CompareImb, DefectsAreWarningsInTheRow) {
  ParsedInput in = readFixture("imb_allreduce_check.txt");
  ASSERT_EQ(in.series.size(), 1u);
  const Series& s = in.series[0];
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_DOUBLE_EQ(s.points[2].value, 5.31);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0].bytes, 1024u);
  EXPECT_NE(s.warnings[0].text.find("3 defects"), std::string::npos);
  Comparison c = compareSeries({in.series, in.series});
  std::string table = tableOf(c);
  EXPECT_NE(table.find("[1] warning: IMB reported 3 defects"), std::string::npos) << table;
}

TEST(CompareOsu, NanInfAndHexRowsAreNotNumbers) {
  ParsedInput in = readFixture("osu_bw_nan.txt");
  ASSERT_EQ(in.series.size(), 1u);
  const Series& s = in.series[0];
  std::vector<uint64_t> sizes;
  for (const Point& p : s.points)
    sizes.push_back(p.bytes);
  EXPECT_EQ(sizes, (std::vector<uint64_t>{1, 8, 16}));  // "0x10" is not 16: 16 is 32.00
  EXPECT_DOUBLE_EQ(s.points[2].value, 32.0);
  ASSERT_EQ(s.failures.size(), 2u);
  EXPECT_EQ(s.failures[0].bytes, 2u);
  EXPECT_NE(s.failures[0].text.find("`-nan`"), std::string::npos) << s.failures[0].text;
  EXPECT_EQ(s.failures[1].bytes, 4u);
  EXPECT_EQ(in.report.skipped, 1u);  // the 0x10 line
  ASSERT_EQ(in.report.skippedRanges.size(), 1u);
  EXPECT_EQ(in.report.skippedRanges[0].first, 9u);
  std::string notes = joined(readNotes(in, "osu_bw_nan.txt", false));
  EXPECT_NE(notes.find("1 line(s) not understood and skipped (lines 9)"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("2 size(s) reported as failed"), std::string::npos) << notes;
  std::string verbose = joined(readNotes(in, "osu_bw_nan.txt", true));
  EXPECT_NE(verbose.find("osu_bw_nan.txt:9: not understood (no message size): 0x10"),
            std::string::npos)
      << verbose;
}

TEST(CompareSkipped, LinesNotUnderstoodAreCountedWithTheirNumbers) {
  const std::string text =
      "# OSU MPI Latency Test v7.5\n# Size  Avg Latency(us)\n1  2.0\n"
      "[node1:123] warning: something\nmore noise\n2  2.5\n4  oops\n";
  ParsedInput in = readText(text, "x.txt");
  EXPECT_EQ(in.report.skipped, 2u);
  ASSERT_EQ(in.report.skippedRanges.size(), 1u);
  EXPECT_EQ(in.report.skippedRanges[0], (std::pair<uint64_t, uint64_t>{4, 5}));
  ASSERT_EQ(in.series[0].failures.size(), 1u);  // "4  oops"
  EXPECT_EQ(in.series[0].points.size(), 2u);
}

TEST(CompareSkipped, RepeatedSizesKeepTheFirstAndAreReported) {
  const std::string text =
      "# OSU MPI Latency Test v7.5\n# Size  Avg Latency(us)\n1  2.0\n1  9.0\n2  2.5\n";
  ParsedInput in = readText(text, "x.txt");
  ASSERT_EQ(in.series[0].points.size(), 2u);
  EXPECT_DOUBLE_EQ(in.series[0].points[0].value, 2.0);
  EXPECT_EQ(in.report.repeated, 1u);
  EXPECT_NE(joined(readNotes(in, "x.txt", false)).find("1 row(s) repeat a size"),
            std::string::npos);
}

void expectOsuLatency(const ParsedInput& in, const std::string& launcher) {
  ASSERT_EQ(in.series.size(), 1u);
  const Series& s = in.series[0];
  EXPECT_EQ(s.test, "latency");
  EXPECT_EQ(s.source, Source::kOsu);
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_DOUBLE_EQ(s.points[0].value, 11.01);
  EXPECT_DOUBLE_EQ(s.points[2].value, 11.00);
  EXPECT_EQ(in.report.launcher, launcher);
  EXPECT_EQ(in.report.skipped, 0u);
}

TEST(CompareLauncher, OpenMpiTagOutput) {
  ParsedInput in = readFixture("osu_latency_tag_output.txt");
  expectOsuLatency(in, "mpirun --tag-output");
  EXPECT_EQ(in.report.launcherExample, "[1,0]<stdout>:");
  EXPECT_EQ(in.report.ignored, 3u);  // rank 1 stderr, rank 1 stdout, rank 0 stderr
  std::string notes = joined(readNotes(in, "t.txt", true));
  EXPECT_NE(notes.find("3 line(s) of other ranks, stderr or the launcher ignored"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("t.txt:6: rank 1:"), std::string::npos) << notes;
}

TEST(CompareLauncher, TimestampOutput) {
  ParsedInput in = readFixture("osu_latency_timestamp_output.txt");
  expectOsuLatency(in, "mpirun --timestamp-output");
  EXPECT_EQ(in.report.ignored, 1u);
}

TEST(CompareLauncher, SrunLabel) {
  ParsedInput in = readFixture("osu_latency_srun_label.txt");
  expectOsuLatency(in, "srun --label");
  EXPECT_EQ(in.report.ignored, 2u);  // srun's own message, rank 1
}

TEST(CompareLauncher, RankBracketAndPrrteFormats) {
  auto m = detail::matchLauncher("[0] # OSU MPI Latency Test v7.5");
  EXPECT_EQ(m.kind, detail::Launcher::kRankBracket);
  EXPECT_EQ(*m.rank, 0u);
  m = detail::matchLauncher("[prterun-node1-4242@1,3]<stdout>: 1   2.0");
  EXPECT_EQ(m.kind, detail::Launcher::kOpenMpiTag);
  EXPECT_EQ(*m.rank, 3u);
  EXPECT_EQ(m.stream, "stdout");
  EXPECT_EQ(detail::matchLauncher("1                      11.01").kind, detail::Launcher::kNone);
  EXPECT_EQ(detail::matchLauncher("[node1:01234] warning").kind, detail::Launcher::kNone);
  EXPECT_EQ(detail::matchLauncher("# Size  Avg Latency(us)").kind, detail::Launcher::kNone);
  const std::string imb =
      "[0] # Benchmarking PingPong\n[0] # #processes = 2\n"
      "[0]        #bytes #repetitions      t[usec]   Mbytes/sec\n"
      "[0]             0         1000        11.20         0.00\n"
      "[1] noise\n";
  ParsedInput in = readText(imb, "imb.txt");
  ASSERT_EQ(in.series.size(), 1u);
  EXPECT_EQ(in.series[0].test, "latency");
  EXPECT_EQ(in.report.ignored, 1u);
}

TEST(CompareLauncher, UnknownPrefixIsNamedInTheError) {
  const std::string text =
      "<n01> # OSU MPI Latency Test v7.5\n<n01> # Size  Avg Latency(us)\n<n01> 1 2.0\n";
  try {
    readText(text, "odd.txt");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("odd.txt: unknown format"), std::string::npos) << what;
    EXPECT_NE(what.find("`<n01> `"), std::string::npos) << what;
    EXPECT_NE(what.find("OSU"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

TEST(ComparePerftest, CyclesAreNeverMicroseconds) {
  try {
    readFixture("perftest_send_lat_cycles.txt");
    FAIL() << "cycles read as microseconds";
  } catch (const UsageError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("perftest_send_lat_cycles.txt: perftest reported CPU cycles"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("--cpu-mhz"), std::string::npos) << what;
  }
  ReadOptions o;
  o.cpuMhz = 2600;
  ParsedInput in = readFixture("perftest_send_lat_cycles.txt", o);
  ASSERT_EQ(in.series.size(), 1u);
  ASSERT_EQ(in.series[0].points.size(), 1u);
  EXPECT_NEAR(in.series[0].points[0].value, 2620.67 / 2600, 1e-9);
  EXPECT_NEAR(*in.series[0].points[0].min, 1.0, 1e-9);
  EXPECT_NE(in.series[0].note.find("2600 MHz"), std::string::npos) << in.series[0].note;
  EXPECT_NE(in.series[0].note.find("3 sample line(s)"), std::string::npos) << in.series[0].note;
  EXPECT_EQ(in.report.skipped, 0u);
}

TEST(CompareLimits, InputLargerThanTheCapIsRefused) {
  ReadOptions o;
  o.maxBytes = 100;
  std::string text = "# OSU MPI Latency Test v7.5\n# Size  Avg Latency(us)\n";
  for (int i = 0; i < 20; ++i)
    text += std::to_string(1 << i) + "  2.0\n";
  try {
    readText(text, "big.txt", o);
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("big.txt: larger than the input limit of 100 bytes"),
              std::string::npos)
        << e.what();
  }
  o.maxBytes = 1 << 20;
  o.maxLineBytes = 64;
  ParsedInput in = readText(text + std::string(200, 'x') + "\n", "long.txt", o);
  EXPECT_EQ(in.report.skipped, 1u);
}

TEST(CompareJson, DeepNestingIsRefusedWithoutCrashing) {
  std::string deep = "{\"rows\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  try {
    readText(deep, "deep.json");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("deep.json: JSON nests deeper"), std::string::npos)
        << e.what();
  }
}

TEST(CompareJson, MalformedRowsAndNullsAreReported) {
  ParsedInput in = readText(
      R"({"run":{"test":"lat"},"rows":[
      {"bytes":1,"latency_us":{"mean":2.5}},
      {"bytes":2,"latency_us":{"mean":"fast"}},
      {"bytes":4,"latency_us":{"mean":null}},
      {"bytes":-8,"latency_us":{"mean":3}},
      {"bytes":16,"latency_us":{"mean":3.5}}]})",
      "rows.json");
  ASSERT_EQ(in.series.size(), 1u);
  const Series& s = in.series[0];
  ASSERT_EQ(s.points.size(), 2u);
  ASSERT_EQ(s.failures.size(), 1u);
  EXPECT_EQ(s.failures[0].bytes, 4u);
  EXPECT_EQ(in.report.skipped, 2u);
  EXPECT_EQ(in.report.skippedRanges[0], (std::pair<uint64_t, uint64_t>{2, 2}));
  EXPECT_NE(joined(readNotes(in, "rows.json", false)).find("2 row(s) not understood"),
            std::string::npos);
}

TEST(CompareJson, CompareOutputAndOtherDocumentsAreRefusedClearly) {
  EXPECT_THROW(readText(R"({"tool":"rdmabench","command":"compare","groups":[]})", "c.json"),
               UsageError);
  EXPECT_THROW(readText(R"({"transports":[]})", "info.json"), UsageError);
}

// The JSON rdmabench writes for each test kind, through its own reporter.
std::string reporterJson(const std::string& test, int rows) {
  std::ostringstream out;
  auto r = report::makeReporter("json", out);
  report::RunInfo info;
  info.test = report::testFromName(test).value();
  info.transport = "socket";
  r->begin(info);
  for (int i = 0; i < rows; ++i) {
    report::Row row;
    row.bytes = test == "barrier" ? 0 : 8u << i;
    row.iterations = 100;
    if (test == "ring") {
      for (int link = 0; link < 2; ++link) {
        report::RingLinkRow l;
        l.srcRank = link;
        l.dstRank = 1 - link;
        l.meanUs = 10.0 + link * 2 + i;
        l.minUs = l.medianUs = l.p99Us = l.meanUs;
        l.outlier = link == 1 && i == 0;
        row.link = l;
        r->row(row);
      }
      continue;
    }
    report::CollectiveRow c;
    c.ranks = 2;
    c.tMinUs = 4.0 + i;
    c.tAvgUs = 5.0 + i;
    c.tMaxUs = 6.0 + i;
    if (test == "allreduce") c.wrong = i == 1 ? 7 : 0;
    row.collective = c;
    r->row(row);
  }
  r->end();
  return out.str();
}

TEST(CompareJson, CollectiveAndRingJsonFromTheReporter) {
  auto ar = readText(reporterJson("allreduce", 3), "c2.json");
  ASSERT_EQ(ar.series.size(), 1u);
  EXPECT_EQ(ar.series[0].test, "allreduce");
  EXPECT_EQ(ar.series[0].metric, Metric::kCollective);
  ASSERT_EQ(ar.series[0].points.size(), 3u);
  EXPECT_DOUBLE_EQ(ar.series[0].points[1].value, 6.0);
  EXPECT_DOUBLE_EQ(*ar.series[0].points[1].min, 5.0);
  ASSERT_EQ(ar.series[0].warnings.size(), 1u);
  EXPECT_NE(ar.series[0].warnings[0].text.find("7 wrong"), std::string::npos);
  EXPECT_NO_THROW(compareSeries({ar.series, ar.series}));

  auto bar = readText(reporterJson("barrier", 1), "b.json");
  EXPECT_FALSE(bar.series[0].sized);
  EXPECT_EQ(bar.series[0].test, "barrier");
  Comparison withOsu = compareSeries({bar.series, parseText("# OSU MPI Barrier Latency Test v7.5\n"
                                                            "# Avg Latency(us)\n            4.17\n",
                                                            "osu_barrier.txt")});
  ASSERT_EQ(withOsu.groups.size(), 1u);
  ASSERT_TRUE(withOsu.groups[0].rows[0].cells[0].absolute);
  EXPECT_NEAR(*withOsu.groups[0].rows[0].cells[0].absolute, 4.17 - 5.0, 1e-9);

  auto ring = readText(reporterJson("ring", 2), "ring.json");
  ASSERT_EQ(ring.series.size(), 1u);
  EXPECT_EQ(ring.series[0].test, "ring");
  ASSERT_EQ(ring.series[0].points.size(), 2u);
  EXPECT_DOUBLE_EQ(ring.series[0].points[0].value, 11.0);  // mean of 10 and 12
  EXPECT_DOUBLE_EQ(*ring.series[0].points[0].max, 12.0);
  ASSERT_EQ(ring.series[0].warnings.size(), 1u);
  EXPECT_NO_THROW(compareSeries({ring.series, ring.series}));
}

}  // namespace
}  // namespace rdmabench::compare
