#include "engine/progress.h"

#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "common/measure_clock.h"

namespace rdmabench::engine {

Progress::Progress(transport::Device& device, int64_t timeoutMs, std::function<void()> watchdog,
                   std::string peer, transport::ProgressMode mode)
    : device_(device),
      timeoutNs_(timeoutMs * 1'000'000),
      watchdog_(std::move(watchdog)),
      peer_(std::move(peer)),
      mode_(mode),
      now_(&measureNs) {}

void Progress::idle() {
  if (mode_ == transport::ProgressMode::kEvent) {
    // A completion ends the wait at once; the timeout only paces the slow checks. After 200 ms
    // without progress they run every 100 ms instead of every 10: 1024 local ranks waiting for
    // each other's wire-up spent most of their CPU waking up (docs/rendezvous.md "Scale").
    const bool longStall = progressMarked_ && now_() - lastProgressNs_ > kLongStallNs;
    device_.waitForEvent(longStall ? 100 : 10);
    slowChecks();
    return;
  }
  // Busy polling (or yielding), but nothing completed for kBackoffAfterNs (a stopped or slow peer,
  // a lost link; slowChecks() decides): 100 us sleeps between polls, so a stalled session does not
  // burn a core until its timeout. A data path that still moves completes something well within
  // that stretch. Until then an idle spin costs the poll and a counter: the clock is read in
  // slowChecks() only, every 64 idle spins (it was read on every idle spin once a stall had
  // begun: a vDSO call on a TSC clocksource, a system call and an HPET read in a VM whose
  // clocksource is hpet, in every spin of a loop that waits for a completion).
  if (backingOff_) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    slowChecks();
    return;
  }
  // Yield mode: hand the CPU to another runnable thread on it (a rank with work, when ranks
  // outnumber cores) and poll again when the scheduler returns it; with nothing else runnable
  // sched_yield() returns at once, and the loop is a busy poll with a system call per spin.
  if (mode_ == transport::ProgressMode::kYield) sched_yield();
  if (++idleSpins_ % 64 == 0) slowChecks();
}

void Progress::slowChecks() {
  int64_t now = now_();
  if (!progressMarked_) {
    // First slow check since the last completion: the stall starts here (at most 64 polls late).
    progressMarked_ = true;
    lastProgressNs_ = now;
    lastWatchdogNs_ = now - kWatchdogEveryNs;
  }
  if (mode_ != transport::ProgressMode::kEvent && !passive_ &&
      now - lastProgressNs_ > kBackoffAfterNs)
    backingOff_ = true;
  if (interrupted()) throwIfInterrupted(where().c_str());
  if (watchdog_ && now - lastProgressNs_ >= kWatchdogAfterNs &&
      now - lastWatchdogNs_ >= kWatchdogEveryNs) {
    lastWatchdogNs_ = now;
    runWatchdog();
  }
  int64_t limitNs = passive_ ? int64_t{3'600'000'000'000} : timeoutNs_;
  if (now - lastProgressNs_ > limitNs)
    throw TimeoutError(fmt::format("no progress for {:.1f} s{} during {} (--timeout)",
                                   static_cast<double>(limitNs) / 1e9,
                                   peer_.empty() ? "" : " from peer " + peer_, where()));
}

void Progress::runWatchdog() {
  try {
    watchdog_();
  } catch (const PeerError&) {
    throw;
  } catch (const ProtocolError& e) {
    throw ProtocolError(fmt::format("{} (during {})", e.what(), where()));
  }
}

void Progress::fail(const transport::Completion& c) {
  // A peer that failed or was interrupted says why on the control channel just before its data
  // path closes: prefer its message over the bare transport error (wait up to 200 ms for it).
  if (watchdog_) {
    for (int i = 0; i < 20; ++i) {
      try {
        runWatchdog();
      } catch (const PeerError&) {
        throw;
      } catch (const TimeoutError&) {
        throw;  // the peer's report of its timeout (e.g. while this process was stopped)
      } catch (const UsageError&) {
        throw;
      } catch (const Error&) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  throw TransportError(
      fmt::format("{} completion failed during {}{}: {}", transport::toString(c.op), where(),
                  peer_.empty() ? "" : " with peer " + peer_, device_.errorText(c)));
}

std::string Step::text() const {
  if (!pattern) return {};
  if (ranks) return fmt::format(fmt::runtime(pattern), fmt::join(ranks, ranks + rankCount, ", "));
  return fmt::format(fmt::runtime(pattern), a, b);
}

std::string Progress::where() const {
  std::string w = stage_;
  if (mark_) w += (w.empty() ? "" : ", ") + std::string(mark_);
  const std::string phase = phase_.empty() ? step_.text() : phase_;
  if (!phase.empty()) w += (w.empty() ? "" : ": ") + phase;
  return w;
}

void rethrowDuring(const std::exception& e, const std::string& phase) {
  std::string m = e.what();
  if (phase.empty() || m.find("during ") != std::string::npos ||
      dynamic_cast<const UsageError*>(&e))
    throw;
  m += fmt::format(" (during {})", phase);
  if (dynamic_cast<const TimeoutError*>(&e)) throw TimeoutError(m);
  if (dynamic_cast<const InterruptedError*>(&e)) throw InterruptedError(m);
  if (dynamic_cast<const PeerError*>(&e)) throw PeerError(m);
  if (dynamic_cast<const ProtocolError*>(&e)) throw ProtocolError(m);
  if (dynamic_cast<const TransportError*>(&e)) throw TransportError(m);
  throw Error(m);
}

void testHold(const char* phase, int rank, const std::string& where) {
  const char* spec = std::getenv("RDMABENCH_TEST_HOLD");
  if (!spec || !*spec) return;
  std::string want = spec;
  int wantRank = -1;
  if (auto at = want.find('@'); at != std::string::npos) {
    wantRank = std::atoi(want.c_str() + at + 1);
    want.resize(at);
  }
  if (want != phase || wantRank != rank) return;
  const char* msEnv = std::getenv("RDMABENCH_TEST_HOLD_MS");
  const int ms = msEnv && *msEnv ? std::atoi(msEnv) : 1000;
  log::write(fmt::format("rdmabench: test hook: pid {} holding at {}\n", getpid(), phase));
  for (int waited = 0; waited < ms; waited += 10) {
    throwIfInterrupted(where.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // A fault meant for the hold that comes later hits another phase: the test can tell.
  log::write(fmt::format("rdmabench: test hook: pid {} resumes after {}\n", getpid(), phase));
}

}  // namespace rdmabench::engine
