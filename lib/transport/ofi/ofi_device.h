#pragma once
// libfabric backend of the transport contract (see docs/transport-ofi.md).
//
// One Device = fabric + domain + one CQ (FI_CQ_FORMAT_TAGGED) + one AV (FI_AV_TABLE) + one
// FI_EP_RDM endpoint shared by all Endpoints of the device. An Endpoint is a peer fi_addr_t
// plus a pair of 64-bit tags: every message is an fi_tsend/fi_tinject tagged with the
// receiver's connection id and every receive an fi_trecv on our own connection id, so a
// receive posted on one Endpoint only ever matches messages from that connection.
// With DeviceOptions::endpointType "msg" (FI_EP_MSG): fabric + domain + one CQ
// (FI_CQ_FORMAT_MSG), and per Connector an EQ and a listening passive endpoint; connect()
// accepts (smaller device id) or fi_connect's (larger) and waits for FI_CONNECTED up to the
// deadline; each Endpoint then owns one connected endpoint (fi_send/fi_recv/fi_write/fi_read).
// Thread-safety: as transport.h (one thread at a time per Device).

#include <cstdint>
#include <memory>

#include "transport/transport.h"

namespace rdmabench::transport::ofi {

// Backend-specific knobs beyond DeviceOptions.
struct Tuning {
  // Clamps the provider's max_msg_size (0 = use it as returned by fi_getinfo). Lets tests
  // exercise the "message above max_msg_size" path on providers whose limit is SIZE_MAX.
  uint64_t maxMessageBytes = 0;
};

// openDevice(options) of backends.h with explicit tuning. Throws UsageError for unknown
// providers/domains/options (listing what exists), TransportError for libfabric failures.
std::unique_ptr<Device> openDevice(const DeviceOptions& options, const Tuning& tuning);

}  // namespace rdmabench::transport::ofi
