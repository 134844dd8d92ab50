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

// Issue 22 item 9: K/M/G and KiB/MiB/GiB are powers of two (OSU, perftest), a bare B is bytes,
// and KB/MB/GB (decimal in SI, binary in OSU) are refused naming both readings.
TEST(ParseSize, BinarySuffixesBareBytesAndAmbiguousDecimalRefused) {
  EXPECT_EQ(parseSize("65536B", "-s"), 65536u);
  EXPECT_EQ(parseSize("8b", "-s"), 8u);
  EXPECT_EQ(parseSize("1MiB", "-s"), 1048576u);
  EXPECT_EQ(parseSize("2GiB", "-s"), 2147483648u);
  EXPECT_EQ(parseSize("1K", "-s"), parseSize("1KiB", "-s"));
  try {
    parseSize("1MB", "--size");
    FAIL() << "accepted 1MB";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "--size: '1MB' is ambiguous: use 1M or 1MiB for 1048576 B, or 1000000 for 10^6 B");
  }
  for (const char* bad : {"4KB", "64kB", "2GB", "1Mb", "3TB"}) {
    try {
      parseSize(bad, "--size");
      FAIL() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("ambiguous"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  for (const char* bad : {"4BB", "4KiBB", "4iB", "4Bi", "4KiBx"})
    EXPECT_THROW(parseSize(bad, "--size"), UsageError) << bad;
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
