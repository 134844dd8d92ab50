#pragma once
// A fake transport for engine tests: no network, no threads, a clock that advances only when
// the device is polled. FakeDevice::poll() delivers queued completions once their due poll count
// is reached; FakeEndpoint plays an echoing peer (every send comes back as a receive, every write
// lands back in the local receive area) after `echoPolls` polls. Every poll advances the fake
// clock (fakeNowNs) by `nsPerPoll`, so a test can run seconds of fake time in milliseconds and
// inject that clock into Progress::setClock. Single-threaded, like the real transports.

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "transport/transport.h"

namespace rdmabench::testing {

// The fake clock, ns; advanced by FakeDevice::poll. Use as Progress::setClock(&fakeNowNs).
inline int64_t& fakeClockNs() {
  static int64_t ns = 0;
  return ns;
}
inline int64_t fakeNowNs() {
  return fakeClockNs();
}

class FakeRegion : public transport::MemoryRegion {
 public:
  FakeRegion(void* p, size_t n) : p_(static_cast<uint8_t*>(p)), n_(n) {}
  uint8_t* data() const override { return p_; }
  size_t size() const override { return n_; }
  transport::RemoteRegion exportRegion() const override {
    transport::RemoteRegion r;
    r.addr = reinterpret_cast<uint64_t>(p_);
    r.length = n_;
    r.key = {1, 2, 3, 4};
    return r;
  }

 private:
  uint8_t* p_;
  size_t n_;
};

class FakeDevice : public transport::Device {
 public:
  explicit FakeDevice(int64_t nsPerPoll = 1000) : nsPerPoll_(nsPerPoll) {}
  std::string backend() const override { return "fake"; }
  std::string name() const override { return "fake0"; }
  transport::Caps caps() const override {
    transport::Caps c;
    c.rmaWrite = c.rmaRead = true;
    c.maxMessageBytes = 1 << 20;
    c.maxSendQueue = c.maxRecvQueue = 128;
    return c;
  }
  std::unique_ptr<transport::MemoryRegion> registerMemory(void* p, size_t n) override {
    return std::make_unique<FakeRegion>(p, n);
  }
  std::unique_ptr<transport::Connector> createConnector() override { return nullptr; }

  size_t poll(transport::Completion* out, size_t max) override {
    ++polls_;
    fakeClockNs() += nsPerPoll_;
    while (!due_.empty() && due_.front().atPoll <= polls_) {
      Due d = std::move(due_.front());
      due_.pop_front();
      if (d.action) d.action();
      if (d.report) ready_.push_back(std::move(d.completion));
    }
    size_t n = 0;
    while (n < max && !ready_.empty()) {
      out[n++] = std::move(ready_.front());
      ready_.pop_front();
    }
    completionsReported += n;
    return n;
  }

  // Reports `c` at the next poll.
  void complete(transport::Completion c) { ready_.push_back(std::move(c)); }

  // Queues `c` (reported when `report`) and `action` (run just before) `afterPolls` polls from
  // now. Order of delivery = order of queueing.
  void schedule(uint64_t afterPolls, transport::Completion c, bool report,
                std::function<void()> action = {}) {
    uint64_t at = polls_ + afterPolls;
    if (!due_.empty() && due_.back().atPoll > at) at = due_.back().atPoll;
    due_.push_back(Due{at, std::move(c), report, std::move(action)});
  }

  uint64_t polls() const { return polls_; }
  uint64_t completionsReported = 0;

 private:
  struct Due {
    uint64_t atPoll;
    transport::Completion completion;
    bool report;
    std::function<void()> action;
  };
  int64_t nsPerPoll_;
  uint64_t polls_ = 0;
  std::deque<Due> due_;
  std::deque<transport::Completion> ready_;
};

// An endpoint whose peer echoes: a send returns as a receive into the oldest posted receive
// buffer; a write of [offset, +len) lands at remoteOffset of the same local region (the peer
// wrote the same bytes back). Unsignaled posts report no completion.
class FakeEndpoint : public transport::Endpoint {
 public:
  FakeEndpoint(FakeDevice& device, uint64_t echoPolls) : dev_(device), echo_(echoPolls) {}

  transport::PostResult postSend(const transport::MemoryRegion& mr, uint64_t offset,
                                 uint32_t length, uint64_t context, bool signaled) override {
    ++sends_;
    if (!signaled) ++unsignaled_;
    dev_.schedule(1, completion(context, transport::OpKind::kSend, length), signaled);
    std::vector<uint8_t> copy(mr.data() + offset, mr.data() + offset + length);
    dev_.schedule(echo_, {}, false, [this, copy = std::move(copy)] { deliver(copy); });
    return transport::PostResult::kOk;
  }
  transport::PostResult postRecv(const transport::MemoryRegion& mr, uint64_t offset,
                                 uint32_t length, uint64_t context) override {
    ++recvsPosted_;
    recvs_.push_back(Recv{mr.data() + offset, length, context});
    if (!pending_.empty()) {
      std::vector<uint8_t> bytes = std::move(pending_.front());
      pending_.pop_front();
      deliver(bytes);
    }
    return transport::PostResult::kOk;
  }
  transport::PostResult postWrite(const transport::MemoryRegion& mr, uint64_t offset,
                                  uint32_t length, const transport::RemoteRegion& /*remote*/,
                                  uint64_t remoteOffset, uint64_t context, bool signaled) override {
    ++sends_;
    if (!signaled) ++unsignaled_;
    dev_.schedule(1, completion(context, transport::OpKind::kWrite, length), signaled);
    uint8_t* from = mr.data() + offset;
    uint8_t* to = mr.data() + remoteOffset;
    std::vector<uint8_t> copy(from, from + length);
    dev_.schedule(echo_, {}, false,
                  [to, copy = std::move(copy)] { std::memcpy(to, copy.data(), copy.size()); });
    return transport::PostResult::kOk;
  }
  transport::PostResult postRead(const transport::MemoryRegion& /*mr*/, uint64_t /*offset*/,
                                 uint32_t length, const transport::RemoteRegion& /*remote*/,
                                 uint64_t /*remoteOffset*/, uint64_t context) override {
    dev_.schedule(echo_, completion(context, transport::OpKind::kRead, length), true);
    return transport::PostResult::kOk;
  }
  std::string peerName() const override { return "fake-peer"; }

  uint64_t sends() const { return sends_; }
  uint64_t unsignaled() const { return unsignaled_; }
  uint64_t recvsPosted() const { return recvsPosted_; }

 private:
  struct Recv {
    uint8_t* where;
    uint32_t length;
    uint64_t context;
  };
  static transport::Completion completion(uint64_t ctx, transport::OpKind op, uint32_t bytes) {
    transport::Completion c;
    c.context = ctx;
    c.op = op;
    c.bytes = bytes;
    return c;
  }
  // Runs inside FakeDevice::poll: lands the echoed message and reports its receive at once.
  void deliver(const std::vector<uint8_t>& bytes) {
    if (recvs_.empty()) {
      pending_.push_back(bytes);
      return;
    }
    Recv r = recvs_.front();
    recvs_.pop_front();
    std::memcpy(r.where, bytes.data(), std::min<size_t>(bytes.size(), r.length));
    dev_.complete(
        completion(r.context, transport::OpKind::kRecv, static_cast<uint32_t>(bytes.size())));
  }

  FakeDevice& dev_;
  uint64_t echo_;
  std::deque<Recv> recvs_;
  std::deque<std::vector<uint8_t>> pending_;
  uint64_t sends_ = 0, unsignaled_ = 0, recvsPosted_ = 0;
};

}  // namespace rdmabench::testing
