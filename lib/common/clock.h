#pragma once
// Monotonic time for measurement and deadlines. CLOCK_MONOTONIC through std::chrono::steady_clock
// (vDSO, ~20 ns per read on x86-64); no TSC calibration, so no CPU-frequency warnings (perftest's
// recurring complaint). Thread-safe.

#include <chrono>
#include <cstdint>

namespace rdmabench {

using Clock = std::chrono::steady_clock;

// Nanoseconds since an arbitrary fixed point; only differences are meaningful.
inline int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// A point in time after which a wait gives up. Cheap to copy and to check.
class Deadline {
 public:
  // Expires `timeoutMs` milliseconds from now; a negative value never expires.
  explicit Deadline(int64_t timeoutMs)
      : endNs_(timeoutMs < 0 ? INT64_MAX : nowNs() + timeoutMs * 1'000'000) {}
  static Deadline never() { return Deadline(-1); }
  bool expired() const { return endNs_ != INT64_MAX && nowNs() >= endNs_; }
  // Milliseconds left (0 when expired, -1 when it never expires), for poll(2)-style calls.
  int remainingMs() const {
    if (endNs_ == INT64_MAX) return -1;
    int64_t left = (endNs_ - nowNs()) / 1'000'000;
    return left < 0 ? 0 : (left > INT32_MAX ? INT32_MAX : static_cast<int>(left));
  }

 private:
  int64_t endNs_;
};

}  // namespace rdmabench
