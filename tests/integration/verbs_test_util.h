#pragma once
// Shared helpers of the libibverbs integration tests (verbs_transport_test.cc,
// verbs_errors_test.cc): device options from the environment, the skip without a usable RDMA
// device, completion waits, a data pattern and a loopback pair of devices with connected QPs.
//
// Environment: RDMABENCH_VERBS_DEVICE picks the device (default: auto); RXE_IP (set by the VM
// harness) is the device's IPv4 address, used as peerHost for GID selection.

#include <gtest/gtest.h>

#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/error.h"
#include "transport/backends.h"
#include "transport/transport.h"

namespace rdmabench::transport::verbstest {

inline constexpr int kWaitMs = 20000;

inline std::string envOr(const char* name, const std::string& dflt) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : dflt;
}

inline DeviceOptions baseOptions() {
  DeviceOptions o;
  o.device = envOr("RDMABENCH_VERBS_DEVICE", "");
  o.peerHost = envOr("RXE_IP", "");
  return o;
}

inline bool containsText(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

#define SKIP_WITHOUT_VERBS()                                                   \
  do {                                                                         \
    BackendStatus st_ = verbs::probe();                                        \
    if (!st_.built) GTEST_SKIP() << "verbs backend not built: " << st_.reason; \
    if (!st_.usable) GTEST_SKIP() << "no usable RDMA device: " << st_.reason;  \
  } while (0)

// Polls `dev` until one completion arrives (or throws on timeout); fails on an error status.
inline Completion waitOne(Device& dev, bool useEvent = false, int timeoutMs = kWaitMs) {
  Deadline deadline(timeoutMs);
  Completion c;
  while (dev.poll(&c, 1) == 0) {
    if (deadline.expired())
      throw TimeoutError("test: no completion on " + dev.name() + " within " +
                         std::to_string(timeoutMs) + " ms");
    if (useEvent) dev.waitForEvent(100);
  }
  return c;
}

inline Completion waitOk(Device& dev, bool useEvent = false) {
  Completion c = waitOne(dev, useEvent);
  EXPECT_TRUE(c.ok()) << dev.errorText(c);
  return c;
}

inline void fillPattern(uint8_t* p, size_t n, uint8_t seed) {
  for (size_t i = 0; i < n; ++i)
    p[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
}

inline bool checkPattern(const uint8_t* p, size_t n, uint8_t seed) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != static_cast<uint8_t>(seed + i * 7 + (i >> 8))) return false;
  return true;
}

// Two devices (A, B) on the same RDMA device and `pairs` connected QP pairs between them.
// `concurrent`: B connects in a second thread while A does (rdma_cm: a connect waits for its
// peer); else one after the other (the out-of-band exchange needs no peer).
struct Loopback {
  std::unique_ptr<Device> a, b;
  std::vector<std::unique_ptr<Endpoint>> ea, eb;

  explicit Loopback(DeviceOptions o = baseOptions(), int pairs = 1, bool concurrent = false) {
    a = verbs::openDevice(o);
    b = verbs::openDevice(o);
    for (int i = 0; i < pairs; ++i) {
      auto ca = a->createConnector();
      auto cb = b->createConnector();
      auto addrA = ca->localAddress();
      auto addrB = cb->localAddress();
      EXPECT_LE(addrA.size(), kMaxAddressBytes);
      if (concurrent) {
        auto fb =
            std::async(std::launch::async, [&] { return cb->connect(addrA, Deadline(kWaitMs)); });
        ea.push_back(ca->connect(addrB, Deadline(kWaitMs)));
        eb.push_back(fb.get());
      } else {
        ea.push_back(ca->connect(addrB, Deadline(kWaitMs)));
        eb.push_back(cb->connect(addrA, Deadline(kWaitMs)));
      }
    }
  }
};

}  // namespace rdmabench::transport::verbstest
