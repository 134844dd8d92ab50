// Posts of the ofi backend: sends (inject below inject_size), receives, RMA writes/reads.
// Every post takes a pool slot (completion_pool.h) except unsignaled injects.

#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "common/error.h"
#include "transport/ofi/ofi_device_impl.h"

namespace rdmabench::transport::ofi {

void OfiDevice::checkRange(const char* op, const MemoryRegion& mr, uint64_t offset,
                           uint32_t length) {
  posted_ = true;
  if (offset > mr.size() || length > mr.size() - offset)
    throw UsageError(
        fmt::format("{} on {}: range [{}, {}+{}) outside the registered region of "
                    "{} B",
                    op, label_, offset, offset, length, mr.size()));
  if (length > maxMessage_)
    throw UsageError(fmt::format("{} on {}: message of {} B exceeds max_msg_size {} B", op, label_,
                                 length, maxMessage_));
}

PostResult OfiDevice::postSend(uint32_t conn, const MemoryRegion& mr, uint64_t offset,
                               uint32_t length, uint64_t context, bool signaled) {
  checkRange("postSend", mr, offset, length);
  ConnState& c = *conns_[conn];
  const auto& omr = static_cast<const OfiMemoryRegion&>(mr);
  void* buf = omr.data() + offset;
  const bool full = pool_.freeCount() == 0 || c.queues.txCount == txDepth_;
  if (length <= injectLimit_) {
    // Injected: the buffer is free at once and libfabric reports no completion, so a
    // signaled inject gets a slot that is already done (kept in post order by drainTx).
    if (signaled && full) return retry();
    ssize_t rc = sel_.msg ? fi_inject(c.ep, buf, length, 0)
                          : fi_tinject(c.ep, buf, length, c.addr, c.peerTag);
    if (rc == -FI_EAGAIN) return retry();
    if (rc != 0)
      throw TransportError(fmt::format("{} of {} B to {} on {}: {}",
                                       sel_.msg ? "fi_inject" : "fi_tinject", length, c.peerName,
                                       label_, fiError(rc)));
    if (signaled) {
      const uint32_t idx = pool_.allocate(conn, OpKind::kSend, context, length, true);
      pool_[idx].state = SlotState::kDone;
      pool_.pushTx(c.queues, idx);
      pool_.drainTx(c.queues);
    }
    return PostResult::kOk;
  }
  if (full) return retry();
  const uint32_t idx = pool_.allocate(conn, OpKind::kSend, context, length, signaled);
  ssize_t rc = sel_.msg ? fi_send(c.ep, buf, length, omr.desc(), 0, &pool_[idx])
                        : fi_tsend(c.ep, buf, length, omr.desc(), c.addr, c.peerTag, &pool_[idx]);
  if (rc != 0) {
    pool_.release(idx);
    if (rc == -FI_EAGAIN) return retry();
    throw TransportError(fmt::format("{} of {} B to {} on {}: {}",
                                     sel_.msg ? "fi_send" : "fi_tsend", length, c.peerName, label_,
                                     fiError(rc)));
  }
  pool_.pushTx(c.queues, idx);
  return PostResult::kOk;
}

PostResult OfiDevice::postRecv(uint32_t conn, const MemoryRegion& mr, uint64_t offset,
                               uint32_t length, uint64_t context) {
  checkRange("postRecv", mr, offset, length);
  ConnState& c = *conns_[conn];
  if (pool_.freeCount() == 0 || c.queues.recvCount == rxDepth_) return retry();
  const auto& omr = static_cast<const OfiMemoryRegion&>(mr);
  const uint32_t idx = pool_.allocate(conn, OpKind::kRecv, context, length, true);
  // Tag = our connection id, ignore = 0: matches only what this connection's peer sent us.
  // FI_EP_MSG: the endpoint is the connection.
  void* buf = omr.data() + offset;
  ssize_t rc = sel_.msg ? fi_recv(c.ep, buf, length, omr.desc(), 0, &pool_[idx])
                        : fi_trecv(c.ep, buf, length, omr.desc(), FI_ADDR_UNSPEC, c.localTag, 0,
                                   &pool_[idx]);
  if (rc != 0) {
    pool_.release(idx);
    if (rc == -FI_EAGAIN) return retry();
    throw TransportError(fmt::format("{} of {} B from {} on {}: {}",
                                     sel_.msg ? "fi_recv" : "fi_trecv", length, c.peerName, label_,
                                     fiError(rc)));
  }
  ++c.queues.recvCount;
  return PostResult::kOk;
}

PostResult OfiDevice::postRma(uint32_t conn, OpKind op, const MemoryRegion& mr, uint64_t offset,
                              uint32_t length, const RemoteRegion& remote, uint64_t remoteOffset,
                              uint64_t context, bool signaled) {
  const char* name = op == OpKind::kWrite ? "postWrite" : "postRead";
  if (!sel_.rmaGranted)
    throw TransportError(fmt::format("{} on {}: provider did not grant FI_RMA", name, label_));
  checkRange(name, mr, offset, length);
  if (remoteOffset > remote.length || length > remote.length - remoteOffset)
    throw UsageError(
        fmt::format("{} on {}: remote range [{}, {}+{}) outside the peer's region "
                    "of {} B",
                    name, label_, remoteOffset, remoteOffset, length, remote.length));
  if (remote.key.size() != 8)
    throw UsageError(fmt::format("{} on {}: remote key of {} B (libfabric keys have 8)", name,
                                 label_, remote.key.size()));
  ConnState& c = *conns_[conn];
  const auto& omr = static_cast<const OfiMemoryRegion&>(mr);
  void* buf = omr.data() + offset;
  const uint64_t key = getLe(remote.key.data(), 8);
  const uint64_t raddr = remote.addr + remoteOffset;
  const bool full = pool_.freeCount() == 0 || c.queues.txCount == txDepth_;
  if (op == OpKind::kWrite && length <= injectLimit_) {
    if (signaled && full) return retry();
    ssize_t rc = fi_inject_write(c.ep, buf, length, c.addr, raddr, key);
    if (rc == -FI_EAGAIN) return retry();
    if (rc != 0)
      throw TransportError(fmt::format("fi_inject_write of {} B to {} on {}: {}", length,
                                       c.peerName, label_, fiError(rc)));
    if (signaled) {
      const uint32_t idx = pool_.allocate(conn, op, context, length, true);
      pool_[idx].state = SlotState::kDone;
      pool_.pushTx(c.queues, idx);
      pool_.drainTx(c.queues);
    }
    return PostResult::kOk;
  }
  if (full) return retry();
  const uint32_t idx = pool_.allocate(conn, op, context, length, signaled);
  ssize_t rc = op == OpKind::kWrite
                   ? fi_write(c.ep, buf, length, omr.desc(), c.addr, raddr, key, &pool_[idx])
                   : fi_read(c.ep, buf, length, omr.desc(), c.addr, raddr, key, &pool_[idx]);
  if (rc != 0) {
    pool_.release(idx);
    if (rc == -FI_EAGAIN) return retry();
    throw TransportError(fmt::format("{} of {} B with {} on {}: {}",
                                     op == OpKind::kWrite ? "fi_write" : "fi_read", length,
                                     c.peerName, label_, fiError(rc)));
  }
  pool_.pushTx(c.queues, idx);
  return PostResult::kOk;
}

}  // namespace rdmabench::transport::ofi
