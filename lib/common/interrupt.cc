#include "common/interrupt.h"
#include <cstdio>

#include <dlfcn.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "common/error.h"

namespace rdmabench {
namespace {

std::atomic<int> gSignals{0};
std::atomic<int> gLastSignal{0};
std::atomic<int64_t> gFirstSignalNs{0};  // CLOCK_MONOTONIC of the first signal

// A repeat of the same signal within this window is the same request delivered twice, not a
// second Ctrl-C: GNU timeout (and any launcher that signals both its child and the child's group)
// sends a SIGINT to its child and then to its whole process group, so the child sees two within
// microseconds. A person pressing Ctrl-C twice takes far longer.
constexpr int64_t kRepeatWindowNs = 250'000'000;

int64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe (POSIX.1-2008)
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void onAlarm(int) {
  _exit(130);
}

void onSignal(int sig) {
  // A second signal of the same kind (Ctrl-C pressed twice) forces the exit. A SIGTERM after a
  // SIGINT is not a second request: under `--np`, a terminal's Ctrl-C reaches every rank and the
  // launcher then sends SIGTERM too; the rank is already tearing down and exits 4.
  // The same signal twice within kRepeatWindowNs counts once (see above). The first signal's
  // time is claimed before the count, so a repeat taken by another thread meanwhile sees it.
  const int64_t now = monotonicNs();
  int64_t first = 0;
  if (gFirstSignalNs.compare_exchange_strong(first, now, std::memory_order_relaxed)) first = now;
  const int previous = gLastSignal.exchange(sig, std::memory_order_relaxed);
  if (gSignals.fetch_add(1, std::memory_order_relaxed) >= 1) {
    if (previous == sig && now - first >= kRepeatWindowNs) _exit(130);
    return;
  }
  // Teardown gets 10 s; a library call that never returns cannot keep the process alive.
  alarm(10);
}

}  // namespace

namespace {
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
bool gCaptured = false;
bool gIgnoredAtStart[3] = {};
sigset_t gStartMask;

bool ignoredNow(int sig) {
  struct sigaction old {};
  return sigaction(sig, nullptr, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
         old.sa_handler == SIG_IGN;
}
}  // namespace

void captureStartSignals() {
  sigset_t block;
  sigemptyset(&block);
  for (int i = 0; i < 3; ++i) {
    gIgnoredAtStart[i] = ignoredNow(kStopSignals[i]);
    sigaddset(&block, kStopSignals[i]);
  }
  sigprocmask(SIG_BLOCK, &block, &gStartMask);
  gCaptured = true;
}

void installInterruptHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i) {
    const int sig = kStopSignals[i];
    // Inherited as ignored: kept so (a shell starts `cmd &` with SIGINT ignored, nohup SIGHUP),
    // also where a library's constructor put its own handler there meanwhile.
    if (gCaptured ? gIgnoredAtStart[i] : ignoredNow(sig)) {
      signal(sig, SIG_IGN);
      continue;
    }
    sigaction(sig, &sa, nullptr);
  }
  // A signal that arrived since captureStartSignals() is delivered now, to our handler.
  if (gCaptured) sigprocmask(SIG_SETMASK, &gStartMask, nullptr);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGALRM, onAlarm);
}

int dropLibraryCrashHandlers() {
  int reset = 0;
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0) continue;
    void* fn = (old.sa_flags & SA_SIGINFO) ? reinterpret_cast<void*>(old.sa_sigaction)
                                           : reinterpret_cast<void*>(old.sa_handler);
    if (fn == reinterpret_cast<void*>(SIG_DFL) || fn == reinterpret_cast<void*>(SIG_IGN)) continue;
    Dl_info info{};
    if (dladdr(fn, &info) == 0 || !info.dli_fname) continue;
    const std::string lib = info.dli_fname;
    const bool psm = lib.find("libinfinipath") != std::string::npos ||
                     lib.find("libpsm") != std::string::npos ||
                     lib.find("libhfi") != std::string::npos;
    if (!psm) continue;
    signal(sig, SIG_DFL);
    ++reset;
  }
  return reset;
}

bool interrupted() {
  return gSignals.load(std::memory_order_relaxed) != 0;
}

const char* interruptName() {
  switch (gLastSignal.load(std::memory_order_relaxed)) {
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "Ctrl-C";
  }
}

int interruptSignal() {
  const int sig = gLastSignal.load(std::memory_order_relaxed);
  return sig != 0 ? sig : SIGINT;
}

namespace {
std::atomic<long> gLauncherPid{0};
std::atomic<int> gLauncherStderr{-1};
}  // namespace

void setLauncherStderr(int fd) {
  gLauncherStderr.store(fd, std::memory_order_relaxed);
}

void setLauncherPid(long pid) {
  gLauncherPid.store(pid, std::memory_order_relaxed);
}

std::string launcherDeath(int64_t waitMs) {
  const long launcher = gLauncherPid.load(std::memory_order_relaxed);
  if (launcher == 0) return "";
  const int64_t end = monotonicNs() + waitMs * 1'000'000;
  while (static_cast<long>(getppid()) == launcher) {
    if (monotonicNs() >= end) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // The folding pipe's reader is gone: write the rest to the stderr the rank was started with.
  const int saved = gLauncherStderr.exchange(-1, std::memory_order_relaxed);
  if (saved >= 0) {
    std::fflush(stderr);
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
  }
  return "launcher (pid " + std::to_string(launcher) + ") died";
}

std::string withLauncherDeath(const std::string& msg) {
  if (gLauncherPid.load(std::memory_order_relaxed) == 0) return msg;
  const std::string died = launcherDeath(interrupted() ? 500 : 0);
  if (died.empty() || msg.find(died) != std::string::npos) return msg;
  return died + ": " + msg;
}

void throwIfInterrupted(const char* phase) {
  if (!interrupted()) return;
  std::string died = launcherDeath();
  throw InterruptedError((died.empty() ? "" : died + ": ") + "interrupted (" + interruptName() +
                         ") during " + phase);
}

namespace {
thread_local std::function<void()>* tConnectCheck = nullptr;
thread_local int64_t tConnectCheckNs = 0;  // when it last ran
thread_local bool tInConnectCheck = false;
constexpr int64_t kConnectCheckEveryNs = 100'000'000;
}  // namespace

void throwIfConnectAborted(const char* phase) {
  throwIfInterrupted(phase);
  if (!tConnectCheck || tInConnectCheck) return;
  const int64_t now = monotonicNs();
  if (now - tConnectCheckNs < kConnectCheckEveryNs) return;
  tConnectCheckNs = now;
  tInConnectCheck = true;
  struct Reset {
    ~Reset() { tInConnectCheck = false; }
  } reset;
  (*tConnectCheck)();
}

ScopedConnectCheck::ScopedConnectCheck(std::function<void()> check)
    : check_(std::move(check)), previous_(tConnectCheck) {
  tConnectCheck = &check_;
  tConnectCheckNs = 0;
}

ScopedConnectCheck::~ScopedConnectCheck() {
  tConnectCheck = previous_;
}

void clearInterrupted() {
  gSignals.store(0, std::memory_order_relaxed);
  gFirstSignalNs.store(0, std::memory_order_relaxed);
}

int exitStatusFor(const std::exception& e) {
  return interrupted() ? 4 : exitCodeFor(e);
}

}  // namespace rdmabench
