// The null transport (null_device.h): every post completes at once in a power-of-two ring.
#include "transport/null_device.h"

#include <cstring>
#include <vector>

#include "common/error.h"

namespace rdmabench::transport {
namespace {

class NullRegion final : public MemoryRegion {
 public:
  NullRegion(void* p, size_t n) : p_(static_cast<uint8_t*>(p)), n_(n) {}
  uint8_t* data() const override { return p_; }
  size_t size() const override { return n_; }
  RemoteRegion exportRegion() const override {
    RemoteRegion r;
    r.addr = reinterpret_cast<uint64_t>(p_);
    r.length = n_;
    r.key = {0, 0, 0, 0};
    return r;
  }

 private:
  uint8_t* p_;
  size_t n_;
};

class NullDevice final : public Device {
 public:
  explicit NullDevice(const DeviceOptions& o)
      : sq_(o.txDepth ? o.txDepth : 128), rq_(o.rxDepth ? o.rxDepth : 512) {
    ring_.resize(1024);
  }
  std::string backend() const override { return "null"; }
  std::string name() const override { return "null0"; }
  Caps caps() const override {
    Caps c;
    c.rmaWrite = c.rmaRead = true;
    c.maxMessageBytes = 1ull << 30;
    c.maxSendQueue = sq_;
    c.maxRecvQueue = rq_;
    c.inlineBytes = 0;
    c.maxOutstandingReads = sq_;
    return c;
  }
  std::unique_ptr<MemoryRegion> registerMemory(void* p, size_t n) override {
    return std::make_unique<NullRegion>(p, n);
  }
  std::unique_ptr<Connector> createConnector() override {
    throw UsageError("the null device connects with openNullEndpoint(), not a Connector");
  }
  size_t poll(Completion* out, size_t max) override {
    size_t n = 0;
    while (n < max && head_ != tail_)
      out[n++] = ring_[head_++ & (ring_.size() - 1)];
    return n;
  }

  // Queues a completion for the next poll (the ring doubles when full: never in steady state).
  void complete(const Completion& c) {
    if (tail_ - head_ == ring_.size()) grow();
    ring_[tail_++ & (ring_.size() - 1)] = c;
  }

 private:
  void grow() {
    std::vector<Completion> bigger(ring_.size() * 2);
    for (uint64_t i = head_; i != tail_; ++i)
      bigger[i & (bigger.size() - 1)] = ring_[i & (ring_.size() - 1)];
    ring_.swap(bigger);
  }

  uint32_t sq_, rq_;
  std::vector<Completion> ring_;  // power-of-two size
  uint64_t head_ = 0, tail_ = 0;
};

// A FIFO on a power-of-two ring that only grows (doubling): after the first round trips it
// allocates nothing, unlike std::deque, which allocates a block every few hundred bytes pushed.
// Popped slots keep their value (a pending message's buffer keeps its capacity for reuse).
template <typename T>
class GrowingFifo {
 public:
  bool empty() const { return head_ == tail_; }
  T& front() { return slots_[head_ & (slots_.size() - 1)]; }
  void pop() { ++head_; }
  // The slot to fill next (already counted in).
  T& push() {
    if (tail_ - head_ == slots_.size()) grow();
    return slots_[tail_++ & (slots_.size() - 1)];
  }

 private:
  void grow() {
    std::vector<T> bigger(slots_.empty() ? 16 : slots_.size() * 2);
    for (uint64_t i = head_; i != tail_; ++i)
      bigger[i - head_] = std::move(slots_[i & (slots_.size() - 1)]);
    tail_ -= head_;
    head_ = 0;
    slots_ = std::move(bigger);
  }
  std::vector<T> slots_;
  uint64_t head_ = 0, tail_ = 0;
};

class NullEndpoint final : public Endpoint {
 public:
  explicit NullEndpoint(NullDevice& dev) : dev_(dev) {}

  PostResult postSend(const MemoryRegion& mr, uint64_t offset, uint32_t length, uint64_t context,
                      bool signaled) override {
    const uint8_t* from = mr.data() + offset;
    if (recvs_.empty()) {
      pending_.push().assign(from, from + length);
    } else {
      deliver(from, length);
    }
    if (signaled) dev_.complete(done(context, OpKind::kSend, length));
    return PostResult::kOk;
  }
  PostResult postRecv(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                      uint64_t context) override {
    recvs_.push() = Recv{mr.data() + offset, length, context};
    if (!pending_.empty()) {
      const std::vector<uint8_t>& msg = pending_.front();
      pending_.pop();  // the slot keeps its bytes until a later push reuses it
      deliver(msg.data(), static_cast<uint32_t>(msg.size()));
    }
    return PostResult::kOk;
  }
  PostResult postWrite(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                       const RemoteRegion& remote, uint64_t remoteOffset, uint64_t context,
                       bool signaled) override {
    std::memcpy(reinterpret_cast<uint8_t*>(remote.addr + remoteOffset), mr.data() + offset, length);
    if (signaled) dev_.complete(done(context, OpKind::kWrite, length));
    return PostResult::kOk;
  }
  PostResult postRead(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                      const RemoteRegion& remote, uint64_t remoteOffset,
                      uint64_t context) override {
    std::memcpy(mr.data() + offset, reinterpret_cast<const uint8_t*>(remote.addr + remoteOffset),
                length);
    dev_.complete(done(context, OpKind::kRead, length));
    return PostResult::kOk;
  }
  // Writes and reads of a batch: a copy and, when asked, a completion each; no virtual call.
  uint32_t postBatch(const PreparedOp& op, const BatchPost* posts, uint32_t count) override {
    if (op.op != OpKind::kWrite && op.op != OpKind::kRead)
      return Endpoint::postBatch(op, posts, count);
    auto* local = reinterpret_cast<uint8_t*>(op.localAddr);
    auto* remote = reinterpret_cast<uint8_t*>(op.remoteAddr);
    const bool write = op.op == OpKind::kWrite;
    for (uint32_t i = 0; i < count; ++i) {
      if (write) {
        std::memcpy(remote, local, op.length);
      } else {
        std::memcpy(local, remote, op.length);
      }
      if (posts[i].signaled || !write) dev_.complete(done(posts[i].context, op.op, op.length));
    }
    return count;
  }
  // A run of writes: a copy each and, when asked, one completion (the last post's).
  uint32_t postRun(const PreparedOp& op, uint64_t context, uint32_t count, bool signaled) override {
    if (op.op != OpKind::kWrite) return Endpoint::postRun(op, context, count, signaled);
    auto* local = reinterpret_cast<uint8_t*>(op.localAddr);
    auto* remote = reinterpret_cast<uint8_t*>(op.remoteAddr);
    for (uint32_t i = 0; i < count; ++i)
      std::memcpy(remote, local, op.length);
    if (signaled) dev_.complete(done(context, OpKind::kWrite, op.length));
    return count;
  }
  std::string peerName() const override { return "self"; }

 private:
  struct Recv {
    uint8_t* to;
    uint32_t length;
    uint64_t context;
  };
  static Completion done(uint64_t context, OpKind op, uint32_t bytes) {
    Completion c;
    c.context = context;
    c.bytes = bytes;
    c.op = op;
    return c;
  }
  // Delivers one message into the oldest posted receive.
  void deliver(const uint8_t* from, uint32_t length) {
    Recv r = recvs_.front();
    recvs_.pop();
    Completion c = done(r.context, OpKind::kRecv, length);
    if (length > r.length) {
      c.status = CompletionStatus::kTruncated;
      c.bytes = 0;
      c.code = 1;
    } else {
      std::memcpy(r.to, from, length);
    }
    dev_.complete(c);
  }

  NullDevice& dev_;
  GrowingFifo<Recv> recvs_;
  GrowingFifo<std::vector<uint8_t>> pending_;  // sends that found no receive
};

}  // namespace

std::unique_ptr<Device> openNullDevice(const DeviceOptions& options) {
  return std::make_unique<NullDevice>(options);
}

std::unique_ptr<Endpoint> openNullEndpoint(Device& device) {
  auto* dev = dynamic_cast<NullDevice*>(&device);
  if (!dev) throw UsageError("openNullEndpoint: not a null device");
  return std::make_unique<NullEndpoint>(*dev);
}

}  // namespace rdmabench::transport
