#include "engine/progress.h"

#include <thread>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"

namespace rdmabench::engine {

Progress::Progress(transport::Device& device, int64_t timeoutMs, std::function<void()> watchdog,
                   std::string peer, bool useEvent)
    : device_(device),
      timeoutNs_(timeoutMs * 1'000'000),
      watchdog_(std::move(watchdog)),
      peer_(std::move(peer)),
      useEvent_(useEvent),
      now_(&nowNs) {}

void Progress::idle() {
  if (useEvent_) {
    device_.waitForEvent(10);
    slowChecks();
    return;
  }
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
  throwIfInterrupted(phase_.c_str());
  if (watchdog_ && now - lastProgressNs_ >= kWatchdogAfterNs &&
      now - lastWatchdogNs_ >= kWatchdogEveryNs) {
    lastWatchdogNs_ = now;
    runWatchdog();
  }
  int64_t limitNs = passive_ ? int64_t{3'600'000'000'000} : timeoutNs_;
  if (now - lastProgressNs_ > limitNs)
    throw TimeoutError(fmt::format("no progress for {:.1f} s from peer {} during {} (--timeout)",
                                   static_cast<double>(limitNs) / 1e9, peer_, phase_));
}

void Progress::runWatchdog() {
  try {
    watchdog_();
  } catch (const PeerError&) {
    throw;
  } catch (const ProtocolError& e) {
    throw ProtocolError(fmt::format("{} (during {})", e.what(), phase_));
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
      } catch (const Error&) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  throw TransportError(fmt::format("{} completion failed during {} with peer {}: {}",
                                   transport::toString(c.op), phase_, peer_, c.error));
}

}  // namespace rdmabench::engine
