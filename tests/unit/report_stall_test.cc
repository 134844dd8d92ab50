// A bw row whose time was mostly one pause (Row::stalled, common/stall.h) is reported as a
// descheduled one: JSON "stalled" in every row, the table's "stall" mark and a WARNING after
// the table, one "# WARNING" line after the osu and imb tables (their parsers still read them),
// a " WARNING : ..." line after perftest's closing line, "stall" in csv's flags cell.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare/parse.h"
#include "report/report.h"
#include "report_fixtures.h"

namespace rdmabench::report {
namespace {

using namespace test_util;

std::vector<Row> rowsWithStall() {
  std::vector<Row> rows = {bandwidthRow(8, 10.5, 1.3e6), bandwidthRow(65536, 12.25, 187),
                           bandwidthRow(1048576, 2100, 2003)};
  rows[1].stalled = {
      {"longest_gap_us", 204000.0}, {"share", 0.97}, {"typical_gap_us", 60.0}, {"intervals", 101}};
  return rows;
}

const std::string kWarning =
    "# WARNING: size 65536 B spent most of the timed interval in one pause (stall: one interval "
    "between completions took >= 25% of the row and >= 10x the others, e.g. a TCP retransmission "
    "timeout); the figure is not the link's rate: rerun the size\n";

TEST(ReportStall, JsonHasTheMemberInEveryRow) {
  const nlohmann::json doc = nlohmann::json::parse(run("json", bandwidthRun(), rowsWithStall()));
  ASSERT_EQ(doc["rows"].size(), 3u);
  EXPECT_TRUE(doc["rows"][0].contains("stalled"));
  EXPECT_TRUE(doc["rows"][0]["stalled"].is_null());
  EXPECT_EQ(doc["rows"][1]["stalled"]["intervals"], 101);
  EXPECT_DOUBLE_EQ(doc["rows"][1]["stalled"]["longest_gap_us"].get<double>(), 204000.0);
  EXPECT_TRUE(doc["rows"][2]["stalled"].is_null());
}

TEST(ReportStall, TableMarksTheRowAndWarnsAfterTheTable) {
  const std::string text = run("table", bandwidthRun(), rowsWithStall());
  const std::vector<std::string> ls = lines(text);
  int marked = 0;
  size_t markedAt = 0, warningAt = 0;
  for (size_t i = 0; i < ls.size(); ++i) {
    if (ls[i].size() > 6 && ls[i].substr(ls[i].size() - 6) == " stall") {
      ++marked;
      markedAt = i;
    }
    if (ls[i].rfind("# WARNING: rows marked 'stall'", 0) == 0) warningAt = i;
  }
  EXPECT_EQ(marked, 1) << text;
  EXPECT_EQ(ls[markedAt].find("65536"), ls[markedAt].find_first_not_of(' ')) << text;
  EXPECT_GT(warningAt, markedAt + 1) << text;  // after the last row, not mid-table
}

TEST(ReportStall, OsuAndImbWarnAfterTheTableAndStillParse) {
  for (const char* format : {"osu", "imb"}) {
    SCOPED_TRACE(format);
    const std::string text = run(format, bandwidthRun(), rowsWithStall());
    const std::string tail = std::string(format) == "imb" ? kWarning + "\n" : kWarning;
    ASSERT_GE(text.size(), tail.size());
    EXPECT_EQ(text.substr(text.size() - tail.size()), tail) << text;
    auto series = compare::parseText(text, std::string("stall.") + format);
    ASSERT_EQ(series.size(), 1u);
    EXPECT_EQ(series[0].points.size(), 3u);
  }
}

TEST(ReportStall, PerftestWarnsAfterItsClosingLineAndStillParses) {
  const std::string text = run("perftest", bandwidthRun(), rowsWithStall());
  const std::vector<std::string> ls = lines(text);
  ASSERT_GE(ls.size(), 2u);
  EXPECT_EQ(ls[ls.size() - 1].rfind(" WARNING         : size 65536 B spent most of the timed", 0),
            0u)
      << text;
  EXPECT_EQ(ls[ls.size() - 2].find_first_not_of('-'), std::string::npos) << text;
  auto series = compare::parseText(text, "stall.perftest");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].points.size(), 3u);
}

TEST(ReportStall, CsvHasTheMarkInTheFlagsCell) {
  const std::vector<std::string> ls = lines(run("csv", bandwidthRun(), rowsWithStall()));
  ASSERT_EQ(ls.size(), 4u);
  EXPECT_EQ(ls[2].substr(ls[2].size() - 7), ",stall,") << ls[2];  // flags, then the error cell
  EXPECT_EQ(ls[1].substr(ls[1].size() - 2), ",,") << ls[1];
  EXPECT_EQ(ls[3].substr(ls[3].size() - 2), ",,") << ls[3];
}

TEST(ReportStall, NothingWithoutAStalledRow) {
  for (const char* format : {"table", "osu", "imb", "perftest", "csv"}) {
    const std::string text = run(format, bandwidthRun(), {bandwidthRow(8, 10.5, 1.3e6)});
    EXPECT_EQ(text.find("stall"), std::string::npos) << format << ": " << text;
  }
}

}  // namespace
}  // namespace rdmabench::report
