// Integration tests of the libfabric (ofi) backend: two or three Devices in one process,
// talking over loopback (domain "lo" for IP providers) or shm; verbs;ofi_rxm when an RDMA
// device exists (e.g. inside the rxe VM). Providers that fi_getinfo does not offer here are
// visible GTEST_SKIPs with the reason.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/error.h"
#include "transport/backends.h"
#include "transport/info_json.h"
#include "transport/transport.h"
#ifdef RDMABENCH_HAVE_OFI
#include "transport/ofi/ofi_device.h"
#endif

namespace rdmabench::transport {
namespace {

#ifndef RDMABENCH_HAVE_OFI

TEST(OfiTransport, NotBuilt) {
  GTEST_SKIP() << "ofi backend not built: " << ofi::probe().reason;
}

#else

constexpr int64_t kWaitMs = 30000;

// ofi_rxm sizes its core CQ as FI_UNIVERSE_SIZE (256) x msg queue sizes, beyond soft-RoCE's
// 32767 CQEs (fi_enable then fails with EINVAL). Set before libfabric initializes; a value
// from the caller's environment wins.
const bool kUniverseSizeSet = [] { return setenv("FI_UNIVERSE_SIZE", "64", 0) == 0; }();

struct ProviderCase {
  const char* provider;
  const char* domain;  // "" = first domain fi_getinfo returns
};

void PrintTo(const ProviderCase& c, std::ostream* os) {
  *os << c.provider << (*c.domain ? " domain " : "") << c.domain;
}

std::string caseName(const ::testing::TestParamInfo<ProviderCase>& info) {
  std::string n;
  for (const char* p = info.param.provider; *p; ++p)
    n += std::isalnum(*p) ? *p : '_';
  return n;
}

// Empty when `c` can be opened here, else the reason (for GTEST_SKIP).
std::string unavailableReason(const ProviderCase& c) {
  BackendStatus s = ofi::probe();
  if (!s.usable) return s.reason;
  for (const auto& p : s.details["providers"]) {
    if (p["provider"] != c.provider) continue;
    if (!*c.domain) return "";
    for (const auto& d : p["domains"])
      if (d["domain"] == c.domain) return "";
    return std::string("provider '") + c.provider + "' has no domain '" + c.domain + "' here";
  }
  return std::string("fi_getinfo offers no FI_EP_RDM endpoint for '") + c.provider +
         "' on this host (" + s.reason + ")";
}

// Page-aligned buffer (FI_MR_ALLOCATED / verbs friendly).
struct Buffer {
  explicit Buffer(size_t n)
      : size(n), data(static_cast<uint8_t*>(std::aligned_alloc(4096, (n + 4095) / 4096 * 4096))) {
    std::memset(data, 0, size);
  }
  ~Buffer() { std::free(data); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  size_t size;
  uint8_t* data;
};

void fill(uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i)
    p[i] = static_cast<uint8_t>((i * 131 + seed * 7 + (i >> 8)) ^ seed);
}
bool matches(const uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != static_cast<uint8_t>((i * 131 + seed * 7 + (i >> 8)) ^ seed)) return false;
  return true;
}

// Polls every device of the test (a target only progresses while it polls) and keeps each
// device's completions until the test asks for them.
class Poller {
 public:
  explicit Poller(std::vector<Device*> devices) : devices_(std::move(devices)) {}
  void pollAll() {
    Completion batch[16];
    for (Device* d : devices_) {
      size_t n = d->poll(batch, 16);
      for (size_t i = 0; i < n; ++i)
        got_[d].push_back(batch[i]);
    }
  }
  // Waits for the completion of `context` on `d`; fails the test on timeout.
  Completion waitFor(Device* d, uint64_t context) {
    Deadline deadline(kWaitMs);
    for (;;) {
      auto& q = got_[d];
      for (auto it = q.begin(); it != q.end(); ++it) {
        if (it->context == context) {
          Completion c = *it;
          q.erase(it);
          return c;
        }
      }
      if (deadline.expired()) {
        ADD_FAILURE() << "timeout waiting for completion " << context << " on " << d->name();
        Completion c;
        c.status = CompletionStatus::kError;
        c.code = -1;
        return c;
      }
      pollAll();
    }
  }
  std::deque<Completion>& completions(Device* d) { return got_[d]; }
  // Re-posts while the backend says kRetry (polling everything in between); returns the
  // number of retries, or -1 on timeout.
  long post(const std::function<PostResult()>& fn) {
    Deadline deadline(kWaitMs);
    long retries = 0;
    while (fn() == PostResult::kRetry) {
      if (deadline.expired()) return -1;
      ++retries;
      pollAll();
    }
    return retries;
  }

 private:
  std::vector<Device*> devices_;
  std::map<Device*, std::deque<Completion> > got_;
};

struct Link {
  std::unique_ptr<Endpoint> ab;  // on device a, peer b
  std::unique_ptr<Endpoint> ba;  // on device b, peer a
};

Link connectPair(Device& a, Device& b) {
  auto ca = a.createConnector();
  auto cb = b.createConnector();
  EXPECT_LE(ca->localAddress().size(), kMaxAddressBytes);
  Link l;
  l.ab = ca->connect(cb->localAddress(), Deadline(kWaitMs));
  l.ba = cb->connect(ca->localAddress(), Deadline(kWaitMs));
  return l;
}

class OfiTransport : public ::testing::TestWithParam<ProviderCase> {
 protected:
  void SetUp() override {
    std::string why = unavailableReason(GetParam());
    if (!why.empty()) GTEST_SKIP() << why;
  }
  DeviceOptions options() const {
    DeviceOptions o;
    o.provider = GetParam().provider;
    o.device = GetParam().domain;
    return o;
  }
  std::unique_ptr<Device> open() { return ofi::openDevice(options()); }
};

TEST_P(OfiTransport, PingPongAllProtocolSizesWithVerification) {
  auto a = open();
  auto b = open();
  Link l = connectPair(*a, *b);
  const Caps caps = a->caps();
  std::vector<uint64_t> sizes = {0,     1,      caps.inlineBytes, 16384,  16385,
                                 65536, 131072, 131073,           1 << 20};
  constexpr size_t kBuf = (1 << 20) + 64;
  Buffer ba(kBuf), bb(kBuf);
  auto ma = a->registerMemory(ba.data, kBuf);
  auto mb = b->registerMemory(bb.data, kBuf);
  Poller p({a.get(), b.get()});
  long firstRetries = -2;
  uint32_t seed = 1;
  for (uint64_t size : sizes) {
    if (size > caps.maxMessageBytes) continue;
    SCOPED_TRACE("size " + std::to_string(size));
    const auto n = static_cast<uint32_t>(size);
    // a -> b
    ASSERT_GE(p.post([&] { return l.ba->postRecv(*mb, 0, n, 100 + seed); }), 0);
    fill(ba.data, n, seed);
    long r = p.post([&] { return l.ab->postSend(*ma, 0, n, 200 + seed); });
    ASSERT_GE(r, 0) << "send never accepted";
    if (firstRetries == -2) firstRetries = r;
    Completion rc = p.waitFor(b.get(), 100 + seed);
    ASSERT_TRUE(rc.ok()) << b->errorText(rc);
    EXPECT_EQ(rc.op, OpKind::kRecv);
    EXPECT_EQ(rc.bytes, n);
    EXPECT_TRUE(matches(bb.data, n, seed));
    Completion sc = p.waitFor(a.get(), 200 + seed);
    ASSERT_TRUE(sc.ok()) << a->errorText(sc);
    EXPECT_EQ(sc.op, OpKind::kSend);
    ++seed;
    // b -> a
    ASSERT_GE(p.post([&] { return l.ab->postRecv(*ma, 0, n, 100 + seed); }), 0);
    fill(bb.data, n, seed);
    ASSERT_GE(p.post([&] { return l.ba->postSend(*mb, 0, n, 200 + seed); }), 0);
    rc = p.waitFor(a.get(), 100 + seed);
    ASSERT_TRUE(rc.ok()) << a->errorText(rc);
    EXPECT_EQ(rc.bytes, n);
    EXPECT_TRUE(matches(ba.data, n, seed));
    sc = p.waitFor(b.get(), 200 + seed);
    ASSERT_TRUE(sc.ok()) << b->errorText(sc);
    ++seed;
  }
  // Connection-on-demand (rxm) answers the first send with many retries; it must still go.
  RecordProperty("first_send_retries", std::to_string(firstRetries));
  std::printf("[ %s ] first send needed %ld retries\n", GetParam().provider, firstRetries);
}

TEST_P(OfiTransport, WindowedSendsArriveInOrderAndReportSignaledInPostOrder) {
  auto a = open();
  auto b = open();
  Link l = connectPair(*a, *b);
  constexpr uint32_t kWindow = 64;
  constexpr int kRounds = 8;
  for (uint32_t msg : {uint32_t{64}, uint32_t{4096}, uint32_t{20000}}) {
    SCOPED_TRACE("message " + std::to_string(msg));
    const size_t bytes = size_t{msg} * kWindow;
    Buffer sa(bytes), rb(bytes);
    auto ma = a->registerMemory(sa.data, bytes);
    auto mb = b->registerMemory(rb.data, bytes);
    Poller p({a.get(), b.get()});
    uint64_t seq = 0;
    for (int round = 0; round < kRounds; ++round) {
      for (uint32_t i = 0; i < kWindow; ++i)
        ASSERT_GE(p.post([&] { return l.ba->postRecv(*mb, i * msg, msg, 10000 + i); }), 0);
      for (uint32_t i = 0; i < kWindow; ++i) {
        uint64_t s = seq + i;
        std::memset(sa.data + i * msg, static_cast<int>(s & 0xff), msg);
        std::memcpy(sa.data + i * msg, &s, sizeof(s));
        const bool signaled = (i % 16 == 15);
        ASSERT_GE(p.post([&] { return l.ab->postSend(*ma, i * msg, msg, s, signaled); }), 0);
      }
      for (uint32_t i = 0; i < kWindow; ++i) {
        Completion c = p.waitFor(b.get(), 10000 + i);
        ASSERT_TRUE(c.ok()) << b->errorText(c);
        ASSERT_EQ(c.bytes, msg);
        uint64_t got = 0;
        std::memcpy(&got, rb.data + i * msg, sizeof(got));
        EXPECT_EQ(got, seq + i) << "receive " << i << " matched out of post order";
        EXPECT_EQ(rb.data[i * msg + msg - 1], static_cast<uint8_t>((seq + i) & 0xff));
      }
      // The last signaled send completing implies all earlier ones did (post order).
      Completion last = p.waitFor(a.get(), seq + kWindow - 1);
      ASSERT_TRUE(last.ok()) << a->errorText(last);
      uint64_t prev = seq;
      for (const Completion& c : p.completions(a.get())) {
        EXPECT_GE(c.context, prev) << "send completions out of post order";
        prev = c.context;
      }
      p.completions(a.get()).clear();
      seq += kWindow;
    }
  }
}

TEST_P(OfiTransport, RmaWriteLandsWhileTargetPollsAndReadReturnsData) {
  auto a = open();
  auto b = open();
  if (!a->caps().rmaWrite) GTEST_SKIP() << GetParam().provider << " did not grant FI_RMA";
  Link l = connectPair(*a, *b);
  constexpr size_t kBytes = 1 << 20;
  Buffer src(kBytes), dst(kBytes), back(kBytes);
  auto ms = a->registerMemory(src.data, kBytes);
  auto mback = a->registerMemory(back.data, kBytes);
  auto md = b->registerMemory(dst.data, kBytes);
  RemoteRegion remote = RemoteRegion::decode(md->exportRegion().encode());
  Poller p({a.get(), b.get()});

  for (uint32_t len : {uint32_t{8}, uint32_t{4096}, uint32_t{kBytes}}) {
    SCOPED_TRACE("write of " + std::to_string(len));
    std::memset(dst.data, 0, kBytes);
    fill(src.data, len, len);
    constexpr uint8_t kMarker = 0xA5;
    src.data[len - 1] = kMarker;
    ASSERT_GE(p.post([&] { return l.ab->postWrite(*ms, 0, len, remote, 0, 7); }), 0);
    Completion c = p.waitFor(a.get(), 7);
    ASSERT_TRUE(c.ok()) << a->errorText(c);
    EXPECT_EQ(c.op, OpKind::kWrite);
    // The target keeps polling until the last byte has landed.
    Deadline deadline(kWaitMs);
    while (*reinterpret_cast<volatile uint8_t*>(dst.data + len - 1) != kMarker) {
      ASSERT_FALSE(deadline.expired()) << "written data never landed at the target";
      p.pollAll();
    }
    EXPECT_TRUE(matches(dst.data, len - 1, len));
  }
  if (a->caps().rmaRead) {
    fill(dst.data, kBytes, 99);
    ASSERT_GE(p.post([&] { return l.ab->postRead(*mback, 0, kBytes, remote, 0, 8); }), 0);
    Completion c = p.waitFor(a.get(), 8);
    ASSERT_TRUE(c.ok()) << a->errorText(c);
    EXPECT_EQ(c.op, OpKind::kRead);
    EXPECT_TRUE(matches(back.data, kBytes, 99));
  }
  EXPECT_THROW((void)l.ab->postWrite(*ms, 0, 16, remote, kBytes - 8, 9), UsageError);
}

TEST_P(OfiTransport, TwoPeersOnOneDeviceDoNotStealReceives) {
  auto a = open();
  auto b = open();
  auto c = open();
  Link ab = connectPair(*a, *b);
  Link ac = connectPair(*a, *c);
  constexpr uint32_t kMsg = 128;
  Buffer ra(2 * kMsg), sb(kMsg), sc(kMsg);
  auto mra = a->registerMemory(ra.data, 2 * kMsg);
  auto msb = b->registerMemory(sb.data, kMsg);
  auto msc = c->registerMemory(sc.data, kMsg);
  Poller p({a.get(), b.get(), c.get()});
  // Only the receive for peer b is posted; c's message must wait for its own receive.
  ASSERT_GE(p.post([&] { return ab.ab->postRecv(*mra, 0, kMsg, 1); }), 0);
  fill(sc.data, kMsg, 3);
  ASSERT_GE(p.post([&] { return ac.ba->postSend(*msc, 0, kMsg, 30); }), 0);
  ASSERT_TRUE(p.waitFor(c.get(), 30).ok());
  Deadline quiet(300);
  while (!quiet.expired())
    p.pollAll();
  EXPECT_TRUE(p.completions(a.get()).empty()) << "peer c's message completed peer b's receive";
  ASSERT_GE(p.post([&] { return ac.ab->postRecv(*mra, kMsg, kMsg, 2); }), 0);
  fill(sb.data, kMsg, 2);
  ASSERT_GE(p.post([&] { return ab.ba->postSend(*msb, 0, kMsg, 20); }), 0);
  Completion fromB = p.waitFor(a.get(), 1);
  Completion fromC = p.waitFor(a.get(), 2);
  ASSERT_TRUE(fromB.ok()) << a->errorText(fromB);
  ASSERT_TRUE(fromC.ok()) << a->errorText(fromC);
  EXPECT_TRUE(matches(ra.data, kMsg, 2)) << "receive of peer b holds someone else's data";
  EXPECT_TRUE(matches(ra.data + kMsg, kMsg, 3)) << "receive of peer c holds someone else's data";
  EXPECT_NE(ab.ab->peerName(), ac.ab->peerName());
}

TEST_P(OfiTransport, OversizedMessageCompletesReceiveWithError) {
  auto a = open();
  auto b = open();
  Link l = connectPair(*a, *b);
  Buffer sa(4096), rb(4096);
  auto ma = a->registerMemory(sa.data, 4096);
  auto mb = b->registerMemory(rb.data, 4096);
  Poller p({a.get(), b.get()});
  ASSERT_GE(p.post([&] { return l.ba->postRecv(*mb, 0, 16, 5); }), 0);
  ASSERT_GE(p.post([&] { return l.ab->postSend(*ma, 0, 1000, 6); }), 0);
  Completion c = p.waitFor(b.get(), 5);
  if (c.ok() && std::string(GetParam().provider) == "udp;ofi_rxd")
    GTEST_SKIP() << "udp;ofi_rxd (1.17) truncates silently: the receive completed with " << c.bytes
                 << " B and no FI_ETRUNC (provider deviation, see docs/transport-ofi.md)";
  EXPECT_FALSE(c.ok()) << "bytes " << c.bytes;
  EXPECT_EQ(c.op, OpKind::kRecv);
  const std::string why = b->errorText(c);
  EXPECT_NE(why.find("recv"), std::string::npos) << why;
  EXPECT_NE(why.find("provider"), std::string::npos) << why;
  p.waitFor(a.get(), 6);
}

TEST_P(OfiTransport, EndpointTeardownWithPostedReceivesLeavesDeviceUsable) {
  auto a = open();
  auto b = open();
  Buffer buf(4096), other(4096);
  auto ma = a->registerMemory(buf.data, 4096);
  auto mb = b->registerMemory(other.data, 4096);
  {
    Link l = connectPair(*a, *b);
    Poller p({a.get(), b.get()});
    for (uint32_t i = 0; i < 4; ++i)
      ASSERT_GE(p.post([&] { return l.ab->postRecv(*ma, i * 1024, 1024, 40 + i); }), 0);
  }  // endpoints gone with four receives posted: they are cancelled, never reported
  Link l = connectPair(*a, *b);
  Poller p({a.get(), b.get()});
  ASSERT_GE(p.post([&] { return l.ab->postRecv(*ma, 0, 1024, 50); }), 0);
  fill(other.data, 1024, 5);
  ASSERT_GE(p.post([&] { return l.ba->postSend(*mb, 0, 1024, 51); }), 0);
  Completion c = p.waitFor(a.get(), 50);
  ASSERT_TRUE(c.ok()) << a->errorText(c);
  EXPECT_TRUE(matches(buf.data, 1024, 5));
  for (const Completion& x : p.completions(a.get()))
    EXPECT_FALSE(x.context >= 40 && x.context < 44) << "receive of a destroyed endpoint reported";
}

TEST_P(OfiTransport, PropertiesNameProviderLimitsAndThresholds) {
  auto a = open();
  nlohmann::json j = toJson(a->info());
  EXPECT_EQ(j["provider"], GetParam().provider);
  EXPECT_EQ(j["domain"], a->name());
  EXPECT_EQ(j["endpoint_type"], "FI_EP_RDM");
  EXPECT_EQ(j["inject_size"].get<uint64_t>() >= a->caps().inlineBytes, true);
  EXPECT_EQ(j["max_msg_size"].get<uint64_t>(), a->caps().maxMessageBytes);
  EXPECT_TRUE(j["mr_mode"].is_string());
  if (std::string(GetParam().provider).find("ofi_rxm") != std::string::npos) {
    EXPECT_GT(j["protocol"]["eager_limit_bytes"].get<uint64_t>(), 0u) << j.dump();
    EXPECT_TRUE(j["protocol"]["summary"].is_string());
  }
  EXPECT_GT(a->caps().maxSendQueue, 0u);
  EXPECT_GT(a->caps().maxRecvQueue, 0u);
}

INSTANTIATE_TEST_SUITE_P(Providers, OfiTransport,
                         ::testing::Values(ProviderCase{"tcp;ofi_rxm", "lo"},
                                           ProviderCase{"verbs;ofi_rxm", ""},
                                           ProviderCase{"shm", ""},
                                           ProviderCase{"udp;ofi_rxd", "lo"},
                                           ProviderCase{"net", "lo"}),
                         caseName);

// ---- error paths (tcp;ofi_rxm, always present where libfabric is) ----

class OfiErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why = unavailableReason({"tcp;ofi_rxm", "lo"});
    if (!why.empty()) GTEST_SKIP() << why;
  }
  DeviceOptions base() const {
    DeviceOptions o;
    o.provider = "tcp;ofi_rxm";
    o.device = "lo";
    return o;
  }
};

template <class E>
std::string messageOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

TEST_F(OfiErrors, UnknownProviderListsProviders) {
  DeviceOptions o = base();
  o.provider = "nosuchprovider";
  std::string m = messageOf<UsageError>([&] { (void)ofi::openDevice(o); });
  EXPECT_NE(m.find("nosuchprovider"), std::string::npos) << m;
  EXPECT_NE(m.find("tcp;ofi_rxm"), std::string::npos) << m;
}

TEST_F(OfiErrors, UnknownDomainListsDomains) {
  DeviceOptions o = base();
  o.device = "nosuchdomain0";
  std::string m = messageOf<UsageError>([&] { (void)ofi::openDevice(o); });
  EXPECT_NE(m.find("nosuchdomain0"), std::string::npos) << m;
  EXPECT_NE(m.find("lo"), std::string::npos) << m;
}

TEST_F(OfiErrors, MessageAboveMaxMsgSizeIsRejected) {
  // tcp's max_msg_size is SIZE_MAX; Tuning clamps it as a smaller provider would report.
  ofi::Tuning t;
  t.maxMessageBytes = 4096;
  auto a = ofi::openDevice(base(), t);
  auto b = ofi::openDevice(base(), t);
  EXPECT_EQ(a->caps().maxMessageBytes, 4096u);
  Link l = connectPair(*a, *b);
  Buffer buf(8192);
  auto m = a->registerMemory(buf.data, 8192);
  std::string msg = messageOf<UsageError>([&] { (void)l.ab->postSend(*m, 0, 4097, 1); });
  EXPECT_NE(msg.find("max_msg_size"), std::string::npos) << msg;
  EXPECT_NE(msg.find("4096"), std::string::npos) << msg;
  EXPECT_THROW((void)l.ab->postRecv(*m, 0, 8192, 2), UsageError);
}

TEST_F(OfiErrors, UnsupportedOptionsAreUsageErrors) {
  DeviceOptions o = base();
  o.endpointType = "dgram";
  EXPECT_THROW((void)ofi::openDevice(o), UsageError);
  o = base();
  o.inlineBytes = 1 << 30;
  std::string m = messageOf<UsageError>([&] { (void)ofi::openDevice(o); });
  EXPECT_NE(m.find("inject_size"), std::string::npos) << m;
}

TEST_F(OfiErrors, MalformedPeerAddressIsRejected) {
  auto a = ofi::openDevice(base());
  auto c = a->createConnector();
  EXPECT_THROW((void)c->connect({1, 2, 3}, Deadline(1000)), ProtocolError);
}

TEST(OfiProbe, ListsTcpRxmWithLimits) {
  BackendStatus s = ofi::probe();
  ASSERT_TRUE(s.built);
  ASSERT_TRUE(s.usable) << s.reason;
  bool found = false;
  for (const auto& p : s.details["providers"]) {
    if (p["provider"] != "tcp;ofi_rxm") continue;
    found = true;
    for (const auto& d : p["domains"]) {
      EXPECT_TRUE(d.contains("inject_size"));
      EXPECT_TRUE(d.contains("max_msg_size"));
      EXPECT_TRUE(d.contains("mr_mode"));
    }
  }
  EXPECT_TRUE(found) << s.details.dump();
  EXPECT_NE(s.reason.find("tcp;ofi_rxm"), std::string::npos) << s.reason;
}

// ---- FI_EP_MSG (--ep msg): one connected endpoint per connection ----

// Empty when FI_EP_MSG provider `c` can be opened here, else the reason.
std::string msgUnavailableReason(const ProviderCase& c) {
  BackendStatus s = ofi::probe();
  if (!s.usable) return s.reason;
  for (const auto& p : s.details["msg_providers"]) {
    if (p["provider"] != c.provider) continue;
    if (!*c.domain) return "";
    for (const auto& d : p["domains"])
      if (d == c.domain) return "";
    return std::string("FI_EP_MSG provider '") + c.provider + "' has no domain '" + c.domain +
           "' here";
  }
  return std::string("fi_getinfo offers no FI_EP_MSG endpoint for '") + c.provider +
         "' on this host (msg providers: " + s.details["msg_providers"].dump() + ")";
}

// MSG connects need both sides inside connect() at once (request, accept, FI_CONNECTED), as
// the client and server processes of a run are: b connects on a second thread (a different
// Device, so the one-thread-per-Device rule holds).
Link connectPairConcurrently(Device& a, Device& b, int64_t timeoutMs = kWaitMs) {
  auto ca = a.createConnector();
  auto cb = b.createConnector();
  EXPECT_LE(ca->localAddress().size(), kMaxAddressBytes);
  const auto addrA = ca->localAddress();
  const auto addrB = cb->localAddress();
  Link l;
  std::exception_ptr err;
  std::thread t([&] {
    try {
      l.ba = cb->connect(addrA, Deadline(timeoutMs));
    } catch (...) {
      err = std::current_exception();
    }
  });
  std::exception_ptr errA;
  try {
    l.ab = ca->connect(addrB, Deadline(timeoutMs));
  } catch (...) {
    errA = std::current_exception();
  }
  t.join();
  if (errA) std::rethrow_exception(errA);
  if (err) std::rethrow_exception(err);
  return l;
}

class OfiMsgTransport : public ::testing::TestWithParam<ProviderCase> {
 protected:
  void SetUp() override {
    std::string why = msgUnavailableReason(GetParam());
    if (!why.empty()) GTEST_SKIP() << why;
  }
  DeviceOptions options() const {
    DeviceOptions o;
    o.provider = GetParam().provider;
    o.device = GetParam().domain;
    o.endpointType = "msg";
    return o;
  }
  std::unique_ptr<Device> open() { return ofi::openDevice(options()); }
};

TEST_P(OfiMsgTransport, PingPongWithVerification) {
  auto a = open();
  auto b = open();
  EXPECT_EQ(toJson(a->info())["endpoint_type"], "FI_EP_MSG");
  Link l = connectPairConcurrently(*a, *b);
  EXPECT_EQ(toJson(l.ab->info())["endpoint_type"], "FI_EP_MSG");
  EXPECT_NE(toJson(l.ab->info())["role"], toJson(l.ba->info())["role"]);
  const Caps caps = a->caps();
  constexpr size_t kBuf = (1 << 20) + 64;
  Buffer ba(kBuf), bb(kBuf);
  auto ma = a->registerMemory(ba.data, kBuf);
  auto mb = b->registerMemory(bb.data, kBuf);
  Poller p({a.get(), b.get()});
  uint32_t seed = 1;
  for (uint64_t size : {uint64_t{0}, uint64_t{1}, uint64_t{caps.inlineBytes}, uint64_t{64},
                        uint64_t{16384}, uint64_t{65536}, uint64_t{1} << 20}) {
    if (size > caps.maxMessageBytes) continue;
    SCOPED_TRACE("size " + std::to_string(size));
    const auto n = static_cast<uint32_t>(size);
    for (int dir = 0; dir < 2; ++dir) {
      Endpoint& tx = dir == 0 ? *l.ab : *l.ba;
      Endpoint& rx = dir == 0 ? *l.ba : *l.ab;
      MemoryRegion& mtx = dir == 0 ? *ma : *mb;
      MemoryRegion& mrx = dir == 0 ? *mb : *ma;
      Device* drx = dir == 0 ? b.get() : a.get();
      Device* dtx = dir == 0 ? a.get() : b.get();
      std::memset(mrx.data(), 0, n + 1);
      ASSERT_GE(p.post([&] { return rx.postRecv(mrx, 0, n, 100 + seed); }), 0);
      fill(mtx.data(), n, seed);
      ASSERT_GE(p.post([&] { return tx.postSend(mtx, 0, n, 200 + seed); }), 0);
      Completion rc = p.waitFor(drx, 100 + seed);
      ASSERT_TRUE(rc.ok()) << drx->errorText(rc);
      EXPECT_EQ(rc.op, OpKind::kRecv);
      EXPECT_EQ(rc.bytes, n);
      EXPECT_TRUE(matches(mrx.data(), n, seed));
      Completion sc = p.waitFor(dtx, 200 + seed);
      ASSERT_TRUE(sc.ok()) << dtx->errorText(sc);
      EXPECT_EQ(sc.op, OpKind::kSend);
      ++seed;
    }
  }
}

TEST_P(OfiMsgTransport, WindowedSendsWithRetryArriveInOrder) {
  DeviceOptions small = options();
  small.txDepth = 16;  // a shallow send queue: the window must hit kRetry
  auto a = ofi::openDevice(small);
  auto b = open();
  Link l = connectPairConcurrently(*a, *b);
  // A window beyond the queue depth forces kRetry on the sender.
  const uint32_t window = 256;
  constexpr uint32_t kMsg = 4096;
  const size_t bytes = size_t{kMsg} * window;
  Buffer sa(bytes), rb(bytes);
  auto ma = a->registerMemory(sa.data, bytes);
  auto mb = b->registerMemory(rb.data, bytes);
  Poller p({a.get(), b.get()});
  long retries = 0;
  uint32_t posted = 0;
  // Receives go up in batches the receive queue holds; sends follow.
  const uint32_t rxBatch = std::min(window, b->caps().maxRecvQueue);
  for (uint32_t base = 0; base < window; base += rxBatch) {
    const uint32_t n = std::min(rxBatch, window - base);
    for (uint32_t i = base; i < base + n; ++i)
      ASSERT_GE(p.post([&] { return l.ba->postRecv(*mb, i * kMsg, kMsg, 10000 + i); }), 0);
    for (uint32_t i = base; i < base + n; ++i) {
      uint64_t s = i;
      std::memset(sa.data + i * kMsg, static_cast<int>(s & 0xff), kMsg);
      std::memcpy(sa.data + i * kMsg, &s, sizeof(s));
      const long r = p.post([&] { return l.ab->postSend(*ma, i * kMsg, kMsg, s, i % 16 == 15); });
      ASSERT_GE(r, 0) << "send " << i << " never accepted";
      retries += r;
      ++posted;
    }
    for (uint32_t i = base; i < base + n; ++i) {
      Completion c = p.waitFor(b.get(), 10000 + i);
      ASSERT_TRUE(c.ok()) << b->errorText(c);
      uint64_t got = 0;
      std::memcpy(&got, rb.data + i * kMsg, sizeof(got));
      EXPECT_EQ(got, i) << "receive " << i << " matched out of post order";
      EXPECT_EQ(rb.data[i * kMsg + kMsg - 1], static_cast<uint8_t>(i & 0xff));
    }
  }
  Completion last = p.waitFor(a.get(), window - 1);
  ASSERT_TRUE(last.ok()) << a->errorText(last);
  EXPECT_EQ(posted, window);
  EXPECT_GT(retries, 0) << "a window of " << window << " on a send queue of 16 never saw kRetry";
  std::printf("[ %s msg ] window %u x %u B: %ld kRetry answers\n", GetParam().provider, window,
              kMsg, retries);
}

TEST_P(OfiMsgTransport, RmaWriteLandsWhileTargetPolls) {
  auto a = open();
  auto b = open();
  if (!a->caps().rmaWrite) GTEST_SKIP() << GetParam().provider << " FI_EP_MSG did not grant FI_RMA";
  Link l = connectPairConcurrently(*a, *b);
  constexpr size_t kBytes = 1 << 20;
  Buffer src(kBytes), dst(kBytes), back(kBytes);
  auto ms = a->registerMemory(src.data, kBytes);
  auto mback = a->registerMemory(back.data, kBytes);
  auto md = b->registerMemory(dst.data, kBytes);
  RemoteRegion remote = RemoteRegion::decode(md->exportRegion().encode());
  Poller p({a.get(), b.get()});
  for (uint32_t len : {uint32_t{8}, uint32_t{4096}, uint32_t{kBytes}}) {
    SCOPED_TRACE("write of " + std::to_string(len));
    std::memset(dst.data, 0, kBytes);
    fill(src.data, len, len);
    constexpr uint8_t kMarker = 0xA5;
    src.data[len - 1] = kMarker;
    ASSERT_GE(p.post([&] { return l.ab->postWrite(*ms, 0, len, remote, 0, 7); }), 0);
    Completion c = p.waitFor(a.get(), 7);
    ASSERT_TRUE(c.ok()) << a->errorText(c);
    EXPECT_EQ(c.op, OpKind::kWrite);
    Deadline deadline(kWaitMs);
    while (*reinterpret_cast<volatile uint8_t*>(dst.data + len - 1) != kMarker) {
      ASSERT_FALSE(deadline.expired()) << "written data never landed at the target";
      p.pollAll();
    }
    EXPECT_TRUE(matches(dst.data, len - 1, len));
  }
  if (a->caps().rmaRead) {
    fill(dst.data, kBytes, 99);
    ASSERT_GE(p.post([&] { return l.ab->postRead(*mback, 0, kBytes, remote, 0, 8); }), 0);
    Completion c = p.waitFor(a.get(), 8);
    ASSERT_TRUE(c.ok()) << a->errorText(c);
    EXPECT_EQ(c.op, OpKind::kRead);
    EXPECT_TRUE(matches(back.data, kBytes, 99));
  }
}

TEST_P(OfiMsgTransport, TwoConnectionsOnOneDevice) {
  auto a = open();
  auto b = open();
  auto c = open();
  Link ab = connectPairConcurrently(*a, *b);
  Link ac = connectPairConcurrently(*a, *c);
  // Also two connections between the same pair of devices.
  Link ab2 = connectPairConcurrently(*a, *b);
  constexpr uint32_t kMsg = 128;
  Buffer ra(3 * kMsg), sb(2 * kMsg), sc(kMsg);
  auto mra = a->registerMemory(ra.data, 3 * kMsg);
  auto msb = b->registerMemory(sb.data, 2 * kMsg);
  auto msc = c->registerMemory(sc.data, kMsg);
  Poller p({a.get(), b.get(), c.get()});
  ASSERT_GE(p.post([&] { return ab.ab->postRecv(*mra, 0, kMsg, 1); }), 0);
  ASSERT_GE(p.post([&] { return ac.ab->postRecv(*mra, kMsg, kMsg, 2); }), 0);
  ASSERT_GE(p.post([&] { return ab2.ab->postRecv(*mra, 2 * kMsg, kMsg, 3); }), 0);
  fill(sc.data, kMsg, 3);
  fill(sb.data, kMsg, 2);
  fill(sb.data + kMsg, kMsg, 4);
  ASSERT_GE(p.post([&] { return ac.ba->postSend(*msc, 0, kMsg, 30); }), 0);
  ASSERT_GE(p.post([&] { return ab2.ba->postSend(*msb, kMsg, kMsg, 40); }), 0);
  ASSERT_GE(p.post([&] { return ab.ba->postSend(*msb, 0, kMsg, 20); }), 0);
  for (uint64_t ctx : {1, 2, 3}) {
    Completion x = p.waitFor(a.get(), ctx);
    ASSERT_TRUE(x.ok()) << a->errorText(x);
  }
  EXPECT_TRUE(matches(ra.data, kMsg, 2)) << "connection a-b received someone else's data";
  EXPECT_TRUE(matches(ra.data + kMsg, kMsg, 3)) << "connection a-c received someone else's data";
  EXPECT_TRUE(matches(ra.data + 2 * kMsg, kMsg, 4)) << "second a-b connection got wrong data";
  EXPECT_TRUE(p.waitFor(b.get(), 20).ok());
  EXPECT_TRUE(p.waitFor(b.get(), 40).ok());
  EXPECT_TRUE(p.waitFor(c.get(), 30).ok());
}

TEST_P(OfiMsgTransport, EndpointTeardownWithPostedReceivesLeavesDeviceUsable) {
  auto a = open();
  auto b = open();
  Buffer buf(4096), other(4096);
  auto ma = a->registerMemory(buf.data, 4096);
  auto mb = b->registerMemory(other.data, 4096);
  {
    Link l = connectPairConcurrently(*a, *b);
    Poller p({a.get(), b.get()});
    for (uint32_t i = 0; i < 4; ++i)
      ASSERT_GE(p.post([&] { return l.ab->postRecv(*ma, i * 1024, 1024, 40 + i); }), 0);
  }
  Link l = connectPairConcurrently(*a, *b);
  Poller p({a.get(), b.get()});
  ASSERT_GE(p.post([&] { return l.ab->postRecv(*ma, 0, 1024, 50); }), 0);
  fill(other.data, 1024, 5);
  ASSERT_GE(p.post([&] { return l.ba->postSend(*mb, 0, 1024, 51); }), 0);
  Completion c = p.waitFor(a.get(), 50);
  ASSERT_TRUE(c.ok()) << a->errorText(c);
  EXPECT_TRUE(matches(buf.data, 1024, 5));
  for (const Completion& x : p.completions(a.get()))
    EXPECT_FALSE(x.context >= 40 && x.context < 44) << "receive of a destroyed endpoint reported";
}

TEST_P(OfiMsgTransport, ConnectTimesOutNamingThePeerWhenItNeverConnects) {
  auto a = open();
  auto b = open();
  auto ca = a->createConnector();
  auto cb = b->createConnector();  // listens, but never calls connect()
  const int64_t t0 = nowNs();
  std::string m =
      messageOf<TimeoutError>([&] { (void)ca->connect(cb->localAddress(), Deadline(500)); });
  const double ms = static_cast<double>(nowNs() - t0) / 1e6;
  EXPECT_NE(m.find("peer"), std::string::npos) << m;
  EXPECT_NE(m.find("no FI_CONN"), std::string::npos) << m;
  if (std::string(GetParam().provider) == "tcp") {
    EXPECT_NE(m.find("127.0.0.1"), std::string::npos) << m;
  }
  EXPECT_GE(ms, 450.0);
  EXPECT_LT(ms, 5000.0);
}

INSTANTIATE_TEST_SUITE_P(Providers, OfiMsgTransport,
                         ::testing::Values(ProviderCase{"tcp", "lo"}, ProviderCase{"verbs", ""}),
                         caseName);

TEST_F(OfiErrors, UnknownProviderForMsgListsMsgProviders) {
  DeviceOptions o = base();
  o.provider = "nosuchprovider";
  o.endpointType = "msg";
  std::string m = messageOf<UsageError>([&] { (void)ofi::openDevice(o); });
  EXPECT_NE(m.find("nosuchprovider"), std::string::npos) << m;
  EXPECT_NE(m.find("FI_EP_MSG"), std::string::npos) << m;
  EXPECT_NE(m.find("tcp"), std::string::npos) << m;
  // An RDM-only provider is not an FI_EP_MSG provider either.
  o.provider = "tcp;ofi_rxm";
  EXPECT_THROW((void)ofi::openDevice(o), UsageError);
}

TEST_F(OfiErrors, MsgAddressIsNotAcceptedByRdmAndViceVersa) {
  DeviceOptions m = base();
  m.provider = "tcp";
  m.endpointType = "msg";
  auto dm = ofi::openDevice(m);
  auto dr = ofi::openDevice(base());
  auto cm = dm->createConnector();
  auto cr = dr->createConnector();
  EXPECT_THROW((void)cr->connect(cm->localAddress(), Deadline(1000)), ProtocolError);
  EXPECT_THROW((void)cm->connect(cr->localAddress(), Deadline(1000)), ProtocolError);
}

#endif  // RDMABENCH_HAVE_OFI

}  // namespace
}  // namespace rdmabench::transport
