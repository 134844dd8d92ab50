#pragma once
// Entry points each backend directory implements (or its *_stub.cc, when compiled out).
// Only registry.cc and backend tests include this; everyone else goes through transport.h.

#include "transport/probe.h"
#include "transport/transport.h"

namespace rdmabench::transport {

namespace socket {
std::unique_ptr<Device> openDevice(const DeviceOptions& options);
BackendStatus probe();
}  // namespace socket

namespace verbs {
std::unique_ptr<Device> openDevice(const DeviceOptions& options);
BackendStatus probe();
}  // namespace verbs

namespace ofi {
std::unique_ptr<Device> openDevice(const DeviceOptions& options);
BackendStatus probe();
}  // namespace ofi

}  // namespace rdmabench::transport
