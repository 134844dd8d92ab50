// Compiled instead of the verbs backend when it is turned off or its library is missing.
#include "common/error.h"
#include "transport/backends.h"

namespace rdmabench::transport::verbs {

std::unique_ptr<Device> openDevice(const DeviceOptions&) {
  throw TransportError(
      "transport 'verbs' is not built into this rdmabench (library not found at build time)");
}

BackendStatus probe() {
  BackendStatus s;
  s.name = "verbs";
  s.reason = "not built (library not found at build time)";
  return s;
}

}  // namespace rdmabench::transport::verbs
