// Memory registration of the verbs backend (verbs_mr.h).

#include "transport/verbs/verbs_mr.h"

#include <cerrno>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/error.h"
#include "transport/verbs/verbs_address.h"

namespace rdmabench::transport::verbs {

VerbsMemoryRegion::VerbsMemoryRegion(std::shared_ptr<Core> core, void* ptr, size_t bytes)
    : core_(std::move(core)), ptr_(static_cast<uint8_t*>(ptr)), size_(bytes) {
  mr_.reset(ibv_reg_mr(core_->pd, ptr, bytes,
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
  if (mr_ == nullptr) {
    int err = errno;
    throw TransportError(fmt::format(
        "ibv_reg_mr of {} bytes on {}: {}{}", bytes, core_->name, errText(err),
        err == ENOMEM || err == EPERM ? " (locked-memory limit? check `ulimit -l`)" : ""));
  }
}

void checkRange(const char* call, const MemoryRegion& mr, uint64_t offset, uint32_t length) {
  if (offset > mr.size() || length > mr.size() - offset)
    throw UsageError(fmt::format("{}: range [{}, +{}) outside the {}-byte region", call, offset,
                                 length, mr.size()));
}

uint32_t rkeyOf(const char* call, const RemoteRegion& remote, uint64_t remoteOffset,
                uint32_t length) {
  if (remote.key.size() != 4)
    throw UsageError(
        fmt::format("{}: remote key has {} bytes, verbs rkeys have 4", call, remote.key.size()));
  if (remoteOffset > remote.length || length > remote.length - remoteOffset)
    throw UsageError(fmt::format("{}: remote range [{}, +{}) outside the {}-byte remote region",
                                 call, remoteOffset, length, remote.length));
  return static_cast<uint32_t>(getLe(remote.key.data(), 4));
}

}  // namespace rdmabench::transport::verbs
