// Completion side of the ofi backend: fi_cq_read / fi_cq_readerr into the op-context pool,
// poll(), and the CQ drain before teardown.

#include <poll.h>

#include <cerrno>

#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <string>

#include "common/clock.h"
#include "common/error.h"
#include "transport/ofi/ofi_device_impl.h"

namespace rdmabench::transport::ofi {

namespace {

// A slot's status (0 or the positive libfabric error number) as the transport's code.
CompletionStatus completionStatus(int32_t status) {
  if (status == 0) return CompletionStatus::kSuccess;
  if (status == FI_ETRUNC) return CompletionStatus::kTruncated;
  if (status == FI_ECANCELED) return CompletionStatus::kFlushed;
  return CompletionStatus::kError;
}

}  // namespace

void OfiDevice::drainForClose() noexcept {
  // ofi_rxm over verbs still has protocol work queued after the last user completion (SAR
  // acknowledgements); closing the endpoint before it has run crashed libfabric 1.17 inside
  // fi_close(ep). Progress the CQ until it has been quiet for kDrainQuietMs (at most
  // kDrainMaxMs), dropping whatever completes: the device is going away.
  if (!cq_ || !posted_) return;
  fi_cq_tagged_entry entries[kCqBatch];  // also large enough for kCqBatch fi_cq_msg_entry
  const Deadline hard(kDrainMaxMs);
  int64_t quietSince = nowNs();
  while (!hard.expired() && nowNs() - quietSince < kDrainQuietMs * 1'000'000) {
    const ssize_t got = fi_cq_read(cq_.get(), entries, kCqBatch);
    if (got == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      if (fi_cq_readerr(cq_.get(), &err, 0) < 0) return;
    } else if (got <= 0) {
      if (got != -FI_EAGAIN) return;
      continue;
    }
    quietSince = nowNs();
  }
}

void OfiDevice::finish(uint32_t idx, uint64_t len, int status) {
  pool_.complete(conns_[pool_[idx].conn]->queues, idx, len, status);
}

void OfiDevice::readError() {
  fi_cq_err_entry err{};
  ssize_t rc = fi_cq_readerr(cq_.get(), &err, 0);
  if (rc == -FI_EAGAIN) return;
  if (rc < 0) fail("fi_cq_readerr", rc);
  char buf[256] = "";
  const char* provText = fi_cq_strerror(cq_.get(), err.prov_errno, err.err_data, buf, sizeof(buf));
  const uint32_t idx = pool_.indexOf(err.op_context);
  if (idx == UINT32_MAX)
    throw TransportError(
        fmt::format("fi_cq_readerr on {}: error without operation context: {} "
                    "(provider: {})",
                    label_, fi_strerror(err.err), provText ? provText : "?"));
  const auto& o = pool_[idx];
  const ConnState& c = *conns_[o.conn];
  std::string extra = err.err == FI_ETRUNC ? fmt::format(", {} B did not fit", err.olen) : "";
  pool_[idx].errorId = errors_.keep(fmt::format(
      "{} of {} B with peer {} (connection tag {}) on {}: {}{} (provider: {}, prov_errno {})",
      toString(o.op), o.bytes, c.peerName, c.localTag, label_, fi_strerror(err.err), extra,
      provText ? provText : "?", err.prov_errno));
  finish(idx, err.len, err.err != 0 ? err.err : -1);
}

void OfiDevice::progress() {
  if (sel_.msg)
    progressAs<fi_cq_msg_entry>();
  else
    progressAs<fi_cq_tagged_entry>();
}

template <class Entry>
void OfiDevice::progressAs() {
  Entry entries[kCqBatch];
  for (int round = 0; round < kCqReadsPerPoll; ++round) {
    const ssize_t got = fi_cq_read(cq_.get(), entries, kCqBatch);
    if (got > 0) {
      for (ssize_t i = 0; i < got; ++i) {
        const uint32_t idx = pool_.indexOf(entries[i].op_context);
        if (idx != UINT32_MAX) finish(idx, entries[i].len, 0);
      }
      if (static_cast<size_t>(got) < kCqBatch) return;
      continue;
    }
    if (got == -FI_EAGAIN) return;
    if (got == -FI_EAVAIL) {
      readError();
      continue;
    }
    fail("fi_cq_read", got);
  }
}

void OfiDevice::waitForEvent(int timeoutMs) {
  if (waitFd_ < 0 || pool_.anyReady()) return;
  fid* fids[1] = {&cq_->fid};
  int rc = fi_trywait(fabric_.get(), fids, 1);
  if (rc == -FI_EAGAIN) return;  // completions to read or progress to make: the caller polls
  if (rc != 0) fail("fi_trywait", rc);
  pollfd p{waitFd_, POLLIN, 0};
  // EINTR (a signal) simply returns: the caller checks interrupted().
  if (::poll(&p, 1, timeoutMs) < 0 && errno != EINTR)
    throw SystemError(fmt::format("poll on the completion queue wait fd of {}", label_), errno);
}

size_t OfiDevice::poll(Completion* out, size_t max) {
  progress();
  size_t n = 0;
  uint32_t idx = 0;
  while (n < max && pool_.popReady(idx)) {
    const auto& o = pool_[idx];
    if (conns_[o.conn]->connected && (o.signaled || o.status != 0)) {
      Completion& d = out[n++];
      d.context = o.user;
      d.op = o.op;
      d.bytes = o.bytes;
      d.status = completionStatus(o.status);
      d.code = o.status;
      d.errorId = o.errorId;
    }
    pool_.release(idx);
  }
  return n;
}

}  // namespace rdmabench::transport::ofi
