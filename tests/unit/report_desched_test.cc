// osu and imb cannot mark a row "desched" as the table does: one "# WARNING" line after the
// table names the sizes that lost the CPU, and the compare parsers still read the table;
// perftest says it in a " WARNING : ..." line after its closing line, csv in the flags cell.
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

std::vector<Row> rowsWithDesched() {
  std::vector<Row> rows = {latencyRow(8, 1.67), latencyRow(64, 1.80), latencyRow(1024, 2.34)};
  rows[0].descheduled = {{"involuntary_switches", 3}, {"steal_us", 0}};
  rows[2].descheduled = {{"involuntary_switches", 1}, {"steal_us", 0}};
  return rows;
}

const std::string kWarning =
    "# WARNING: sizes 8, 1024 B lost the CPU during the timed loop (desched: another process ran "
    "on its core, the time includes its work); use -e / --use-event on (event mode), pin to an "
    "idle core (--cpu, taskset), or run fewer ranks per host\n";

TEST(ReportDesched, OsuWarnsAfterTheTableAndStillParses) {
  std::string text = run("osu", latencyRun(), rowsWithDesched());
  ASSERT_GE(text.size(), kWarning.size());
  EXPECT_EQ(text.substr(text.size() - kWarning.size()), kWarning) << text;
  EXPECT_NE(text.find("8                       1.67\n64"), std::string::npos) << text;  // no mark
  auto series = compare::parseText(text, "desched.osu");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].test, "latency");
  EXPECT_EQ(series[0].points.size(), 3u);
}

TEST(ReportDesched, ImbWarnsAfterTheTableAndStillParses) {
  std::string text = run("imb", latencyRun(), rowsWithDesched());
  ASSERT_GE(text.size(), kWarning.size() + 1);
  EXPECT_EQ(text.substr(text.size() - kWarning.size() - 1), kWarning + "\n") << text;
  auto series = compare::parseText(text, "desched.imb");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].test, "latency");
  EXPECT_EQ(series[0].points.size(), 3u);
}

TEST(ReportDesched, PerftestWarnsAfterItsClosingLineAndStillParses) {
  std::string text = run("perftest", latencyRun(), rowsWithDesched());
  const std::string want = " WARNING         : " + kWarning.substr(11);  // without "# WARNING: "
  ASSERT_GE(text.size(), want.size());
  EXPECT_EQ(text.substr(text.size() - want.size()), want) << text;
  auto series = compare::parseText(text, "desched.perftest");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].points.size(), 3u);
}

TEST(ReportDesched, CsvHasTheMarkInTheFlagsCell) {
  const std::vector<std::string> ls = lines(run("csv", latencyRun(), rowsWithDesched()));
  ASSERT_EQ(ls.size(), 4u);
  EXPECT_EQ(ls[1].substr(ls[1].size() - 9), ",desched,") << ls[1];
  EXPECT_EQ(ls[2].substr(ls[2].size() - 2), ",,") << ls[2];
  EXPECT_EQ(ls[3].substr(ls[3].size() - 9), ",desched,") << ls[3];
}

TEST(ReportDesched, NoWarningWithoutDeschedRows) {
  for (const char* format : {"osu", "imb", "perftest", "csv"}) {
    std::string text = run(format, latencyRun(), {latencyRow(8, 1.67)});
    EXPECT_EQ(text.find("lost the CPU"), std::string::npos) << format << ": " << text;
  }
}

}  // namespace
}  // namespace rdmabench::report
