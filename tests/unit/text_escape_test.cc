#include "common/text_escape.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace rdmabench
