#pragma once
// `rdmabench connect`: the connection setup rate, as rdma-core's cmtime measures it
// (docs/connect.md). Two sides in one process, a thread each with its own device: N
// connections are created (QP / endpoint / socket, and its address), connected (verbs: the QP
// taken INIT -> RTR -> RTS with the peer's address exchanged out of band, or rdma_cm's
// resolve/connect/accept; ofi: AV insert or FI_EP_MSG connect/accept; socket: TCP connect/accept),
// carry a first message each way (where a transport connects lazily, as ofi_rxm does, this is
// where the wire connection happens), and are destroyed. Each step runs for all N connections
// before the next starts (cmtime's bulk steps) and is timed per connection and as a whole.
// Thread-safety: measureConnections starts and joins its own thread; call from one thread.

#include <cstdint>
#include <string>
#include <vector>

#include "stats/summary.h"
#include "transport/transport.h"

namespace rdmabench::connect {

inline constexpr uint64_t kMaxConnections = 65536;

struct ConnectParams {
  std::string transport;            // "verbs", "ofi", "socket"
  transport::DeviceOptions device;  // both sides' device options (-d, -R, --provider, ...)
  uint64_t connections = 100;       // -n, 1..kMaxConnections
  int64_t timeoutMs = 30'000;       // each connect and each first message
};

// One step over all connections: `samples` holds side A's time per connection (us); totalMs is
// the step's wall time from the barrier before it to the barrier after it (both sides done).
struct StepFigures {
  std::string name;  // "create", "connect", "first_message", "destroy"
  double totalMs = 0;
  stats::Summary perConnection;  // us
};

struct ConnectResult {
  std::string device;              // side A's device name
  std::vector<StepFigures> steps;  // in order
  uint64_t connections = 0;
  // Connections per second of setting up: N / (create + connect wall time).
  double setupPerSec() const;
};

// Runs the four steps. Throws TransportError naming the step, the connection (i of N) and the
// side ("creating connection 7 of 100 (side B): ..."), TimeoutError when a connect or a first
// message passes timeoutMs, InterruptedError on Ctrl-C. Every connection made is torn down
// before it returns or throws.
ConnectResult measureConnections(const ConnectParams& p);

// How `transport` connects with `options` (for the header): "QPs exchanged out of band,
// INIT/RTR/RTS", "rdma_cm", "AV insert (FI_EP_RDM; ofi_rxm connects at the first message)", ...
std::string connectMethod(const std::string& transport, const transport::DeviceOptions& options);

}  // namespace rdmabench::connect
