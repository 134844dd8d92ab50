// Compiled instead of the ofi backend when it is turned off or its library is missing.
#include "common/error.h"
#include "transport/backends.h"

namespace rdmabench::transport::ofi {

std::unique_ptr<Device> openDevice(const DeviceOptions&) {
  throw TransportError(
      "transport 'ofi' is not built into this rdmabench (library not found at build time)");
}

BackendStatus probe() {
  BackendStatus s;
  s.name = "ofi";
  s.reason = "not built (library not found at build time)";
  return s;
}

}  // namespace rdmabench::transport::ofi
