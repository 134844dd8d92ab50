// The reporters (report/report.h): the format registry, what every text format shares (escaped
// headers, the error line of an aborted run, rows as they come, row flags) and the A/B report.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "report/ab_report.h"
#include "report/report.h"
#include "report_fixtures.h"
#include "transport/info_json.h"

namespace rdmabench::report {
namespace {

using namespace test_util;

// A server's device properties reach the client's header: no terminal escape, no forged line
// (issue 24, item 6), in every text format.
TEST(Report, ServerDevicePropertiesAreEscapedInEveryTextHeader) {
  RunInfo info = latencyRun();
  info.remote.device =
      transport::deviceInfoFromJson({{"device", "lo\x1b]0;owned\x07"},
                                     {"x\x1b[2Jkey", "v\nrdmabench: run OK"},
                                     {"protocol", {{"summary", "eager\x1b[31m <= 16 KiB\r"}}}},
                                    "test accept");
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
    r.info.test = ::rdmabench::report::Test::kLat;
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

// The A/B CSV header quotes as every CSV of the tool (RFC 4180, report::csvField): a label
// holding a comma or a double quote (a --provider string) still reads back as one field.
TEST(AbReport, CsvHeaderQuotesLabelsAsRfc4180) {
  std::vector<RunCapture> runs(2);
  runs[0].label = "socket";
  runs[1].label = "ofi:a,\"b\"";
  for (auto& r : runs) {
    r.info.test = ::rdmabench::report::Test::kLat;
    r.info.op = "send";
  }
  std::ostringstream csv;
  printAb(csv, "csv", runs);
  const std::string head = csv.str().substr(0, csv.str().find('\n'));
  EXPECT_EQ(head.substr(0, 6), "bytes,") << head;
  EXPECT_NE(head.find(",\"ofi:a,\"\"b\"\" "), std::string::npos) << head;
  EXPECT_NE(head.find(",\"ratio ofi:a,\"\"b\"\"/socket\""), std::string::npos) << head;
}

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

}  // namespace
}  // namespace rdmabench::report
