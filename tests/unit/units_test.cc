#include "common/units.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace rdmabench {
namespace {

TEST(ParseSize, PlainAndSuffixes) {
  EXPECT_EQ(parseSize("0", "-s"), 0u);
  EXPECT_EQ(parseSize("4096", "-s"), 4096u);
  EXPECT_EQ(parseSize("4K", "-s"), 4096u);
  EXPECT_EQ(parseSize("4k", "-s"), 4096u);
  EXPECT_EQ(parseSize("1M", "-s"), 1048576u);
  EXPECT_EQ(parseSize("2G", "-s"), 2147483648u);
  EXPECT_EQ(parseSize("64KiB", "-s"), 65536u);
  EXPECT_EQ(parseSize("1T", "-s"), 1ull << 40);
}

TEST(ParseSize, RejectsBadInputNamingTheOption) {
  for (const char* bad : {"", "-1", "abc", "4X", "4K7", "99999999999999999999"}) {
    try {
      parseSize(bad, "--size");
      FAIL() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--size"), std::string::npos) << e.what();
    }
  }
}

TEST(ParseSizeRange, OsuForms) {
  auto r = parseSizeRange("2:128", "-m", 0, 1 << 22);
  EXPECT_EQ(r.min, 2u);
  EXPECT_EQ(r.max, 128u);
  r = parseSizeRange("2:", "-m", 0, 1 << 22);
  EXPECT_EQ(r.max, 1u << 22);
  r = parseSizeRange("64", "-m", 0, 1 << 22);
  EXPECT_EQ(r.min, 0u);
  EXPECT_EQ(r.max, 64u);
  EXPECT_THROW(parseSizeRange("10:2", "-m", 0, 100), UsageError);
}

TEST(SizeSweep, PowersOfTwoWithZero) {
  EXPECT_EQ(sizeSweep(0, 8), (std::vector<uint64_t>{0, 1, 2, 4, 8}));
  EXPECT_EQ(sizeSweep(3, 20), (std::vector<uint64_t>{3, 6, 12}));
  EXPECT_EQ(sizeSweep(4096, 4096), (std::vector<uint64_t>{4096}));
}

TEST(FormatSize, Labels) {
  EXPECT_EQ(formatSize(4096), "4K");
  EXPECT_EQ(formatSize(1 << 20), "1M");
  EXPECT_EQ(formatSize(1000), "1000");
}

}  // namespace
}  // namespace rdmabench
