#include "common/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "common/error.h"

namespace rdmabench {
namespace {

std::atomic<int> gSignals{0};
std::atomic<int> gLastSignal{0};

void onAlarm(int) {
  _exit(130);
}

void onSignal(int sig) {
  // A second signal of the same kind (Ctrl-C pressed twice) forces the exit. A SIGTERM after a
  // SIGINT is not a second request: under `--np`, a terminal's Ctrl-C reaches every rank and the
  // launcher then sends SIGTERM too; the rank is already tearing down and exits 4.
  const int previous = gLastSignal.exchange(sig, std::memory_order_relaxed);
  if (gSignals.fetch_add(1, std::memory_order_relaxed) >= 1 && previous == sig) _exit(130);
  // Teardown gets 10 s; a library call that never returns cannot keep the process alive.
  alarm(10);
}

}  // namespace

void installInterruptHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGALRM, onAlarm);
}

bool interrupted() {
  return gSignals.load(std::memory_order_relaxed) != 0;
}

const char* interruptName() {
  return gLastSignal.load(std::memory_order_relaxed) == SIGTERM ? "SIGTERM" : "Ctrl-C";
}

void throwIfInterrupted(const char* phase) {
  if (interrupted())
    throw InterruptedError(std::string("interrupted (") + interruptName() + ") during " + phase);
}

void clearInterrupted() {
  gSignals.store(0, std::memory_order_relaxed);
}

}  // namespace rdmabench
