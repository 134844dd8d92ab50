#include "common/text_escape.h"

#include <gtest/gtest.h>

#include "common/error.h"

#include <string>

#include <nlohmann/json.hpp>

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

namespace rdmabench {
namespace {

// Issue 36 item 8: C1 controls and bidirectional overrides from the wire reach a JSON report
// only as \u escapes (nlohmann's dump with ensure_ascii off keeps them raw), and a log line
// only escaped.
TEST(EscapeJsonControls, WritesC1AndBidiControlsAsUnicodeEscapes) {
  const std::string raw =
      "{\"host\":\"a\xc2\x9b"
      "31m\xc2\x85"
      "b\xe2\x80\xae"
      "c\xe2\x81\xa6"
      "d\"}";
  EXPECT_EQ(escapeJsonControls(raw), R"({"host":"a\u009b31m\u0085b\u202ec\u2066d"})");
  // Other UTF-8 (é, U+2019, U+202F, U+206A) and ASCII stay as they are.
  const std::string kept = "{\"h\":\"\xc3\xa9\xe2\x80\x99\xe2\x80\xaf\xe2\x81\xaa x\"}";
  EXPECT_EQ(escapeJsonControls(kept), kept);
  // The result parses to the same string.
  EXPECT_EQ(nlohmann::json::parse(escapeJsonControls(raw))["host"],
            nlohmann::json::parse(raw)["host"]);
}

TEST(EscapeForLog, EscapesBidiOverridesAndIsolates) {
  EXPECT_EQ(escapeForLog("gpj\xe2\x80\xae"
                         "exe"),
            "gpj\\u202eexe");
  EXPECT_EQ(escapeForLog("a\xe2\x81\xa9"
                         "b\xe2\x80\xaa"),
            "a\\u2069b\\u202a");
  EXPECT_EQ(escapeForLog("\xe2\x80\x99"), "\xe2\x80\x99");  // U+2019 is no control
}

}  // namespace
}  // namespace rdmabench
