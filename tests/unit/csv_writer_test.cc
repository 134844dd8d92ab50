#include "report/csv_writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>

namespace rdmabench::report {
namespace {

// RFC 4180: fields with a comma, a double quote, CR or LF are quoted, quotes doubled.
TEST(CsvWriter, QuotesPerRfc4180) {
  EXPECT_EQ(csvField("plain"), "plain");
  EXPECT_EQ(csvField(""), "");
  EXPECT_EQ(csvField("a,b"), "\"a,b\"");
  EXPECT_EQ(csvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csvField("cr\rhere"), "\"cr\rhere\"");
  EXPECT_EQ(csvField("\""), "\"\"\"\"");
  EXPECT_EQ(csvField("semi;colon 'single'"), "semi;colon 'single'");
}

TEST(CsvWriter, LinesEndInLf) {
  EXPECT_EQ(csvLine({"a", "b,c", ""}), "a,\"b,c\",\n");
  EXPECT_EQ(csvLine({}), "\n");
}

TEST(CsvWriter, RecordsMixStringsAndNumbers) {
  std::ostringstream out;
  CsvWriter csv(out);
  csv.row({"metric", "bytes", "value"});
  csv.record(std::string("RR Two-sided Lat (8 B)"), uint64_t{8}, 1.25);
  csv.record("host,1", -3, 1e-05, true, "");
  EXPECT_EQ(out.str(),
            "metric,bytes,value\n"
            "RR Two-sided Lat (8 B),8,1.25\n"
            "\"host,1\",-3,1e-05,true,\n");
}

}  // namespace
}  // namespace rdmabench::report
