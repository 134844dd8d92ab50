#pragma once
// The null transport: a Device whose endpoints are connected to themselves and complete every
// post at once, in the calling thread (UCX's "self" transport, without the wire). It measures
// the ceiling of rdmabench's own loops (bench/engine_ceiling, the instruction-count guard in
// tests/perf): no bytes cross a network, so what remains is the engine's and the transport
// interface's cost per message.
//
// Semantics (docs/transport.md, "The null device"):
//  - a send is delivered to the oldest receive posted on the same endpoint (memcpy of the
//    payload; a message that finds no receive waits, copied, for the next postRecv); a receive
//    shorter than the message completes kTruncated;
//  - a write copies local [offset, +length) to remote.addr + remoteOffset (the peer is this
//    process, so remote addresses are local pointers); a read copies the other way;
//  - signaled posts complete at the next poll() in post order; unsignaled ones report nothing.
// Not reachable through openDevice()/--transport: only tests and bench/ link it.
// Thread-safety: one thread per device, like every backend.

#include <memory>

#include "transport/transport.h"

namespace rdmabench::transport {

// Opens a null device. Reads options.txDepth / rxDepth (0: 128 / 512) for Caps; never throws.
std::unique_ptr<Device> openNullDevice(const DeviceOptions& options);

// Creates the endpoint of a null device (a connection to itself), without a Connector.
// `device` must come from openNullDevice (else throws UsageError).
std::unique_ptr<Endpoint> openNullEndpoint(Device& device);

}  // namespace rdmabench::transport
