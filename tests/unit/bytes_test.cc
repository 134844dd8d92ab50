// lib/common/bytes.h: the one little-endian writer/reader of the binary codecs.

#include "common/bytes.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace rdmabench {
namespace {

TEST(Bytes, WriterIsLittleEndianAtIncreasingOffsets) {
  std::vector<uint8_t> b(15, 0xee);
  ByteWriter w(b.data(), b.size());
  w.u8(0x01).u16(0x0302).u32(0x07060504).u64(0x0f0e0d0c0b0a0908ull);
  EXPECT_EQ(w.position(), 15u);
  for (size_t i = 0; i < b.size(); ++i)
    EXPECT_EQ(b[i], i + 1) << "byte " << i;
}

TEST(Bytes, ReaderRoundTripsWriterIncludingOddWidths) {
  std::vector<uint8_t> b(3 + 8 + 4 + 2);
  ByteWriter w(b.data(), b.size());
  w.uint(0xabcdef, 3).u64(UINT64_MAX).raw("wxyz", 4).seek(15).u16(0xbeef);
  ByteReader r(b.data(), b.size());
  EXPECT_EQ(r.uint(3), 0xabcdefu);
  EXPECT_EQ(r.u64(), UINT64_MAX);
  char text[4];
  r.raw(text, 4);
  EXPECT_EQ(std::string(text, 4), "wxyz");
  EXPECT_EQ(r.u16(), 0xbeef);
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_TRUE(r.ok());
}

TEST(Bytes, ShortReadIsReportedNotOverrun) {
  const uint8_t b[3] = {1, 2, 3};
  ByteReader r(b, sizeof b);
  EXPECT_EQ(r.u16(), 0x0201u);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.u32(), 3u);  // only one byte was there
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(Bytes, WriterRefusesToWritePastItsBuffer) {
  uint8_t b[4] = {};
  ByteWriter w(b, sizeof b);
  w.u16(1);
  EXPECT_THROW(w.u32(2), std::out_of_range);
  EXPECT_THROW(ByteWriter(b, sizeof b).seek(3).raw("ab", 2), std::out_of_range);
}

TEST(Bytes, ReaderOverStringView) {
  std::string s("\x10\x00\x00\x00rest", 8);
  ByteReader r(s);
  EXPECT_EQ(r.u32(), 16u);
  EXPECT_EQ(r.remaining(), 4u);
}

TEST(Bytes, PutGetLeHelpers) {
  uint8_t b[8] = {};
  putLe(b, 0x1122334455667788ull, 8);
  EXPECT_EQ(b[0], 0x88);
  EXPECT_EQ(b[7], 0x11);
  EXPECT_EQ(getLe(b, 8), 0x1122334455667788ull);
  EXPECT_EQ(getLe(b, 2), 0x7788u);
}

}  // namespace
}  // namespace rdmabench
