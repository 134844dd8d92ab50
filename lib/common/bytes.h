#pragma once
// Little-endian fixed-width integers in hand-written binary layouts (transport addresses,
// remote region descriptors, frame headers, store payloads). One implementation for all of
// them. Thread-safety: none needed (value types over caller-owned bytes).

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

namespace rdmabench {

// Writes into a caller-sized buffer at increasing offsets. Writing past `size` is a programming
// error in the encoder's layout: it throws std::out_of_range instead of corrupting memory.
class ByteWriter {
 public:
  ByteWriter(uint8_t* data, size_t size) : data_(data), size_(size) {}

  // Little-endian unsigned integer of `bytes` bytes (1..8) at the current position.
  ByteWriter& uint(uint64_t v, int bytes) {
    need(static_cast<size_t>(bytes));
    for (int i = 0; i < bytes; ++i)
      data_[pos_ + i] = static_cast<uint8_t>(v >> (8 * i));
    pos_ += static_cast<size_t>(bytes);
    return *this;
  }
  ByteWriter& u8(uint8_t v) { return uint(v, 1); }
  ByteWriter& u16(uint16_t v) { return uint(v, 2); }
  ByteWriter& u32(uint32_t v) { return uint(v, 4); }
  ByteWriter& u64(uint64_t v) { return uint(v, 8); }
  ByteWriter& raw(const void* p, size_t n) {
    need(n);
    const auto* s = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i)
      data_[pos_ + i] = s[i];
    pos_ += n;
    return *this;
  }
  // Moves to offset `pos` (layouts with reserved gaps).
  ByteWriter& seek(size_t pos) {
    pos_ = pos;
    return *this;
  }
  size_t position() const { return pos_; }
  size_t size() const { return size_; }

 private:
  void need(size_t n) const {
    if (pos_ > size_ || n > size_ - pos_)
      throw std::out_of_range("ByteWriter: layout writes past the end of its buffer");
  }

  uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Reads little-endian integers from a byte range. The caller checks the total length against
// its layout first; reads never go past `size` (a short read returns what fits, zero-filled,
// and sets ok() to false) so a decoder can report a malformed input once, with its own words.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  explicit ByteReader(std::string_view s)
      : data_(reinterpret_cast<const uint8_t*>(s.data())), size_(s.size()) {}

  // Little-endian unsigned integer of `bytes` bytes (1..8) at the current position.
  uint64_t uint(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
      if (pos_ >= size_) {
        ok_ = false;
        return v;
      }
      v |= static_cast<uint64_t>(data_[pos_++]) << (8 * i);
    }
    return v;
  }
  uint8_t u8() { return static_cast<uint8_t>(uint(1)); }
  uint16_t u16() { return static_cast<uint16_t>(uint(2)); }
  uint32_t u32() { return static_cast<uint32_t>(uint(4)); }
  uint64_t u64() { return uint(8); }
  void raw(void* out, size_t n) {
    auto* d = static_cast<uint8_t*>(out);
    for (size_t i = 0; i < n; ++i) {
      if (pos_ >= size_) {
        ok_ = false;
        d[i] = 0;
        continue;
      }
      d[i] = data_[pos_++];
    }
  }
  ByteReader& seek(size_t pos) {
    pos_ = pos;
    if (pos_ > size_) ok_ = false;
    return *this;
  }
  size_t position() const { return pos_; }
  size_t remaining() const { return pos_ < size_ ? size_ - pos_ : 0; }
  // False once a read went past the end.
  bool ok() const { return ok_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// Convenience for one integer at a fixed offset.
inline void putLe(uint8_t* p, uint64_t v, int bytes) {
  ByteWriter(p, static_cast<size_t>(bytes)).uint(v, bytes);
}
inline uint64_t getLe(const uint8_t* p, int bytes) {
  return ByteReader(p, static_cast<size_t>(bytes)).uint(bytes);
}

}  // namespace rdmabench
