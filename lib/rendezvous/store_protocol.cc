// Payload helpers of the rendezvous store wire format (store_protocol.h).

#include "rendezvous/store_protocol.h"

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/error.h"

namespace rdmabench::rendezvous {

std::string encodeU64(uint64_t v) {
  std::string s(8, '\0');
  putLe(reinterpret_cast<uint8_t*>(s.data()), v, 8);
  return s;
}

uint64_t decodeU64(std::string_view b) {
  if (b.size() < 8) throw ProtocolError("store message: truncated 8-byte integer");
  return ByteReader(b).u64();
}

int64_t addCounter(const std::string* stored, int64_t delta) {
  const uint64_t base = stored ? decodeU64(*stored) : 0;
  return static_cast<int64_t>(base + static_cast<uint64_t>(delta));  // modulo 2^64 (C++20)
}

std::string encodeKeyRecord(std::string_view key, std::string_view rest) {
  std::string s(4, '\0');
  putLe(reinterpret_cast<uint8_t*>(s.data()), static_cast<uint32_t>(key.size()), 4);
  s.append(key);
  s.append(rest);
  return s;
}

void decodeKeyRecord(std::string_view p, std::string& key, std::string& rest) {
  if (p.size() < 4) throw ProtocolError("store message: truncated key record");
  const uint32_t n = ByteReader(p).u32();
  if (n > kMaxStoreKeyBytes)
    throw ProtocolError(
        fmt::format("store message: key of {} bytes above the limit of {}", n, kMaxStoreKeyBytes));
  if (p.size() < 4 + static_cast<size_t>(n))
    throw ProtocolError("store message: key record longer than the frame");
  key.assign(p.substr(4, n));
  rest.assign(p.substr(4 + n));
}

}  // namespace rdmabench::rendezvous
