#pragma once
// What `rdmabench info` and test skips learn about the backends of this host: diagnostics, not
// part of the data-path contract (transport.h). `details` is free-form JSON (devices, ports,
// GID tables, providers...) printed as it is.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "transport/transport.h"

namespace rdmabench::transport {

// Status of one backend on this host, for `rdmabench info` and test skips.
struct BackendStatus {
  std::string name;        // "socket", "verbs", "ofi"
  bool built = false;      // compiled in
  bool usable = false;     // at least one device/provider can be opened here
  std::string reason;      // why not usable (or a one-line summary when usable)
  nlohmann::json details;  // devices, ports, GID tables, providers... (backend-defined)
};

// Probes one backend (never throws: failures land in `reason`).
BackendStatus probeBackend(std::string_view backend);

}  // namespace rdmabench::transport
