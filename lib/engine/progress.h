#pragma once
// Completion polling with a no-progress deadline, a watchdog and Ctrl-C checks: the one place
// where engines wait. Each idle spin costs one Device::poll(); the clock (vDSO, no syscall) and
// the interrupt flag are checked every 64 idle spins. The watchdog (a control-plane liveness
// check that costs a syscall) runs only once no completion has arrived for kWatchdogAfterNs
// (50 ms), then every kWatchdogEveryNs (20 ms) while the stall lasts: never on a wall-clock
// cadence while completions flow, so the timed loop stays as tight as the transport allows and
// the tails stay the fabric's. A dead peer is noticed ~50-70 ms after its last completion.
// Thread-safety: one Progress per benchmark thread.

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "transport/transport.h"

namespace rdmabench::engine {

class Progress {
 public:
  // No completion for this long before the first watchdog run, ns.
  static constexpr int64_t kWatchdogAfterNs = 50'000'000;
  // Watchdog cadence while the stall lasts, ns.
  static constexpr int64_t kWatchdogEveryNs = 20'000'000;
  // Monotonic nanoseconds; tests inject a fake clock.
  using NowFn = int64_t (*)();

  // `timeoutMs`: longest time without any completion before TimeoutError. `watchdog`: called
  // periodically while idle; it throws to abort (e.g. the peer closed the control channel).
  // `peer` names the peer in errors. `useEvent`: sleep in Device::waitForEvent between polls.
  Progress(transport::Device& device, int64_t timeoutMs, std::function<void()> watchdog,
           std::string peer, bool useEvent);

  // Sets the phase named in errors ("size 4096, warmup").
  void setPhase(std::string phase) { phase_ = std::move(phase); }
  // Replaces the clock of the deadline and watchdog checks (tests). Default nowNs().
  void setClock(NowFn now) { now_ = now; }
  const std::string& phase() const { return phase_; }

  // Polls once and calls `handler(const Completion&)` for each completion. Throws
  // TransportError for an error completion (naming op, phase, peer and the library's text).
  // When nothing arrived, accounts one idle spin (deadline / watchdog / Ctrl-C checks).
  template <typename Handler>
  size_t pollOnce(Handler&& handler) {
    size_t n = device_.poll(completions_.data(), completions_.size());
    if (n == 0) {
      idle();
      return 0;
    }
    idleSpins_ = 0;
    progressMarked_ = false;
    for (size_t i = 0; i < n; ++i) {
      const transport::Completion& c = completions_[i];
      if (c.status != 0) fail(c);
      handler(c);
    }
    return n;
  }

  // Passive waits (the target of one-sided operations sees no completions for the whole run)
  // are bounded by the watchdog (peer alive on the control channel) and by one hour instead of
  // the no-progress timeout.
  void setPassive(bool passive) { passive_ = passive; }

  // Accounts one idle spin of a loop that waits on memory (write ping-pong) rather than on
  // completions; same checks as pollOnce's idle path.
  void idle();
  // Marks progress (resets the no-progress deadline) for memory-polling loops.
  void progressed() {
    idleSpins_ = 0;
    progressMarked_ = false;
  }

 private:
  [[noreturn]] void fail(const transport::Completion& c);
  void slowChecks();
  void runWatchdog();  // adds the phase to the watchdog's ProtocolErrors

  transport::Device& device_;
  int64_t timeoutNs_;
  std::function<void()> watchdog_;
  std::string peer_;
  bool useEvent_;
  bool passive_ = false;
  std::string phase_;
  std::array<transport::Completion, 32> completions_;
  NowFn now_;
  uint32_t idleSpins_ = 0;
  bool progressMarked_ = false;  // false: lastProgressNs_ is set at the next slow check
  int64_t lastProgressNs_ = 0;
  int64_t lastWatchdogNs_ = 0;
};

}  // namespace rdmabench::engine
