#include "common/text_escape.h"

#include <gtest/gtest.h>

#include "common/error.h"

#include <string>

namespace rdmabench {
namespace {

TEST(TextEscape, C1ControlsAreEscaped) {
  // U+009B is CSI for terminals that read C1 controls: "\xc2\x9b" + "31m" would colour the line.
  EXPECT_EQ(escapeForLog("a\xc2\x9b"
                         "31mb"),
            "a\\u009b31mb");
  EXPECT_EQ(escapeForLog("\xc2\x85"), "\\u0085");
  EXPECT_EQ(escapeForLog("\xc2\xa0x"), "\xc2\xa0x");  // U+00A0 is printable
}

TEST(TextEscape, TerminalAndLogAreOneFunction) {
  const std::string hostile = "host\x1b]0;owned\x07\nrdmabench: run OK";
  EXPECT_EQ(escapeForTerminal(hostile), escapeForLog(hostile));
  EXPECT_EQ(escapeForTerminal(hostile), "host\\x1b]0;owned\\x07\\nrdmabench: run OK");
}

// gnuplot runs `...` inside double quotes; single quotes interpret nothing ('' is one quote), and a
// line break would end the literal's line (the rest would be a command).
TEST(GnuplotString, SingleQuotedOneLine) {
  EXPECT_EQ(gnuplotString("node7`touch X`$(id)\"\\"), "'node7`touch X`$(id)\"\\'");
  EXPECT_EQ(gnuplotString("it's"), "'it''s'");
  EXPECT_EQ(gnuplotString("a\nset output 'x'\r\x1b"), "'a\\nset output ''x''\\r\\x1b'");
  EXPECT_EQ(gnuplotString(""), "''");
}

// gnuplot pipes into a command when the output name starts with '|'.
TEST(GnuplotString, OutputPath) {
  EXPECT_EQ(gnuplotOutputPath("|touch X.png", "--plot"), "'./|touch X.png'");
  EXPECT_EQ(gnuplotOutputPath("/tmp/a'b.svg", "--plot"), "'/tmp/a''b.svg'");
  try {
    (void)gnuplotOutputPath("a\nb.png", "--plot");
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "--plot a\\nb.png: a plot file name cannot hold control characters (gnuplot "
                 "strings are one line)");
  }
}

}  // namespace
}  // namespace rdmabench
