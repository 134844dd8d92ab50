// Known-answer tests of the bandwidth and ping-pong engines on a fake transport: two in-process
// devices joined by a scripted fabric whose clock advances by a fixed time per data message
// delivered at the target. So MB/s, RTT/2, warmup exclusion and which events start and stop the
// clock have exact answers. The "lazy" fabric completes posts locally at once and delivers them
// only when the target polls (socket / ofi semantics), so an engine that stopped its clock on
// local completion would report an interval near zero.

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "engine/bandwidth.h"
#include "engine/buffers.h"
#include "engine/link.h"
#include "engine/pattern.h"
#include "engine/pingpong.h"
#include "engine/progress.h"

namespace rdmabench::engine {
namespace {

using transport::Completion;
using transport::OpKind;
using transport::PostResult;

constexpr int64_t kNsPerMessage = 1000;  // 1 us per data message delivered
constexpr uint64_t kBytes = 1000;        // so every figure is 1000 MB/s

class FakeDevice;

struct Fabric {
  std::mutex m;
  int64_t timeNs = 0;
  bool lazy = false;          // local completion at post time, delivery when the target polls
  uint64_t corruptEvery = 0;  // flip a byte of every Nth delivered data payload
  uint64_t delivered = 0;
  uint64_t stallAt = 0;  // the Nth delivered data message (1-based) also adds stallNs
  int64_t stallNs = 0;
  uint64_t dataDelivered = 0;
  FakeDevice* dev[2] = {nullptr, nullptr};
};

std::atomic<Fabric*> gFabric{nullptr};
int64_t fakeClock() {
  Fabric* f = gFabric.load();
  std::lock_guard<std::mutex> g(f->m);
  return f->timeNs;
}

class FakeRegion : public transport::MemoryRegion {
 public:
  FakeRegion(uint8_t* p, size_t n) : p_(p), n_(n) {}
  uint8_t* data() const override { return p_; }
  size_t size() const override { return n_; }
  transport::RemoteRegion exportRegion() const override { return {0, n_, {}}; }

 private:
  uint8_t* p_;
  size_t n_;
};

struct Item {
  OpKind kind = OpKind::kSend;
  std::vector<uint8_t> data;  // send / write payload
  uint64_t remoteOffset = 0;
  uint8_t* readDest = nullptr;  // read: where the initiator wants the data
  uint32_t length = 0;
  uint64_t ctx = 0;
  bool signaled = true;
};

struct RecvPost {
  uint8_t* dst;
  uint32_t length;
  uint64_t ctx;
};

class FakeDevice : public transport::Device {
 public:
  FakeDevice(Fabric& f, int side, uint8_t* region) : f_(f), side_(side), region_(region) {
    f.dev[side] = this;
  }
  std::string backend() const override { return "fake"; }
  std::string name() const override { return "fake" + std::to_string(side_); }
  transport::Caps caps() const override {
    transport::Caps c;
    c.rmaWrite = c.rmaRead = true;
    c.maxMessageBytes = 1 << 20;
    c.maxSendQueue = 256;
    c.maxRecvQueue = 512;
    return c;
  }
  std::unique_ptr<transport::MemoryRegion> registerMemory(void*, size_t) override {
    throw Error("unused");
  }
  std::unique_ptr<transport::Connector> createConnector() override { throw Error("unused"); }

  size_t poll(Completion* out, size_t max) override {
    std::lock_guard<std::mutex> g(f_.m);
    FakeDevice& peer = *f_.dev[1 - side_];
    // Delivers at most one item per poll, in order (a send without a receive waits), so the
    // engine reads its clock between deliveries as it would on a real transport.
    if (!inbound_.empty()) {
      Item& it = inbound_.front();
      const bool data = ctxKind(it.ctx) == Ctx::kData;
      if (it.kind == OpKind::kSend) {
        if (rq_.empty()) return harvest(out, max);
        RecvPost r = rq_.front();
        rq_.pop_front();
        std::memcpy(r.dst, it.data.data(), it.length);
        if (data) corrupt(r.dst, it.length);
        cq_.push_back(Completion{.context = r.ctx, .bytes = it.length, .op = OpKind::kRecv});
      } else if (it.kind == OpKind::kWrite) {
        std::memcpy(region_ + it.remoteOffset, it.data.data(), it.length);
        if (data) corrupt(region_ + it.remoteOffset, it.length);
      } else {
        std::memcpy(it.readDest, region_ + it.remoteOffset, it.length);
        peer.cq_.push_back(Completion{.context = it.ctx, .bytes = it.length, .op = OpKind::kRead});
      }
      if (!f_.lazy && it.signaled && it.kind != OpKind::kRead)
        peer.cq_.push_back(Completion{.context = it.ctx, .bytes = it.length, .op = it.kind});
      if (data) f_.timeNs += kNsPerMessage + (++f_.dataDelivered == f_.stallAt ? f_.stallNs : 0);
      inbound_.pop_front();
    }
    return harvest(out, max);
  }

  size_t harvest(Completion* out, size_t max) {
    size_t n = 0;
    while (n < max && !cq_.empty()) {
      out[n++] = cq_.front();
      cq_.pop_front();
    }
    return n;
  }

  // Called by the endpoint with the fabric lock held.
  void post(Item it) {
    FakeDevice& peer = *f_.dev[1 - side_];
    if (f_.lazy && it.signaled && it.kind != OpKind::kRead)
      cq_.push_back(Completion{.context = it.ctx, .bytes = it.length, .op = it.kind});
    peer.inbound_.push_back(std::move(it));
  }
  void postRecv(RecvPost r) { rq_.push_back(r); }
  Fabric& fabric() { return f_; }

 private:
  void corrupt(uint8_t* p, uint32_t n) {
    if (f_.corruptEvery && n > 0 && ++f_.delivered % f_.corruptEvery == 0) p[0] ^= 0xff;
  }

  Fabric& f_;
  int side_;
  uint8_t* region_;
  std::deque<Item> inbound_;
  std::deque<Completion> cq_;
  std::deque<RecvPost> rq_;
};

class FakeEndpoint : public transport::Endpoint {
 public:
  explicit FakeEndpoint(FakeDevice& d) : d_(d) {}
  PostResult postSend(const transport::MemoryRegion& mr, uint64_t offset, uint32_t length,
                      uint64_t context, bool signaled) override {
    Item it;
    it.kind = OpKind::kSend;
    it.data.assign(mr.data() + offset, mr.data() + offset + length);
    it.length = length;
    it.ctx = context;
    it.signaled = signaled;
    std::lock_guard<std::mutex> g(d_.fabric().m);
    d_.post(std::move(it));
    return PostResult::kOk;
  }
  PostResult postRecv(const transport::MemoryRegion& mr, uint64_t offset, uint32_t length,
                      uint64_t context) override {
    std::lock_guard<std::mutex> g(d_.fabric().m);
    d_.postRecv(RecvPost{mr.data() + offset, length, context});
    return PostResult::kOk;
  }
  PostResult postWrite(const transport::MemoryRegion& mr, uint64_t offset, uint32_t length,
                       const transport::RemoteRegion&, uint64_t remoteOffset, uint64_t context,
                       bool signaled) override {
    Item it;
    it.kind = OpKind::kWrite;
    it.data.assign(mr.data() + offset, mr.data() + offset + length);
    it.remoteOffset = remoteOffset;
    it.length = length;
    it.ctx = context;
    it.signaled = signaled;
    std::lock_guard<std::mutex> g(d_.fabric().m);
    d_.post(std::move(it));
    return PostResult::kOk;
  }
  PostResult postRead(const transport::MemoryRegion& mr, uint64_t offset, uint32_t length,
                      const transport::RemoteRegion&, uint64_t remoteOffset,
                      uint64_t context) override {
    Item it;
    it.kind = OpKind::kRead;
    it.readDest = mr.data() + offset;
    it.remoteOffset = remoteOffset;
    it.length = length;
    it.ctx = context;
    std::lock_guard<std::mutex> g(d_.fabric().m);
    d_.post(std::move(it));
    return PostResult::kOk;
  }
  std::string peerName() const override { return "fake-peer"; }

 private:
  FakeDevice& d_;
};

// One side: buffer, device, endpoint, link, progress.
struct FakeSide {
  FakeSide(Fabric& f, int side)
      : layout(BufferLayout::forMaxMessage(kBytes)),
        buffer(layout.total()),
        device(f, side, buffer.data()),
        region(buffer.data(), layout.total()),
        endpoint(device),
        progress(device, 2000, nullptr, "fake-peer", transport::ProgressMode::kBusyPoll) {
    links.push_back(
        Link{&endpoint, &region, transport::RemoteRegion{0, layout.total(), {}}, layout});
  }
  BufferLayout layout;
  AlignedBuffer buffer;
  FakeDevice device;
  FakeRegion region;
  FakeEndpoint endpoint;
  Progress progress;
  std::vector<Link> links;
};

struct Pair {
  BandwidthResult client, server;
};

struct Case {
  DataOp op;
  BwMode mode;
  bool lazy;
  bool bidirectional;
  uint64_t warmup;
};

Pair runPair(const Case& c, uint64_t iterations, uint32_t window, bool check = false,
             uint64_t corruptEvery = 0, uint64_t stallAt = 0, int64_t stallNs = 0) {
  Fabric f;
  f.lazy = c.lazy;
  f.corruptEvery = corruptEvery;
  f.stallAt = stallAt;
  f.stallNs = stallNs;
  gFabric = &f;
  FakeSide a(f, 0), b(f, 1);
  BandwidthParams p;
  p.op = c.op;
  p.mode = c.mode;
  p.bytes = kBytes;
  p.iterations = iterations;
  p.warmup = c.warmup;
  p.window = window;
  p.bidirectional = c.bidirectional;
  p.check = check;
  p.clock = fakeClock;
  BandwidthParams q = p;
  q.sender = false;
  Pair r;
  std::exception_ptr err;
  std::thread server([&] {
    try {
      r.server = runBandwidth(b.device, b.links, b.progress, q);
    } catch (...) {
      err = std::current_exception();
    }
  });
  std::exception_ptr clientErr;
  try {
    r.client = runBandwidth(a.device, a.links, a.progress, p);
  } catch (...) {
    clientErr = std::current_exception();
  }
  server.join();  // the server gives up after its Progress timeout if the client failed
  gFabric = nullptr;
  if (clientErr) std::rethrow_exception(clientErr);
  if (err) std::rethrow_exception(err);
  gFabric = nullptr;
  return r;
}

std::string name(const Case& c) {
  const char* op = c.op == DataOp::kSend ? "send" : c.op == DataOp::kWrite ? "write" : "read";
  return fmt::format("{} {} {} {} warmup {}", op, toString(c.mode), c.lazy ? "lazy" : "eager",
                     c.bidirectional ? "bidir" : "uni", c.warmup);
}

// MB/s = bytes x messages / seconds / 10^6, the interval being exactly the delivery time of the
// measured messages (1 us each): warmup excluded, local completions never stop the clock.
TEST(BandwidthKnownAnswer, IntervalIsFirstPostToDeliveryOnEveryMethod) {
  std::vector<Case> cases;
  for (DataOp op : {DataOp::kSend, DataOp::kWrite, DataOp::kRead})
    for (BwMode mode : {BwMode::kWindow, BwMode::kStream})
      for (bool lazy : {false, true})
        for (uint64_t warmup : {uint64_t{0}, uint64_t{3}}) {
          cases.push_back(Case{op, mode, lazy, false, warmup});
        }
  for (const Case& c : cases) {
    SCOPED_TRACE(name(c));
    const uint32_t window = 8;
    const uint64_t iterations = c.mode == BwMode::kWindow ? 5 : 40;
    const uint64_t measured = c.mode == BwMode::kWindow ? iterations * window : iterations;
    Pair r = runPair(c, iterations, window);
    EXPECT_EQ(r.client.messages, measured);
    EXPECT_DOUBLE_EQ(r.client.seconds, static_cast<double>(measured) * 1e-6);
    EXPECT_DOUBLE_EQ(r.client.megabytesPerSec,
                     kBytes * static_cast<double>(measured) / r.client.seconds / 1e6);
    EXPECT_NEAR(r.client.megabytesPerSec, 1000.0, 1e-6);
    EXPECT_NEAR(r.client.messagesPerSec, 1e6, 1e-3);
    // The target's own interval: same rate (send without warmup drops its first message).
    EXPECT_TRUE(r.server.target);
    EXPECT_NEAR(r.server.megabytesPerSec, 1000.0, 1e-6);
    uint64_t targetMessages = c.op == DataOp::kSend && c.warmup == 0 ? measured - 1 : measured;
    EXPECT_EQ(r.server.messages, targetMessages);
  }
}

TEST(BandwidthKnownAnswer, BidirectionalCountsBothDirections) {
  for (DataOp op : {DataOp::kSend, DataOp::kWrite})
    for (BwMode mode : {BwMode::kWindow, BwMode::kStream}) {
      Case c{op, mode, false, true, 2};
      SCOPED_TRACE(name(c));
      const uint64_t iterations = mode == BwMode::kWindow ? 4 : 30;
      Pair r = runPair(c, iterations, 8);
      const uint64_t perDirection = mode == BwMode::kWindow ? iterations * 8 : iterations;
      EXPECT_EQ(r.client.messagesBothWays, 2 * perDirection);
      // Both directions share the fabric clock here (1 us per message either way), so the sum
      // is 1000 MB/s. The start barrier after warmup makes it exact on both sides whatever the
      // thread schedule: each clock starts before any measured message of either direction
      // arrives, and stops after all of them did. (Without the barrier this read 2000 MB/s
      // when the scheduler let one side stream while the other was still in its warmup.)
      EXPECT_NEAR(r.client.megabytesPerSec, 1000.0, 1e-6);  // the headline figure
      EXPECT_NEAR(r.server.megabytesPerSec, 1000.0, 1e-6);
    }
}

TEST(BandwidthKnownAnswer, LazyCompletionWithoutDeliveryHandshakeWouldBeFaster) {
  // Control: on the lazy fabric the sender's local completions all arrive before any delivery;
  // the engine's interval still equals the delivery time of every message.
  Case c{DataOp::kWrite, BwMode::kStream, true, false, 0};
  Pair r = runPair(c, 200, 16);
  EXPECT_DOUBLE_EQ(r.client.seconds, 200e-6);
}

TEST(BandwidthCheck, CleanRunHasNoWrongMessages) {
  for (DataOp op : {DataOp::kSend, DataOp::kWrite})
    for (BwMode mode : {BwMode::kWindow, BwMode::kStream})
      for (bool bidir : {false, true}) {
        Case c{op, mode, true, bidir, 1};
        SCOPED_TRACE(name(c));
        Pair r = runPair(c, 10, 4, true);
        EXPECT_EQ(r.client.wrong + r.server.wrong, 0u);
        EXPECT_GT(r.client.checked + r.server.checked, 10u);
        // The verification pass is outside the timed interval.
        EXPECT_NEAR(r.client.megabytesPerSec, 1000.0, bidir ? 500.0 : 1e-6);
      }
}

TEST(BandwidthCheck, CorruptedPayloadsAreCounted) {
  for (DataOp op : {DataOp::kSend, DataOp::kWrite}) {
    Case c{op, BwMode::kStream, false, false, 0};
    SCOPED_TRACE(name(c));
    Pair r = runPair(c, 100, 8, true, /*corruptEvery=*/7);
    EXPECT_GT(r.client.wrong + r.server.wrong, 0u);
  }
}

TEST(BandwidthEngine, SequenceNumbersUnwrapPast40Bits) {
  constexpr uint64_t k40 = 1ull << 40;
  EXPECT_EQ(unwrapSeq(0, 0), 0u);
  EXPECT_EQ(unwrapSeq(5, 9), 9u);
  // Next expected post k40 - 2, completion of post k40 + 3 (its context says 3).
  EXPECT_EQ(unwrapSeq(k40 - 2, ctxSeq(makeCtx(Ctx::kData, 0, k40 + 3))), k40 + 3);
  EXPECT_EQ(unwrapSeq(7 * k40 + 10, ctxSeq(makeCtx(Ctx::kData, 1, 7 * k40 + 12))), 7 * k40 + 12);
  // A run longer than 2^40 posts is accepted (no wrap limit on -n x -w).
  BandwidthParams p;
  p.iterations = 1'000'000'000;
  p.window = 4096;
  EXPECT_GT(bandwidthPosts(p), k40);
}

// common/stall.h end to end: one delivery 50 ms late among 1 us ones flags the sender's row
// on every op and method (completion on delivery: the marks follow the fabric's clock); the
// same run without it is not flagged, and a side that only receives has no figures.
TEST(BandwidthKnownAnswer, OnePauseFlagsTheSendersRow) {
  constexpr int64_t kPauseNs = 50'000'000;
  for (DataOp op : {DataOp::kSend, DataOp::kWrite, DataOp::kRead})
    for (BwMode mode : {BwMode::kWindow, BwMode::kStream}) {
      const Case c{op, mode, false, false, 3};
      SCOPED_TRACE(name(c));
      const uint64_t iterations = mode == BwMode::kWindow ? 20 : 160;
      const uint64_t warmupMsgs = mode == BwMode::kWindow ? 3 * 8 : 3;
      const Pair steady = runPair(c, iterations, 8);
      EXPECT_FALSE(steady.client.stall.stalled());
      EXPECT_GE(steady.client.stall.intervals, 2u);
      EXPECT_EQ(steady.server.stall.intervals, 0u);
      const Pair r = runPair(c, iterations, 8, false, 0, warmupMsgs + 40, kPauseNs);
      EXPECT_TRUE(r.client.stall.stalled());
      EXPECT_GE(r.client.stall.longestNs, kPauseNs);
      EXPECT_LE(r.client.stall.longestNs, kPauseNs + 160'000);  // + at most every message
      EXPECT_EQ(r.client.stall.totalNs, kPauseNs + 160'000);    // the row's interval
      EXPECT_DOUBLE_EQ(r.client.seconds, 0.05016);
    }
}

TEST(BandwidthEngine, RefusesBadParameters) {
  Fabric f;
  FakeSide a(f, 0), b(f, 1);
  BandwidthParams p;
  p.bytes = 0;
  p.iterations = 1;
  EXPECT_THROW(runBandwidth(a.device, a.links, a.progress, p), UsageError);
  p.bytes = 8;
  p.op = DataOp::kRead;
  p.check = true;
  EXPECT_THROW(runBandwidth(a.device, a.links, a.progress, p), UsageError);
  EXPECT_THROW(parseBwMode("burst"), UsageError);
  EXPECT_EQ(dataOp(parseOp("tagged")), DataOp::kSend);
}

// The interval's clock is the measurement clock (--clock) unless a test injects one, never a
// silent fallback: the default is measureNs and a null clock is refused.
TEST(BandwidthEngine, ClockDefaultsToTheMeasurementClock) {
  EXPECT_EQ(BandwidthParams{}.clock, &measureNs);
  Fabric f;
  FakeSide a(f, 0), b(f, 1);
  BandwidthParams p;
  p.bytes = 8;
  p.iterations = 1;
  p.clock = nullptr;
  EXPECT_THROW(runBandwidth(a.device, a.links, a.progress, p), Error);
}

// Ping-pong: latency = RTT/2 (2 messages of 1 us = 1 us), warmup excluded from samples and
// from `seconds`.
TEST(PingPongKnownAnswer, HalfRoundTripAndWarmupExcluded) {
  for (const char* op : {"send", "write", "read"}) {
    SCOPED_TRACE(op);
    Fabric f;
    gFabric = &f;
    FakeSide a(f, 0), b(f, 1);
    PingPongParams p;
    p.op = dataOp(parseOp(op));
    p.bytes = kBytes;
    p.iterations = 50;
    p.warmup = 7;
    p.check = true;
    p.clock = fakeClock;
    PingPongParams q = p;
    q.initiator = false;
    // The responder's read source, stamped by pair.cc before a size starts.
    stampPattern(b.buffer.data() + b.layout.sendOffset(), kBytes, readPatternTag(kBytes));
    PingPongResult server;
    std::thread t([&] { server = runPingPong(b.device, b.links[0], b.progress, q); });
    PingPongResult r = runPingPong(a.device, a.links[0], a.progress, p);
    t.join();
    gFabric = nullptr;
    stats::Summary s = r.samples.summarize();
    EXPECT_EQ(s.count, 50u);
    const bool read = std::string(op) == "read";
    // send/write: two 1 us messages per round trip, RTT/2 = 1 us; read: request + data = 1 us,
    // reported as the full round trip (ib_read_lat).
    EXPECT_DOUBLE_EQ(s.min, 1.0);
    EXPECT_DOUBLE_EQ(s.max, 1.0);
    EXPECT_NEAR(r.seconds, 50 * (read ? 1e-6 : 2e-6), 1e-12);
    EXPECT_EQ(r.checkErrors + server.checkErrors, 0u);
  }
}

}  // namespace
}  // namespace rdmabench::engine
