#pragma once
// The op-context pool of the ofi backend: a fixed array of slots, one per operation in flight,
// whose addresses are handed to libfabric as op_context, and the bookkeeping that reports
// completions in the order transport.h promises (send/write/read completions of a connection
// in post order, receives as they complete). Pure: no libfabric calls, so it is unit-tested
// without a provider (tests/unit/ofi_completion_pool_test.cc).
//
// ProviderContext is the storage libfabric owns while an operation is posted (fi_context2);
// it is the first member of a slot, so the slot's address is the op_context libfabric returns.
// Thread-safety: none (one thread at a time, like the Device that owns the pool).

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "transport/transport.h"

namespace rdmabench::transport::ofi {

enum class SlotState : uint8_t { kFree, kPosted, kDone, kReady };

// The operations of one connection in flight: pool indices of its sends/writes/reads in post
// order (a ring of capacity = the tx depth) and a count of its posted receives.
struct ConnQueues {
  std::vector<uint32_t> txRing;
  uint32_t txHead = 0;
  uint32_t txCount = 0;
  uint32_t recvCount = 0;
};

template <class ProviderContext>
class CompletionPool {
 public:
  // One operation in flight. libfabric owns `fi` while the operation is posted.
  struct Slot {
    ProviderContext fi;
    uint64_t user;
    uint32_t bytes;
    uint32_t conn;
    uint32_t nextFree;
    int32_t status;    // 0, or the positive libfabric error number (-1: none given)
    uint32_t errorId;  // ErrorTexts id of a failed operation's text, else 0
    OpKind op;
    SlotState state;
    bool signaled;
  };
  static_assert(std::is_standard_layout_v<Slot>);
  static_assert(offsetof(Slot, fi) == 0);

  // (Re)creates `size` free slots; the ready queue holds at most `size` entries.
  void init(uint32_t size) {
    pool_.resize(size);
    ready_.resize(size);
    for (uint32_t i = 0; i < size; ++i) {
      pool_[i] = Slot{};
      pool_[i].nextFree = i + 1;
      pool_[i].state = SlotState::kFree;
    }
    freeHead_ = 0;
    freeCount_ = size;
  }

  uint32_t size() const { return static_cast<uint32_t>(pool_.size()); }
  uint32_t freeCount() const { return freeCount_; }
  Slot& operator[](uint32_t idx) { return pool_[idx]; }
  const Slot& operator[](uint32_t idx) const { return pool_[idx]; }
  std::vector<Slot>& slots() { return pool_; }

  // Takes a free slot (the caller checks freeCount() != 0 first) in state kPosted.
  uint32_t allocate(uint32_t conn, OpKind op, uint64_t user, uint32_t bytes, bool signaled) {
    const uint32_t idx = freeHead_;
    Slot& o = pool_[idx];
    freeHead_ = o.nextFree;
    --freeCount_;
    o.user = user;
    o.bytes = bytes;
    o.conn = conn;
    o.status = 0;
    o.errorId = 0;
    o.op = op;
    o.state = SlotState::kPosted;
    o.signaled = signaled;
    return idx;
  }

  void release(uint32_t idx) {
    Slot& o = pool_[idx];
    o.state = SlotState::kFree;
    o.nextFree = freeHead_;
    freeHead_ = idx;
    ++freeCount_;
  }

  // Queues slot `idx` for reporting.
  void pushReady(uint32_t idx) {
    pool_[idx].state = SlotState::kReady;
    ready_[(readyHead_ + readyCount_) % ready_.size()] = idx;
    ++readyCount_;
  }

  // True when a completion waits to be reported (poll() would return it without the provider).
  bool anyReady() const { return readyCount_ != 0; }

  // Next slot to report (in report order); false when none is ready. The caller releases it.
  bool popReady(uint32_t& idx) {
    if (readyCount_ == 0) return false;
    idx = ready_[readyHead_];
    readyHead_ = (readyHead_ + 1) % ready_.size();
    --readyCount_;
    return true;
  }

  // Appends a send-side slot to `q` in post order (the caller checks q.txCount < depth).
  void pushTx(ConnQueues& q, uint32_t idx) {
    q.txRing[(q.txHead + q.txCount) % q.txRing.size()] = idx;
    ++q.txCount;
  }

  // Moves the completed slots at the head of `q` to the ready queue, stopping at the first
  // send-side operation still in flight.
  void drainTx(ConnQueues& q) {
    while (q.txCount != 0) {
      const uint32_t idx = q.txRing[q.txHead];
      if (pool_[idx].state != SlotState::kDone) break;
      q.txHead = static_cast<uint32_t>((q.txHead + 1) % q.txRing.size());
      --q.txCount;
      pushReady(idx);
    }
  }

  // Records the completion of slot `idx` (of connection queues `q`) with `len` bytes and
  // `status` (0 = success): a receive is ready at once, a send-side operation when every
  // earlier one of its connection is.
  void complete(ConnQueues& q, uint32_t idx, uint64_t len, int status) {
    Slot& o = pool_[idx];
    o.status = status;
    if (o.op == OpKind::kRecv) {
      if (status == 0) o.bytes = static_cast<uint32_t>(len);
      --q.recvCount;
      pushReady(idx);
    } else {
      o.state = SlotState::kDone;
      drainTx(q);
    }
  }

  // Index of the slot at `opContext`, or UINT32_MAX when it is not one of ours.
  uint32_t indexOf(const void* opContext) const {
    const auto* o = static_cast<const Slot*>(opContext);
    if (o < pool_.data() || o >= pool_.data() + pool_.size()) return UINT32_MAX;
    return static_cast<uint32_t>(o - pool_.data());
  }

 private:
  std::vector<Slot> pool_;
  uint32_t freeHead_ = 0;
  uint32_t freeCount_ = 0;
  std::vector<uint32_t> ready_;  // completed slots waiting for poll(), in report order
  uint32_t readyHead_ = 0;
  uint32_t readyCount_ = 0;
};

}  // namespace rdmabench::transport::ofi
