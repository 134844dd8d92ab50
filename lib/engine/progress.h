#pragma once
// Completion polling with a no-progress deadline, a watchdog and Ctrl-C checks: the one place
// where engines wait. Each idle spin costs one Device::poll() and a counter; the clock and the
// interrupt flag are read every 64 idle spins only. That clock is the measurement clock
// (measureNs: rdtsc where --clock chose the TSC), not CLOCK_MONOTONIC: in a VM whose kernel
// clocksource is hpet every CLOCK_MONOTONIC read is a system call and an emulated HPET read,
// which the wait of a 4 KiB ping-pong on rxe paid several times per message on both sides
// (perftest's loop reads no clock at all; docs/transport-verbs.md, instrument 3). The watchdog (a
// control-plane liveness check that costs a syscall) runs only once no completion has arrived for
// kWatchdogAfterNs (50 ms), then every kWatchdogEveryNs (20 ms) while the stall lasts: never on a
// wall-clock cadence while completions flow, so the timed loop stays as tight as the transport
// allows and the tails stay the fabric's. A dead peer is noticed ~50-70 ms after its last
// completion (in event mode, up to 100 ms later once the stall passed kLongStallNs).
// Three progress modes (transport::ProgressMode, -e): busy poll; yield, the same loop plus one
// sched_yield() per empty poll, so that ranks sharing a CPU hand it to the rank with work at
// once (Open MPI's mpi_yield_when_idle) instead of when the scheduler's tick preempts them;
// event, sleeping in Device::waitForEvent between polls.
// Thread-safety: one Progress per benchmark thread.

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "transport/transport.h"

namespace rdmabench::engine {

// A step named in errors without formatting it in the timed loop: a constant fmt pattern plus
// up to two integers, or a list of ranks (joined with ", ") as the pattern's only argument.
// Formatted by text() only when an error or a timeout names it. `pattern` must outlive its use
// (a string literal); `ranks` must stay valid while the step is set.
struct Step {
  const char* pattern = nullptr;  // e.g. "ring allgather step {}: waiting for rank {}"
  int64_t a = 0, b = 0;           // the pattern's arguments (unused ones are ignored)
  const int* ranks = nullptr;     // non-null: the pattern's argument is this list
  size_t rankCount = 0;
  // The step's text ("" for no pattern). Allocates: call on error paths only.
  std::string text() const;
};

class Progress {
 public:
  // No completion for this long before the first watchdog run, ns.
  static constexpr int64_t kWatchdogAfterNs = 50'000'000;
  // Watchdog cadence while the stall lasts, ns.
  static constexpr int64_t kWatchdogEveryNs = 20'000'000;
  // Event mode: a stall longer than this sleeps 100 ms per idle() instead of 10 ms.
  static constexpr int64_t kLongStallNs = 200'000'000;
  // Busy-poll and yield modes (not passive): a stall longer than this sleeps 100 us per idle(), so
  // a session whose peer stopped reading does not spin a core until its timeout.
  static constexpr int64_t kBackoffAfterNs = 1'000'000'000;
  // Monotonic nanoseconds; tests inject a fake clock.
  using NowFn = int64_t (*)();

  // `timeoutMs`: longest time without any completion before TimeoutError. `watchdog`: called
  // periodically while idle; it throws to abort (e.g. the peer closed the control channel).
  // `peer` names the peer in errors (empty: the phase names whom the caller waits for, as in
  // the collectives). `mode`: how idle() waits (the device must have been opened with the same
  // mode: DeviceOptions::progress, for event mode's completion channel).
  Progress(transport::Device& device, int64_t timeoutMs, std::function<void()> watchdog,
           std::string peer, transport::ProgressMode mode);

  transport::ProgressMode mode() const { return mode_; }

  // Errors name where the run was (`where()`): the stage ("connect", "size 4096", "teardown"),
  // ", warmup" or ", measuring" once the iterations run, then the step ("tree: waiting for
  // rank 2"). Sets the stage; clears the step and the iteration mark.
  void setStage(std::string stage) {
    stage_ = std::move(stage);
    phase_.clear();
    step_ = Step{};
    mark_ = nullptr;
  }
  // Marks the iterations of the stage as warmup (true) or measured (false): a pointer store,
  // cheap inside the timed loop.
  void setWarmup(bool warmup) { mark_ = warmup ? "warmup" : "measuring"; }
  // Sets the step within the stage named in errors.
  void setPhase(std::string phase) {
    phase_ = std::move(phase);
    step_ = Step{};
  }
  // Same, for a step formatted only when an error names it (no allocation: timed loops).
  void setStep(const Step& step) {
    phase_.clear();
    step_ = step;
  }
  // Replaces the clock of the deadline and watchdog checks (tests). Default measureNs()
  // (common/measure_clock.h; CLOCK_MONOTONIC until a TSC is selected).
  void setClock(NowFn now) { now_ = now; }
  // The clock of the deadline and watchdog checks.
  NowFn clock() const { return now_; }
  // The step set by setPhase ("" after setStep; where() names both kinds).
  const std::string& phase() const { return phase_; }
  // "size 4096, measuring: verification pass": the stage, the iteration mark and the step.
  std::string where() const;

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
    backingOff_ = false;
    for (size_t i = 0; i < n; ++i) {
      const transport::Completion& c = completions_[i];
      if (!c.ok()) fail(c);
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
    backingOff_ = false;
  }

 private:
  [[noreturn]] void fail(const transport::Completion& c);
  void slowChecks();
  void runWatchdog();  // adds the phase to the watchdog's ProtocolErrors

  transport::Device& device_;
  int64_t timeoutNs_;
  std::function<void()> watchdog_;
  std::string peer_;
  transport::ProgressMode mode_;
  bool passive_ = false;
  std::string stage_;
  const char* mark_ = nullptr;  // "warmup", "measuring" or none
  std::string phase_;
  Step step_;  // used when phase_ is empty
  std::array<transport::Completion, 32> completions_;
  NowFn now_;
  uint32_t idleSpins_ = 0;
  bool progressMarked_ = false;  // false: lastProgressNs_ is set at the next slow check
  bool backingOff_ = false;      // polling stalled for kBackoffAfterNs: sleep between polls
  int64_t lastProgressNs_ = 0;
  int64_t lastWatchdogNs_ = 0;
};

// Rethrows the exception being handled, `e`, with " (during PHASE)" appended to its message, as
// the same error class (so the same exit status, docs/cli.md), unless the message already names
// a phase ("during ...") or is a usage error. Call only from inside a catch block.
[[noreturn]] void rethrowDuring(const std::exception& e, const std::string& phase);

// TEST ONLY fault-injection hook (docs/testing.md): when $RDMABENCH_TEST_HOLD is `PHASE` or
// `PHASE@RANK` (RANK = `rank`; -1 for a process without a rank) and `phase` matches, prints
// "rdmabench: test hook: pid P holding at PHASE" on stderr and waits $RDMABENCH_TEST_HOLD_MS
// (default 1000) ms, so that a test can signal the process, or cut its link, while it is
// known to be at that phase; then prints "... pid P resumes after PHASE" (a fault that came
// later missed the phase). Ctrl-C during the hold throws InterruptedError naming `where`.
void testHold(const char* phase, int rank, const std::string& where);

}  // namespace rdmabench::engine
