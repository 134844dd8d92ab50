#pragma once
// Internal to the TCP store server (tcp_store_server.cc: sockets, accept and timers;
// tcp_store_io.cc: per-connection I/O; tcp_store_session.cc: protocol and state): what it keeps per
// connection and per run. Not a public header.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rendezvous/store.h"

namespace rdmabench::rendezvous {

struct TcpStoreServer::Run {
  std::string id;
  std::string description;  // its first member's JoinInfo::description ("" = not sent)
  int worldSize = 0;
  struct Member {
    std::string host;
    std::string state;  // "joined", "left", "failed", "lost"
    int fd = -1;
  };
  std::map<int, Member> members;
  struct Entry {
    std::string value;
    int ownerFd = -1;          // the connection whose quota it is charged to,
    uint64_t ownerSerial = 0;  // while that connection lives (fds are reused)
  };
  std::map<std::string, Entry> data;
  // Connections with a get waiting per key not yet set, so a set wakes its waiters without
  // scanning every member (O(N) per set was O(N^2) per wire-up: ~20 sets per rank). Entries may
  // be stale (the wait expired, the connection closed); wake() checks each.
  std::map<std::string, std::vector<int>> waiting;
  size_t bytes = 0;  // entryBytes() of every entry in `data`
  int live = 0;      // members whose connection is open; 0 = the run is collected
};

struct TcpStoreServer::Waiter {
  std::string key;
  int64_t startNs;
  int64_t deadlineNs;
};

struct TcpStoreServer::Conn {
  int fd = -1;
  uint64_t serial = 0;
  std::string peer;
  std::string in, out;
  int stage = 0;  // 0 hello, 1 join, 2 joined
  Run* run = nullptr;
  int rank = -1;
  bool closing = false;  // flush `out`, then close (by closeByNs at the latest)
  std::string closeReason;
  int64_t closeByNs = 0;
  bool refusalLogged = false;
  bool paused = false;       // queued output >= outputPauseBytes: requests are not read
  uint32_t discard = 0;      // payload bytes of a refused oversized frame still to skip
  uint32_t epollEvents = 0;  // as registered
  std::vector<Waiter> waits;
  size_t waitBytes = 0;  // keys of `waits`
  size_t heldBytes = 0;  // entryBytes() of the entries charged to this connection
  size_t accounted = 0;  // its part of bufferedBytes_ (buffered() when last accounted)
  int64_t handshakeEndNs = 0;
  int64_t lastActiveNs = 0;
  size_t buffered() const { return kStoreConnOverheadBytes + in.size() + out.size() + waitBytes; }
};

// What one stored entry is charged.
inline size_t entryBytes(const std::string& key, const std::string& value) {
  return key.size() + value.size() + kStoreEntryOverheadBytes;
}

// One non-blocking attempt to send what `out` holds plus a frame (the connection is closed next;
// tcp_store_io.cc).
void sendBestEffort(int fd, std::string& out, uint16_t type, const std::string& text);

}  // namespace rdmabench::rendezvous
