#pragma once
// Shared helpers of the libfabric (ofi) integration tests (ofi_transport_test.cc,
// ofi_msg_transport_test.cc, ofi_errors_test.cc): provider cases and their skip reasons,
// page-aligned buffers with a data pattern, a Poller that progresses every device of a test,
// and loopback connection of two devices. Only built with RDMABENCH_HAVE_OFI.

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
#include "transport/ofi/ofi_device.h"
#include "transport/transport.h"

namespace rdmabench::transport::ofitest {

inline constexpr int64_t kWaitMs = 30000;

// ofi_rxm sizes its core CQ as FI_UNIVERSE_SIZE (256) x msg queue sizes, beyond soft-RoCE's
// 32767 CQEs (fi_enable then fails with EINVAL). Set before libfabric initializes; a value
// from the caller's environment wins.
inline const bool kUniverseSizeSet = [] { return setenv("FI_UNIVERSE_SIZE", "64", 0) == 0; }();

struct ProviderCase {
  const char* provider;
  const char* domain;  // "" = first domain fi_getinfo returns
};

inline void PrintTo(const ProviderCase& c, std::ostream* os) {
  *os << c.provider << (*c.domain ? " domain " : "") << c.domain;
}

inline std::string caseName(const ::testing::TestParamInfo<ProviderCase>& info) {
  std::string n;
  for (const char* p = info.param.provider; *p; ++p)
    n += std::isalnum(*p) ? *p : '_';
  return n;
}

// Empty when `c` can be opened here, else the reason (for GTEST_SKIP).
inline std::string unavailableReason(const ProviderCase& c) {
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

inline void fill(uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i)
    p[i] = static_cast<uint8_t>((i * 131 + seed * 7 + (i >> 8)) ^ seed);
}
inline bool matches(const uint8_t* p, size_t n, uint32_t seed) {
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

inline Link connectPair(Device& a, Device& b) {
  auto ca = a.createConnector();
  auto cb = b.createConnector();
  EXPECT_LE(ca->localAddress().size(), kMaxAddressBytes);
  Link l;
  l.ab = ca->connect(cb->localAddress(), Deadline(kWaitMs));
  l.ba = cb->connect(ca->localAddress(), Deadline(kWaitMs));
  return l;
}

// RMA write of 8 B, 4 KiB and `bytes` from `src` (registered as `ms`) over `ab` (a's endpoint)
// into `remote` (b's `dst`): the target keeps polling until the last byte has landed; then, when
// `a` grants RMA reads, `bytes` read back into `back` (registered as `mback`). Shared by the RDM
// and MSG endpoint tests; fatal failures return early (check HasFatalFailure()).
inline void checkWriteThenRead(Poller& p, Device& a, Endpoint& ab, MemoryRegion& ms,
                               MemoryRegion& mback, const RemoteRegion& remote, Buffer& src,
                               Buffer& dst, Buffer& back, uint32_t bytes) {
  for (uint32_t len : {uint32_t{8}, uint32_t{4096}, bytes}) {
    SCOPED_TRACE("write of " + std::to_string(len));
    std::memset(dst.data, 0, bytes);
    fill(src.data, len, len);
    constexpr uint8_t kMarker = 0xA5;
    src.data[len - 1] = kMarker;
    ASSERT_GE(p.post([&] { return ab.postWrite(ms, 0, len, remote, 0, 7); }), 0);
    Completion c = p.waitFor(&a, 7);
    ASSERT_TRUE(c.ok()) << a.errorText(c);
    EXPECT_EQ(c.op, OpKind::kWrite);
    // The target keeps polling until the last byte has landed.
    Deadline deadline(kWaitMs);
    while (*reinterpret_cast<volatile uint8_t*>(dst.data + len - 1) != kMarker) {
      ASSERT_FALSE(deadline.expired()) << "written data never landed at the target";
      p.pollAll();
    }
    EXPECT_TRUE(matches(dst.data, len - 1, len));
  }
  if (a.caps().rmaRead) {
    fill(dst.data, bytes, 99);
    ASSERT_GE(p.post([&] { return ab.postRead(mback, 0, bytes, remote, 0, 8); }), 0);
    Completion c = p.waitFor(&a, 8);
    ASSERT_TRUE(c.ok()) << a.errorText(c);
    EXPECT_EQ(c.op, OpKind::kRead);
    EXPECT_TRUE(matches(back.data, bytes, 99));
  }
}

template <class E>
inline std::string messageOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

// Empty when FI_EP_MSG provider `c` can be opened here, else the reason.
inline std::string msgUnavailableReason(const ProviderCase& c) {
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
inline Link connectPairConcurrently(Device& a, Device& b, int64_t timeoutMs = kWaitMs) {
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

}  // namespace rdmabench::transport::ofitest
