// lib/report/progress: the progress line of `lat`/`bw` on a terminal (docs/compare.md,
// "Progress line"). Split out of compare_test.cc.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "report/progress.h"
#include "report/report.h"

namespace rdmabench::report {
namespace {

TEST(ProgressLine, TextAndEstimate) {
  std::ostringstream out;
  double t = 0;
  ProgressLine p(out, true, {1, 2, 4, 8}, [&] { return t; });
  EXPECT_EQ(p.text(0, 4, 1, 0), "rdmabench: size 1 (1/4), 3 left, ETA ?");
  // Two sizes took 2 s; weights 16385 + 16386 done, 16388 + 16392 left -> about 2 s.
  std::string s = p.text(2, 4, 4, 2.0);
  EXPECT_NE(s.find("size 4 (3/4), 1 left, ETA 0:02"), std::string::npos) << s;
  p.sizeStart(0, 4, 1);
  t = 1;
  p.sizeStart(1, 4, 2);
  EXPECT_NE(out.str().find("\rrdmabench: size 2 (2/4), 2 left"), std::string::npos);
  EXPECT_NE(out.str().find("\x1b[K"), std::string::npos);
  size_t before = out.str().size();
  p.clear();
  EXPECT_EQ(out.str().substr(before), "\r\x1b[K");
  p.clear();  // idempotent
  EXPECT_EQ(out.str().size(), before + 4);
}

TEST(ProgressLine, DisabledWritesNothingAndWrapperClears) {
  std::ostringstream err, rep;
  {
    ProgressLine off(err, false, {});
    off.sizeStart(0, 3, 64);
    off.clear();
  }
  EXPECT_TRUE(err.str().empty());
  ProgressLine on(err, true, {});
  auto inner = makeReporter("osu", rep);
  auto wrapped = withProgress(*inner, on);
  wrapped->begin(RunInfo{});
  on.sizeStart(0, 1, 8);
  Row row;
  row.bytes = 8;
  wrapped->row(row);
  wrapped->end();
  EXPECT_TRUE(err.str().ends_with("\r\x1b[K"));
  EXPECT_NE(rep.str().find("8 "), std::string::npos);
}

// Issue 11: on the terminal stderr shares, the CLI's stderr line is the error's one copy; the
// wrapper then ends a text report without `# error:`. Otherwise the message reaches the report.
TEST(ProgressLine, WrapperDropsTheAbortMessageOnlyWhenAsked) {
  for (bool drop : {false, true}) {
    std::ostringstream err, rep;
    ProgressLine off(err, false, {});
    auto inner = makeReporter("table", rep);
    auto wrapped = withProgress(*inner, off, drop);
    wrapped->begin(RunInfo{});
    wrapped->abort("connect: Connection refused");
    EXPECT_EQ(rep.str().find("# error: connect: Connection refused") != std::string::npos, !drop)
        << rep.str();
    EXPECT_NE(rep.str().find("# rdmabench"), std::string::npos);  // the header stays
  }
  std::ostringstream err, rep;
  ProgressLine off(err, false, {});
  auto json = makeReporter("json", rep);
  withProgress(*json, off)->abort("x");
  EXPECT_NE(rep.str().find("\"error\":\"x\""), std::string::npos) << rep.str();
}

}  // namespace
}  // namespace rdmabench::report
