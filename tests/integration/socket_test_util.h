#pragma once
// Shared by the socket integration tests (socket_transport_test.cc, socket_batch_test.cc): two
// socket devices on loopback, connected, and polled together. Not thread-safe (one test thread).

#include <gtest/gtest.h>

#include <functional>
#include <future>
#include <memory>
#include <random>
#include <vector>

#include "common/error.h"
#include "transport/backends.h"
#include "transport/socket/endpoint.h"
#include "transport/transport.h"

namespace rdmabench::transport::testing {

inline DeviceOptions loopbackOptions() {
  DeviceOptions o;
  o.localHost = "127.0.0.1";
  return o;
}

// Connects one connector of `a` with one of `b`; the passive side runs on a helper thread so
// the order of the two connect() calls does not matter.
inline std::pair<std::unique_ptr<Endpoint>, std::unique_ptr<Endpoint>> connectPair(Device& a,
                                                                                   Device& b) {
  auto ca = a.createConnector();
  auto cb = b.createConnector();
  auto addrA = ca->localAddress();
  auto addrB = cb->localAddress();
  auto fb = std::async(std::launch::async, [&] { return cb->connect(addrA, Deadline(5000)); });
  auto ea = ca->connect(addrB, Deadline(5000));
  return {std::move(ea), fb.get()};
}

struct Harness {
  std::unique_ptr<Device> a = socket::openDevice(loopbackOptions());
  std::unique_ptr<Device> b = socket::openDevice(loopbackOptions());
  std::unique_ptr<Endpoint> ea, eb;
  std::vector<Completion> ca, cb;  // completions seen on each side

  Harness() { std::tie(ea, eb) = connectPair(*a, *b); }

  void pollOnce() {
    Completion buf[32];
    size_t n = a->poll(buf, 32);
    ca.insert(ca.end(), buf, buf + n);
    n = b->poll(buf, 32);
    cb.insert(cb.end(), buf, buf + n);
  }
  // Polls both devices until `done` or the deadline; returns done().
  bool pollUntil(const std::function<bool()>& done, int timeoutMs = 10000) {
    Deadline d(timeoutMs);
    while (!done()) {
      if (d.expired()) return false;
      pollOnce();
    }
    return true;
  }
};

inline void fillRandom(std::vector<uint8_t>& v, uint32_t seed) {
  std::mt19937 g(seed);
  for (auto& x : v)
    x = static_cast<uint8_t>(g());
}

}  // namespace rdmabench::transport::testing
