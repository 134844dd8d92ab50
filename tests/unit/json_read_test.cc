#include "common/json_read.h"

#include <gtest/gtest.h>

#include <string>

#include "common/error.h"

namespace rdmabench {
namespace {

using nlohmann::json;

std::string nested(size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

TEST(JsonRead, DepthLimitRefusesDeepNestingWithoutRecursion) {
  EXPECT_NO_THROW(parseUntrustedJson(nested(32), "frame"));
  try {
    parseUntrustedJson(nested(33), "Addresses frame");
    FAIL() << "33 levels accepted";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("Addresses frame"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("32 levels"), std::string::npos) << e.what();
  }
  // 80,000 levels (the remote-crash frame of issue 12) is refused, not a stack overflow.
  EXPECT_THROW(parseUntrustedJson(nested(80'000), "frame"), ProtocolError);
  std::string deepObj;
  for (int i = 0; i < 80'000; ++i)
    deepObj += "{\"a\":";
  deepObj += "1" + std::string(80'000, '}');
  EXPECT_THROW(parseUntrustedJson(deepObj, "frame"), ProtocolError);
}

TEST(JsonRead, SizeLimitAndSyntaxErrors) {
  EXPECT_THROW(parseUntrustedJson("{\"a\":1}", "x", 8, 3), ProtocolError);
  EXPECT_THROW(parseUntrustedJson("{\"a\":", "x"), ProtocolError);
  EXPECT_THROW(parseUntrustedJson("", "x"), ProtocolError);
  EXPECT_EQ(parseUntrustedJson("{\"a\":1}", "x")["a"], 1);
}

TEST(JsonRead, UnsignedRejectsInsteadOfTruncating) {
  json j = parseUntrustedJson(
      R"({"w":4294967297,"neg":-1,"frac":1.5,"huge":1e30,"ok":64,"f":64.0,"s":"64","max":18446744073709551615})",
      "test request");
  EXPECT_EQ(jsonUint(j, "ok", "t", 0, 1, 1024), 64u);
  EXPECT_EQ(jsonUint(j, "f", "t", 0, 1, 1024), 64u);
  EXPECT_EQ(jsonUint(j, "absent", "t", 7), 7u);
  EXPECT_EQ(jsonUint(j, "max", "t", 0), UINT64_MAX);
  for (const char* bad : {"w", "neg", "frac", "huge", "s"}) {
    try {
      jsonUint(j, bad, "test request", 0, 0, UINT32_MAX);
      FAIL() << bad << " accepted";
    } catch (const ProtocolError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("test request"), std::string::npos) << m;
      EXPECT_NE(m.find(bad), std::string::npos) << m;
    }
  }
}

TEST(JsonRead, SignedRangeAndDoubles) {
  json j = parseUntrustedJson(R"({"r":2147483648,"n":-5,"d":2.5,"min":-9223372036854775808})", "x");
  EXPECT_THROW(jsonInt(j, "r", "x", 0, 0, INT32_MAX), ProtocolError);
  EXPECT_EQ(jsonInt(j, "n", "x", 0), -5);
  EXPECT_EQ(jsonInt(j, "min", "x", 0), INT64_MIN);
  EXPECT_THROW(jsonInt(j, "n", "x", 0, 0), ProtocolError);
  EXPECT_DOUBLE_EQ(jsonDouble(j, "d", "x", 0), 2.5);
  EXPECT_THROW(jsonDouble(j, "d", "x", 0, 0, 1), ProtocolError);
  EXPECT_THROW(jsonBool(j, "d", "x", false), ProtocolError);
  EXPECT_THROW(jsonString(j, "d", "x"), ProtocolError);
}

TEST(JsonRead, StringsArraysObjects) {
  json j = parseUntrustedJson(R"({"s":"abcdef","a":[1,2,3],"o":{"k":1}})", "x");
  EXPECT_EQ(jsonString(j, "s", "x"), "abcdef");
  EXPECT_THROW(jsonString(j, "s", "x", "", 3), ProtocolError);
  ASSERT_NE(jsonArray(j, "a", "x", 3), nullptr);
  EXPECT_THROW(jsonArray(j, "a", "x", 2), ProtocolError);
  EXPECT_THROW(jsonArray(j, "o", "x", 2), ProtocolError);
  ASSERT_NE(jsonObject(j, "o", "x"), nullptr);
  EXPECT_EQ(jsonObject(j, "absent", "x"), nullptr);
  EXPECT_THROW(jsonFind(json::array(), "k", "x"), ProtocolError);
}

TEST(JsonRead, EscapeForLogNeutralisesControlCharacters) {
  EXPECT_EQ(escapeForLog("plain host-1"), "plain host-1");
  EXPECT_EQ(escapeForLog("a\nb"), "a\\nb");
  EXPECT_EQ(escapeForLog("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(escapeForLog("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(escapeForLog("bad\xff"), "bad\\xff");
  EXPECT_EQ(escapeForLog(std::string(300, 'x'), 10), std::string(10, 'x') + "...");
}

}  // namespace
}  // namespace rdmabench
