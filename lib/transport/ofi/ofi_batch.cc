// The batch path of the ofi backend (transport.h: Endpoint::prepare / postBatch): validate once,
// then post with FI_MORE on every operation of a batch but the last, so a provider that defers
// work on FI_MORE rings its doorbell (or flushes its socket) once per batch.

#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <sys/uio.h>

#include <algorithm>
#include <string>

#include "common/error.h"
#include "transport/ofi/ofi_device_impl.h"

namespace rdmabench::transport::ofi {

PreparedOp OfiDevice::prepare(OpKind op, const MemoryRegion& mr, uint64_t offset, uint32_t length,
                              const RemoteRegion* remote, uint64_t remoteOffset) {
  const bool rma = op == OpKind::kWrite || op == OpKind::kRead;
  const std::string name = fmt::format("prepare {}", toString(op));
  if (rma && !sel_.rmaGranted)
    throw TransportError(fmt::format("{} on {}: provider did not grant FI_RMA", name, label_));
  checkRange(name.c_str(), mr, offset, length);
  const auto& omr = static_cast<const OfiMemoryRegion&>(mr);
  PreparedOp p = PreparedOp::local(op, mr, offset, length);
  p.localKey = reinterpret_cast<uint64_t>(omr.desc());
  if (!rma) return p;
  if (remote == nullptr) throw UsageError(fmt::format("{} on {}: no remote region", name, label_));
  if (remoteOffset > remote->length || length > remote->length - remoteOffset)
    throw UsageError(
        fmt::format("{} on {}: remote range [{}, {}+{}) outside the peer's region of {} B", name,
                    label_, remoteOffset, remoteOffset, length, remote->length));
  if (remote->key.size() != 8)
    throw UsageError(fmt::format("{} on {}: remote key of {} B (libfabric keys have 8)", name,
                                 label_, remote->key.size()));
  p.setRemote(*remote, remoteOffset);
  p.remoteKey = getLe(remote->key.data(), 8);
  return p;
}

// One injected send or write of a batch (fi_inject* take no flags: they leave at once).
ssize_t OfiDevice::injectOne(uint32_t conn, const PreparedOp& p, const BatchPost& b) {
  ConnState& c = *conns_[conn];
  const auto* buf = reinterpret_cast<const void*>(p.localAddr);
  ssize_t rc = p.op == OpKind::kWrite
                   ? fi_inject_write(c.ep, buf, p.length, c.addr, p.remoteAddr, p.remoteKey)
               : sel_.msg ? fi_inject(c.ep, buf, p.length, 0)
                          : fi_tinject(c.ep, buf, p.length, c.addr, c.peerTag);
  if (rc == -FI_EAGAIN) return rc;
  if (rc != 0)
    throw TransportError(fmt::format("{} of {} B to {} on {}: {}",
                                     p.op == OpKind::kWrite ? "fi_inject_write"
                                     : sel_.msg             ? "fi_inject"
                                                            : "fi_tinject",
                                     p.length, c.peerName, label_, fiError(rc)));
  if (b.signaled) {  // a slot that is already done, reported in post order (as postSend)
    const uint32_t idx = pool_.allocate(conn, p.op, b.context, p.length, true);
    pool_[idx].state = SlotState::kDone;
    pool_.pushTx(c.queues, idx);
    pool_.drainTx(c.queues);
  }
  return 0;
}

// The fi_*msg call of one operation with `flags` (FI_MORE or 0) and context `ctx`.
ssize_t OfiDevice::postMsg(const ConnState& c, const PreparedOp& p, uint64_t flags, void* ctx,
                           const char** call) const {
  iovec iov{reinterpret_cast<void*>(p.localAddr), p.length};
  void* desc = reinterpret_cast<void*>(p.localKey);
  const bool send = p.op == OpKind::kSend;
  if (p.op == OpKind::kWrite || p.op == OpKind::kRead) {
    fi_rma_iov rma{p.remoteAddr, p.length, p.remoteKey};
    fi_msg_rma m{&iov, &desc, 1, c.addr, &rma, 1, ctx, 0};
    *call = p.op == OpKind::kWrite ? "fi_writemsg" : "fi_readmsg";
    return p.op == OpKind::kWrite ? fi_writemsg(c.ep, &m, flags) : fi_readmsg(c.ep, &m, flags);
  }
  if (sel_.msg) {  // FI_EP_MSG: the endpoint is the connection
    fi_msg m{&iov, &desc, 1, 0, ctx, 0};
    *call = send ? "fi_sendmsg" : "fi_recvmsg";
    return send ? fi_sendmsg(c.ep, &m, flags) : fi_recvmsg(c.ep, &m, flags);
  }
  // Tags as in postSend/postRecv: we send with the peer's tag, receive only our own.
  fi_msg_tagged m{&iov, &desc, 1, send ? c.addr : FI_ADDR_UNSPEC, send ? c.peerTag : c.localTag,
                  0,    ctx,   0};
  *call = send ? "fi_tsendmsg" : "fi_trecvmsg";
  return send ? fi_tsendmsg(c.ep, &m, flags) : fi_trecvmsg(c.ep, &m, flags);
}

// One operation of a batch that takes a pool slot; -FI_EAGAIN or 0 (other errors throw).
ssize_t OfiDevice::postOne(uint32_t conn, const PreparedOp& p, const BatchPost& b, uint64_t flags) {
  ConnState& c = *conns_[conn];
  const bool signaled = b.signaled || p.op == OpKind::kRecv || p.op == OpKind::kRead;
  const uint32_t idx = pool_.allocate(conn, p.op, b.context, p.length, signaled);
  const char* call = "";
  const ssize_t rc = postMsg(c, p, flags, &pool_[idx], &call);
  if (rc != 0) {
    pool_.release(idx);
    if (rc == -FI_EAGAIN) return rc;
    throw TransportError(fmt::format("{} of {} B with {} on {}: {}", call, p.length, c.peerName,
                                     label_, fiError(rc)));
  }
  if (p.op == OpKind::kRecv)
    ++c.queues.recvCount;
  else
    pool_.pushTx(c.queues, idx);
  return 0;
}

uint32_t OfiDevice::postBatch(uint32_t conn, const PreparedOp& p, const BatchPost* posts,
                              uint32_t count) {
  ConnState& c = *conns_[conn];
  const bool recv = p.op == OpKind::kRecv;
  const bool inject = (p.op == OpKind::kSend || p.op == OpKind::kWrite) && p.length <= injectLimit_;
  // The prefix that fits our own queues: every post takes a slot but an unsignaled inject.
  uint32_t room = std::min(pool_.freeCount(),
                           recv ? rxDepth_ - c.queues.recvCount : txDepth_ - c.queues.txCount);
  uint32_t n = 0;
  for (; n < count; ++n) {
    if (inject && !posts[n].signaled) continue;
    if (room == 0) break;
    --room;
  }
  uint32_t i = 0;
  for (; i < n; ++i) {
    const uint64_t flags = i + 1 < n ? FI_MORE : 0;
    if ((inject ? injectOne(conn, p, posts[i]) : postOne(conn, p, posts[i], flags)) != 0) break;
  }
  // Queue full or -FI_EAGAIN (possibly after posts with FI_MORE): drive progress as retry()
  // does; the caller polls and posts the rest, whose last post goes without FI_MORE.
  if (i < count) progress();
  return i;
}

}  // namespace rdmabench::transport::ofi
