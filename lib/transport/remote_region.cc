// RemoteRegion's flat encoding for the control channel (transport.h). Pure functions on bytes,
// kept apart from the backend registry so that decoders can be tested and fuzzed without the
// backends (fuzz/).
#include <fmt/format.h>

#include "common/bytes.h"
#include "common/error.h"
#include "transport/transport.h"

namespace rdmabench::transport {

std::vector<uint8_t> RemoteRegion::encode() const {
  if (key.size() > kMaxKeyBytes) throw TransportError("RemoteRegion: key longer than 32 bytes");
  std::vector<uint8_t> out(17 + key.size());
  ByteWriter(out.data(), out.size())
      .u64(addr)
      .u64(length)
      .u8(static_cast<uint8_t>(key.size()))
      .raw(key.data(), key.size());
  return out;
}

RemoteRegion RemoteRegion::decode(const std::vector<uint8_t>& bytes) {
  if (bytes.size() < 17 || bytes[16] > kMaxKeyBytes || bytes.size() != 17u + bytes[16])
    throw ProtocolError(fmt::format("malformed remote region descriptor ({} bytes)", bytes.size()));
  RemoteRegion r;
  ByteReader in(bytes.data(), bytes.size());
  r.addr = in.u64();
  r.length = in.u64();
  r.key.assign(bytes.begin() + 17, bytes.end());
  return r;
}

}  // namespace rdmabench::transport
