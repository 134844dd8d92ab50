#pragma once
// Wire format of the rendezvous store (docs/rendezvous.md). It reuses the control channel's
// frames (channel.h) and its versioned hello (protocol.h: kHello / kHelloAck / kError); the
// store's own message types start at 40 so they never collide with the pair protocol's.
//
// Session: hello -> kStoreJoin {run_id, rank, world_size, host} -> kStoreJoinAck {} (or kError:
// another run id, a world size mismatch, a rank joined twice), then requests, each answered in
// order, and finally kStoreBye. The server may push kStoreRankLost at any time.

#include <cstdint>
#include <string>
#include <string_view>

namespace rdmabench::rendezvous {

enum StoreMessageType : uint16_t {
  kStoreJoin = 40,      // client -> server: JSON {"run_id","rank","world_size","host"}
  kStoreJoinAck = 41,   // server -> client: JSON {"world_size"}
  kStoreSet = 42,       // client -> server: key record + value bytes
  kStoreOk = 43,        // server -> client: set done (empty)
  kStoreGet = 44,       // client -> server: u32 timeout ms + key record; waits server-side
  kStoreValue = 45,     // server -> client: the value bytes (get) or 8-byte LE int64 (add)
  kStoreTimeout = 46,   // server -> client: JSON {"key","missing":[{rank,host,state}],"joined"}
  kStoreAdd = 47,       // client -> server: 8-byte LE int64 delta + key record
  kStoreBye = 48,       // client -> server: JSON {"ok": bool, "reason": text}; no answer
  kStoreRankLost = 49,  // server -> client (push): JSON {"rank","host","reason","clean"}
};

// Longest key in bytes; keys are opaque (the API uses printable names such as "conn/3/5").
inline constexpr size_t kMaxStoreKeyBytes = 1024;

// Key record: u32 LE key length, key bytes, then the rest of the payload (value bytes for set).
// Pure helpers, unit-tested; decode throws ProtocolError on a truncated record or a key longer
// than kMaxStoreKeyBytes.
std::string encodeKeyRecord(std::string_view key, std::string_view rest);
void decodeKeyRecord(std::string_view payload, std::string& key, std::string& rest);

// Little-endian fixed-width integers inside payloads.
std::string encodeU64(uint64_t v);
uint64_t decodeU64(std::string_view bytes);  // first 8 bytes; ProtocolError when shorter

// The arithmetic of Store::add: the counter `stored` holds (nullptr = absent = 0; else its first
// 8 bytes, ProtocolError when shorter) plus `delta`, wrapping in two's complement. Both come
// from peers (a kStoreSet can store any 8 bytes, kStoreAdd any delta), so `int64 + int64` would
// be undefined behaviour on overflow; every store implementation adds through this.
int64_t addCounter(const std::string* stored, int64_t delta);

}  // namespace rdmabench::rendezvous
