#pragma once
// What the TCP rendezvous store server (TcpStoreServer, store.h) bounds, and how much of it is in
// use (docs/rendezvous.md "Limits"). The store accepts connections from anyone who can reach its
// port; these limits keep a stranger (or a broken client) from exhausting its memory, its
// descriptors or its CPU, and each refusal is a one-line kError naming the limit and the value.
// Plain values; thread-safety: none needed.

#include <cstddef>
#include <cstdint>
#include <string>

#include "rendezvous/store_protocol.h"

namespace rdmabench::rendezvous {

// Bookkeeping charged per stored entry and per connection on top of their bytes, so that many
// empty keys or idle connections are not free.
inline constexpr size_t kStoreEntryOverheadBytes = 64;
inline constexpr size_t kStoreConnOverheadBytes = 1024;

struct StoreLimits {
  // Longest value in bytes. rdmabench's own values are at most ~600 bytes (a transport address
  // is <= 256 bytes; "host/<rank>" is a short JSON); 64 KiB leaves a 100x margin.
  size_t maxValueBytes = 64 * 1024;
  // Longest key in bytes (the wire format's own cap, store_protocol.h).
  size_t maxKeyBytes = kMaxStoreKeyBytes;
  // Per connection: keys + values it stored that are still held (+ kStoreEntryOverheadBytes per
  // entry), plus its queued output, buffered input and pending gets. A set above it is answered
  // with kError and not stored; the connection stays usable.
  size_t connQuotaBytes = 16u << 20;
  // Whole server: all held keys + values and all connections' buffers (+ overheads). A set that
  // would exceed it is refused the same way; a connection accepted above it is refused.
  size_t totalQuotaBytes = 1u << 30;
  // Backpressure: the server stops reading a connection's requests while its queued output is
  // at or above this, and resumes once the client has read it (a client that never reads costs
  // at most this + maxPendingGets values).
  size_t outputPauseBytes = 256 * 1024;
  // Gets waiting server-side on one connection (rdmabench's client has one at a time).
  size_t maxPendingGets = 16;
  // A get never waits longer than this (ms), whatever the client asks (a client asking "forever"
  // gets it too): answered with kStoreTimeout. rdmabench's --timeout is at most 3600 s.
  int64_t maxGetWaitMs = 3'600'000;
  // A connection must complete hello + join within this (ms), else it is closed.
  int64_t handshakeMs = 10'000;
  // A joined connection with no pending get that sends nothing for this long (ms) is closed
  // (its rank counts as lost). 0 = never: ranks are legitimately silent during a benchmark;
  // the kernel's TCP keepalive (enabled on every connection) still ends those whose host died.
  int64_t idleMs = 0;
};

// A snapshot of what the server holds (TcpStoreServer::usage()); bytes as charged against
// StoreLimits.
struct StoreUsage {
  size_t totalBytes = 0;     // dataBytes + bufferedBytes: what totalQuotaBytes bounds
  size_t dataBytes = 0;      // held keys + values (+ per-entry overhead), all runs
  size_t bufferedBytes = 0;  // queued output + buffered input + pending gets (+ per-connection)
  size_t maxConnBufferedBytes = 0;   // the largest one connection's buffered bytes now
  size_t peakConnBufferedBytes = 0;  // the largest ever (updated as it happens, not per serve())
  size_t connections = 0;
  size_t runs = 0;  // runs with at least one live rank (finished runs are collected)
  size_t pendingGets = 0;
};

}  // namespace rdmabench::rendezvous
