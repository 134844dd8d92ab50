#include <fmt/format.h>

#include "common/error.h"
#include "transport/backends.h"
#include "transport/transport.h"

namespace rdmabench::transport {

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

}  // namespace rdmabench::transport
