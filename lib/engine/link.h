#pragma once
// One connection as the engines see it: the endpoint, the local registered buffer (layout in
// buffers.h) and the peer's buffer for one-sided operations.

#include "engine/buffers.h"
#include "transport/transport.h"

namespace rdmabench::engine {

struct Link {
  transport::Endpoint* endpoint = nullptr;
  transport::MemoryRegion* region = nullptr;
  transport::RemoteRegion remote;  // the peer's whole buffer (same layout)
  BufferLayout layout;
};

// Completion context values: kind in the top byte, link index in the next 16 bits, a sequence
// number in the low 40 bits.
enum class Ctx : uint8_t { kData = 1, kRecvData = 2, kAckSend = 3, kAckRecv = 4 };
inline uint64_t makeCtx(Ctx kind, uint32_t link, uint64_t seq) {
  return static_cast<uint64_t>(kind) << 56 | static_cast<uint64_t>(link & 0xffff) << 40 |
         (seq & ((1ull << 40) - 1));
}
inline Ctx ctxKind(uint64_t ctx) {
  return static_cast<Ctx>(ctx >> 56);
}
inline uint32_t ctxLink(uint64_t ctx) {
  return static_cast<uint32_t>(ctx >> 40) & 0xffff;
}
inline uint64_t ctxSeq(uint64_t ctx) {
  return ctx & ((1ull << 40) - 1);
}
// The full 64-bit sequence number of a completion whose context carries the low 40 bits `seq40`,
// given `next`, the full number of the oldest post not yet known complete (completions arrive
// in post order and fewer than 2^40 posts are ever in flight, so the context's sequence number
// wraps harmlessly: a run may post any number of messages).
inline uint64_t unwrapSeq(uint64_t next, uint64_t seq40) {
  constexpr uint64_t kMask = (1ull << 40) - 1;
  return next + ((seq40 - next) & kMask);
}

}  // namespace rdmabench::engine
