#pragma once
// fi_getinfo plumbing of the ofi backend: hints, provider/domain selection with helpful
// UsageErrors, names for mr_mode bits, the provider's protocol thresholds, and probe().
// Internal to lib/transport/ofi (tests may include it). Thread-safety: free functions, safe to
// call from any thread (libfabric's fi_getinfo is thread-safe).

#include <rdma/fabric.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "transport/probe.h"
#include "transport/transport.h"

namespace rdmabench::transport::ofi {

// libfabric API version we ask for (the headers we compile against, 1.17 on Debian 12).
inline constexpr uint32_t kApiVersion = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);

// Default provider string when DeviceOptions::provider is empty.
inline constexpr const char* kDefaultProvider = "tcp;ofi_rxm";
// Default provider string for endpoint type "msg" (FI_EP_MSG).
inline constexpr const char* kDefaultMsgProvider = "tcp";

// Every mr_mode bit this backend honours (the provider then returns the subset it needs).
inline constexpr uint64_t kMrModeHonoured =
    FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;

struct InfoDeleter {
  void operator()(fi_info* info) const { fi_freeinfo(info); }
};
// Owns an fi_info list (fi_freeinfo on destruction).
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

// "<fi_strerror text> (<rc>)" for a negative libfabric return code.
std::string fiError(int64_t rc);

// "FI_MR_LOCAL|FI_MR_VIRT_ADDR" (or "none") for an mr_mode bit set.
std::string mrModeNames(uint64_t mrMode);

// The result of choosing one fi_info entry for a device.
struct Selection {
  InfoPtr info;             // exactly one entry (a fi_dupinfo copy)
  bool rmaGranted = false;  // FI_RMA is in info->caps
  bool msg = false;         // FI_EP_MSG (endpoint type "msg"), else FI_EP_RDM
};

// Picks the fi_info for `options` (provider string, domain name, endpoint type "rdm" = FI_EP_RDM
// with FI_MSG|FI_TAGGED or "msg" = FI_EP_MSG with FI_MSG, optional localHost as FI_SOURCE
// node). Asks with FI_RMA first and falls back to messages only. Throws UsageError for an
// unknown provider (listing the providers fi_getinfo offers for that endpoint type), an
// unknown domain (listing that provider's domains) or an endpoint type other than "rdm"/"msg";
// TransportError for other fi_getinfo failures.
Selection selectInfo(const DeviceOptions& options);

// Provider protocol thresholds in force for `info` (ofi_rxm: buffer/eager/SAR limits,
// rendezvous mode, dynamic receive buffers; values from the environment through
// fi_getparams(), defaults parsed from libfabric's own help text). Empty object for
// providers without known thresholds.
Facts protocolThresholds(const fi_info& info);

// Backend status: every provider/domain that opens an FI_EP_RDM endpoint here (details
// "providers"), plus the FI_EP_MSG providers and their domains (details "msg_providers").
BackendStatus probeProviders();

}  // namespace rdmabench::transport::ofi
