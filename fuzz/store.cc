// fuzz_store: rendezvous store messages (docs/rendezvous.md, store_protocol.h) as the store
// server and its clients decode them: frame headers, the hello, key records of set / get / add,
// 8-byte integers, and the JSON messages through the bounded reader they use. Input: a stream of
// frames (8-byte header + payload), as on the socket.

#include <string>

#include "common/error.h"
#include "common/json_read.h"
#include "fuzz_util.h"
#include "rendezvous/protocol.h"
#include "rendezvous/store_protocol.h"

namespace {

using namespace rdmabench;
using namespace rdmabench::rendezvous;

void frame(const Frame& f) {
  const std::string_view p(reinterpret_cast<const char*>(f.payload.data()), f.payload.size());
  std::string key, rest;
  switch (f.type) {
    case kHello:
    case kHelloAck:
      decodeHello(f, "fuzz-rank:1");
      return;
    case kStoreSet:
      decodeKeyRecord(p, key, rest);
      return;
    case kStoreGet:
      if (p.size() < 4) throw ProtocolError("truncated get");
      (void)ByteReader(p).u32();
      decodeKeyRecord(p.substr(4), key, rest);
      return;
    case kStoreAdd: {
      // The server adds the delta to what the key holds, which another frame may have set to
      // any bytes: here the record's own rest (before and after the key) plays both parts.
      decodeKeyRecord(p, key, rest);
      const auto delta = static_cast<int64_t>(decodeU64(rest));
      (void)addCounter(&rest, delta);
      (void)addCounter(nullptr, delta);
      if (key.size() >= 8) (void)addCounter(&key, delta);
      return;
    }
    case kStoreValue:
      (void)decodeU64(p);
      return;
    case kError:
      throwPeerReport("rendezvous fuzz-rank:1", f.text());
    default:
      // kStoreJoin, kStoreJoinAck, kStoreTimeout, kStoreBye, kStoreRankLost: JSON objects.
      parseFrameJson(f, "store message");
      return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::forEachFrame(data, size, [](const Frame& f) {
    try {
      frame(f);
    } catch (const Error&) {
    }
  });
  return 0;
}
