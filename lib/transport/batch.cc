// The batch contract's defaults (transport.h: Endpoint::prepare / postBatch): validate once,
// then one single post per entry. Backends with a real batch path override postBatch.
#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "transport/transport.h"

namespace rdmabench::transport {

PreparedOp Endpoint::prepare(OpKind op, const MemoryRegion& mr, uint64_t offset, uint32_t length,
                             const RemoteRegion* remote, uint64_t remoteOffset) {
  if (offset > mr.size() || length > mr.size() - offset)
    throw UsageError(fmt::format("prepare {}: range [{}, +{}) outside the {}-byte region",
                                 toString(op), offset, length, mr.size()));
  const bool rma = op == OpKind::kWrite || op == OpKind::kRead;
  if (rma && !remote) throw UsageError(fmt::format("prepare {}: no remote region", toString(op)));
  if (rma && (remoteOffset > remote->length || length > remote->length - remoteOffset))
    throw UsageError(fmt::format("prepare {}: remote range [{}, +{}) outside the {}-byte region",
                                 toString(op), remoteOffset, length, remote->length));
  PreparedOp p = PreparedOp::local(op, mr, offset, length);
  if (rma) p.setRemote(*remote, remoteOffset);
  return p;
}

std::string Device::postListNote(OpKind op) const {
  return fmt::format("{} has no batch path: each {} of a batch is posted on its own", backend(),
                     toString(op));
}

uint32_t Endpoint::postBatch(const PreparedOp& op, const BatchPost* posts, uint32_t count) {
  const MemoryRegion& mr = *op.mr;
  for (uint32_t i = 0; i < count; ++i) {
    const BatchPost& b = posts[i];
    PostResult r = PostResult::kOk;
    switch (op.op) {
      case OpKind::kSend:
        r = postSend(mr, op.offset, op.length, b.context, b.signaled);
        break;
      case OpKind::kRecv:
        r = postRecv(mr, op.offset, op.length, b.context);
        break;
      case OpKind::kWrite:
        r = postWrite(mr, op.offset, op.length, op.remote, op.remoteOffset, b.context, b.signaled);
        break;
      case OpKind::kRead:
        r = postRead(mr, op.offset, op.length, op.remote, op.remoteOffset, b.context);
        break;
    }
    if (r != PostResult::kOk) return i;
  }
  return count;
}

uint32_t Endpoint::postRun(const PreparedOp& op, uint64_t context, uint32_t count, bool signaled) {
  BatchPost b[kMaxRunPosts];
  uint32_t done = 0;
  while (done < count) {
    const uint32_t n = std::min(count - done, kMaxRunPosts);
    for (uint32_t k = 0; k < n; ++k)
      b[k] = BatchPost{context, signaled && done + k + 1 == count};
    const uint32_t got = postBatch(op, b, n);
    done += got;
    if (got < n) break;
  }
  return done;
}

}  // namespace rdmabench::transport
