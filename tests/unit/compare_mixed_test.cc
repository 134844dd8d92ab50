// `rdmabench compare` on logs that mix or hide what they are (issue 35, items 14-17): an IMB log
// appended after an OSU one, an OSU collective whose process count OSU does not print, tables
// whose OSU title is missing or contradicts their header, and the text graphs of `-G tty`.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "common/error.h"
#include "compare/compare.h"
#include "compare/parse.h"

#include "compare_fixtures.h"
#include "fixtures.h"

namespace rdmabench::compare {
namespace {

using rdmabench::testing::fixture;  // tests/unit/fixtures.h
using test_util::errorOf;           // tests/unit/compare_fixtures.h

std::string notesOf(const Comparison& c) {
  std::string all;
  for (const std::string& n : c.notes)
    all += n + "\n";
  return all;
}

// `text` without its OSU title line.
std::string withoutTitle(const std::string& text) {
  const size_t at = text.find("# OSU");
  return text.substr(0, at) + text.substr(text.find('\n', at) + 1);
}

// Item 14: `cat osu_latency.log imb.log` (real OSU 5.3.2 and IMB 2021.11 logs, appended).
TEST(CompareMixedLogs, ImbAppendedToOsuEndsTheOsuTable) {
  ParsedInput in = readText(fixture("osu532_latency_then_imb2021.txt"), "mixed.txt");
  ASSERT_EQ(in.series.size(), 3u);
  const Series& osu = in.series[0];
  EXPECT_EQ(osu.source, Source::kOsu);
  EXPECT_EQ(osu.test, "latency");
  EXPECT_EQ(osu.points.size(), 24u);  // 0 .. 4 MiB, nothing of IMB's
  EXPECT_DOUBLE_EQ(osu.points[0].value, 51239.59);
  EXPECT_EQ(in.series[1].source, Source::kImb);
  EXPECT_EQ(in.series[1].test, "latency");  // PingPong
  EXPECT_DOUBLE_EQ(in.series[1].points[0].value, 13892.26);
  EXPECT_EQ(in.series[2].test, "allreduce");
  EXPECT_EQ(in.series[2].processes, 2);
  EXPECT_EQ(in.report.repeated, 0u);
  // Two latency tables in one file: compare asks which one, it never merges them.
  std::vector<Series> other = parseText(fixture("osu532_latency_ob1_tcp.txt"), "osu.txt");
  EXPECT_NE(errorOf([&] {
              compareSeries({in.series, other});
            }).find("holds 2 latency tables and nothing says which to use"),
            std::string::npos);
}

TEST(CompareMixedLogs, OsuAppendedToImbStartsAnOsuTable) {
  ParsedInput in = readText(
      fixture("imb2021_np2_uniband_biband.txt") + fixture("osu532_bw_ob1_tcp.txt"), "mixed.txt");
  const Series& last = in.series.back();
  EXPECT_EQ(last.source, Source::kOsu);
  EXPECT_EQ(last.title, "OSU MPI Bandwidth Test v5.3.2");
  for (const Series& s : in.series) {
    if (s.source == Source::kImb) {
      EXPECT_NE(s.test, "latency");
    }
  }
}

// Item 15: osu_allreduce (4 processes, real 5.3.2) against a 2-rank rdmabench allreduce.
TEST(CompareOsuProcesses, UnstatedCountIsNamedAndNpAssertsIt) {
  std::vector<Series> osu = parseText(fixture("osu532_allreduce_np4.txt"), "osu.txt");
  std::vector<Series> rb = parseText(fixture("rdmabench_allreduce_np2.json"), "rb.json");
  ASSERT_FALSE(osu[0].processes.has_value());
  Comparison c = compareSeries({rb, osu});
  EXPECT_NE(notesOf(c).find("compare allreduce: osu.txt (OSU) does not print its process count, "
                            "and rb.json ran 2 ranks: the difference is MPI's only if OSU ran 2 "
                            "processes too; assert it with --np 2"),
            std::string::npos)
      << notesOf(c);
  CompareOptions np4;
  np4.np = 4;
  EXPECT_NE(errorOf([&] {
              compareSeries({rb, osu}, np4);
            }).find("compare allreduce: rb.json ran 2 processes, not 4 (--np)"),
            std::string::npos);
  CompareOptions np2;
  np2.np = 2;
  Comparison ok = compareSeries({rb, osu}, np2);
  EXPECT_NE(notesOf(ok).find("osu.txt: OSU does not print its process count; --np 2 says it ran 2"),
            std::string::npos)
      << notesOf(ok);
  EXPECT_EQ(ok.groups[0].inputs[1].processes, 2);
}

// Item 16: a title that contradicts the header is refused naming both; a missing title is a
// guess the notes name.
TEST(CompareOsuTitles, BandwidthUnderALatencyTitleIsRefused) {
  const std::string text =
      "# OSU MPI Latency Test v7.0.1\n" + withoutTitle(fixture("osu532_bw_ob1_tcp.txt"));
  EXPECT_EQ(errorOf([&] { parseText(text, "x.txt"); }),
            "x.txt:2: the OSU title `OSU MPI Latency Test v7.0.1` is a latency test but its "
            "column header `Size      Bandwidth (MB/s)` is bandwidth (MB/s): a table under "
            "another test's title? fix the title line (or cut the table out) and retry");
  const std::string latUnderBw =
      "# OSU MPI Bandwidth Test v7.0.1\n" + withoutTitle(fixture("osu532_latency_ob1_tcp.txt"));
  EXPECT_NE(errorOf([&] { parseText(latUnderBw, "y.txt"); }).find("is latency (us)"),
            std::string::npos);
}

TEST(CompareOsuTitles, UntitledTablesAreNamedGuesses) {
  std::vector<Series> coll =
      parseText(withoutTitle(fixture("osu532_allreduce_np4.txt")), "coll.txt");
  ASSERT_EQ(coll.size(), 1u);
  EXPECT_NE(coll[0].note.find("no OSU title above the header `Size       Avg Latency(us)"),
            std::string::npos)
      << coll[0].note;
  EXPECT_NE(coll[0].note.find("osu_allreduce and the other collectives print the same header"),
            std::string::npos);
  std::vector<Series> bw = parseText(withoutTitle(fixture("osu532_bw_ob1_tcp.txt")), "bw.txt");
  EXPECT_NE(bw[0].note.find("osu_bibw prints the same header; taken as osu_bw"), std::string::npos)
      << bw[0].note;
  // The guess reaches the comparison's notes.
  std::vector<Series> rb = parseText(fixture("rdmabench_bw_socket.json"), "rb.json");
  EXPECT_NE(notesOf(compareSeries({rb, bw})).find("bw.txt: no OSU title"), std::string::npos);
  // A titled table is no guess.
  EXPECT_TRUE(parseText(fixture("osu532_bw_ob1_tcp.txt"), "t.txt")[0].note.empty());
}

// Item 17: `osu_latency -G tty` draws a text graph after each row; only the rows are rows.
TEST(CompareOsuGraphs, TtyGraphLinesAreNotRows) {
  ParsedInput in = readText(fixture("osu701_latency_graph_tty.txt"), "g.txt");
  ASSERT_EQ(in.series.size(), 1u);
  const Series& s = in.series[0];
  ASSERT_EQ(s.points.size(), 4u);
  EXPECT_EQ(s.points[0].bytes, 1u);
  EXPECT_DOUBLE_EQ(s.points[0].value, 41.37);
  EXPECT_EQ(s.points[3].bytes, 8u);
  EXPECT_TRUE(s.failures.empty());
  EXPECT_EQ(in.report.repeated, 0u);
  EXPECT_GT(in.report.ignored, 60u);  // every frame, plot and axis line, counted
}

}  // namespace
}  // namespace rdmabench::compare
