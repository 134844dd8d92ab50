#include <fmt/format.h>

#include "common/error.h"
#include "transport/backends.h"
#include "transport/transport.h"

namespace rdmabench::transport {

const char* toString(OpKind op) {
  switch (op) {
    case OpKind::kSend:
      return "send";
    case OpKind::kRecv:
      return "recv";
    case OpKind::kWrite:
      return "write";
    case OpKind::kRead:
      return "read";
  }
  return "?";
}

const std::vector<std::string>& backendNames() {
  static const std::vector<std::string> names = {"verbs", "ofi", "socket"};
  return names;
}

std::unique_ptr<Device> openDevice(std::string_view backend, const DeviceOptions& options) {
  if (backend == "socket") return socket::openDevice(options);
  if (backend == "verbs") return verbs::openDevice(options);
  if (backend == "ofi") return ofi::openDevice(options);
  throw UsageError(
      fmt::format("--transport: unknown transport '{}' (valid: socket, verbs, ofi)", backend));
}

BackendStatus probeBackend(std::string_view backend) {
  try {
    if (backend == "socket") return socket::probe();
    if (backend == "verbs") return verbs::probe();
    if (backend == "ofi") return ofi::probe();
  } catch (const std::exception& e) {
    BackendStatus s;
    s.name = std::string(backend);
    s.built = true;
    s.reason = e.what();
    return s;
  }
  BackendStatus s;
  s.name = std::string(backend);
  s.reason = "unknown transport";
  return s;
}

std::vector<uint8_t> RemoteRegion::encode() const {
  if (key.size() > kMaxKeyBytes) throw TransportError("RemoteRegion: key longer than 32 bytes");
  std::vector<uint8_t> out(17 + key.size());
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<uint8_t>(addr >> (8 * i));
  for (int i = 0; i < 8; ++i)
    out[8 + i] = static_cast<uint8_t>(length >> (8 * i));
  out[16] = static_cast<uint8_t>(key.size());
  std::copy(key.begin(), key.end(), out.begin() + 17);
  return out;
}

RemoteRegion RemoteRegion::decode(const std::vector<uint8_t>& bytes) {
  if (bytes.size() < 17 || bytes[16] > kMaxKeyBytes || bytes.size() != 17u + bytes[16])
    throw ProtocolError(fmt::format("malformed remote region descriptor ({} bytes)", bytes.size()));
  RemoteRegion r;
  for (int i = 0; i < 8; ++i)
    r.addr |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  for (int i = 0; i < 8; ++i)
    r.length |= static_cast<uint64_t>(bytes[8 + i]) << (8 * i);
  r.key.assign(bytes.begin() + 17, bytes.end());
  return r;
}

}  // namespace rdmabench::transport
