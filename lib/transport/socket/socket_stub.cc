// Compiled instead of the socket backend when it is turned off or its library is missing.
#include "common/error.h"
#include "transport/backends.h"

namespace rdmabench::transport::socket {

std::unique_ptr<Device> openDevice(const DeviceOptions&) {
  throw TransportError("transport 'socket' is not built into this rdmabench (library not found at build time)");
}

BackendStatus probe() {
  BackendStatus s;
  s.name = "socket";
  s.reason = "not built (library not found at build time)";
  return s;
}

}  // namespace rdmabench::transport::socket
