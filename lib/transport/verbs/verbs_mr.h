#pragma once
// Memory registration of the verbs backend (ibv_reg_mr on the device's PD) and the range and
// rkey checks of posts. Internal to lib/transport/verbs/.

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>

#include "common/bytes.h"
#include "transport/transport.h"
#include "transport/verbs/verbs_core.h"

namespace rdmabench::transport::verbs {

// One ibv_mr with local write, remote write and remote read access. Throws TransportError
// when ibv_reg_mr fails (hinting at `ulimit -l` on ENOMEM/EPERM).
class VerbsMemoryRegion : public MemoryRegion {
 public:
  VerbsMemoryRegion(std::shared_ptr<Core> core, void* ptr, size_t bytes);

  uint8_t* data() const override { return ptr_; }
  size_t size() const override { return size_; }
  RemoteRegion exportRegion() const override {
    RemoteRegion r;
    r.addr = reinterpret_cast<uint64_t>(ptr_);
    r.length = size_;
    r.key.resize(4);
    putLe(r.key.data(), mr_->rkey, 4);
    return r;
  }
  uint32_t lkey() const { return mr_->lkey; }

 private:
  std::shared_ptr<Core> core_;
  uint8_t* ptr_;
  size_t size_;
  MrPtr mr_;
};

// Throws UsageError unless [offset, offset+length) lies inside `mr`.
void checkRange(const char* call, const MemoryRegion& mr, uint64_t offset, uint32_t length);

// The 4-byte little-endian rkey of `remote`; throws UsageError on a wrong key size or a range
// outside the remote region.
uint32_t rkeyOf(const char* call, const RemoteRegion& remote, uint64_t remoteOffset,
                uint32_t length);

}  // namespace rdmabench::transport::verbs
