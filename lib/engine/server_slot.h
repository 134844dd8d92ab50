#pragma once
// Internal to lib/engine (server.cc): the daemon's one test slot, shared by the parent and every
// session child, the admission question a child asks, and two facts about a child process for the
// log. Not a public API.

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace rdmabench::engine::detail {

// Who holds the one test slot; lives in memory shared by the parent and every child.
struct TestSlot {
  std::atomic<int32_t> owner;  // pid of the child running a test, 0 = free
  std::atomic<int32_t> first;  // pid of the first child that took the slot, never cleared
  std::atomic<uint32_t> described;
  char what[256];
};
static_assert(std::atomic<int32_t>::is_always_lock_free);

// The slot in an anonymous shared mapping (SystemError when mmap fails). Created by the parent
// before it forks; used by the children (take) and the parent (release). Lock-free atomics only.
class SharedSlot {
 public:
  SharedSlot();
  ~SharedSlot();
  SharedSlot(const SharedSlot&) = delete;
  SharedSlot& operator=(const SharedSlot&) = delete;

  // In a child: takes the slot or throws Error "server busy" naming the running test. Waits up
  // to `graceMs` first, so back-to-back runs (A/B variants, scripts) do not collide with the
  // previous session's teardown; InterruptedError on Ctrl-C meanwhile. With `once` (server
  // --once) only the first session ever to take it gets it; later ones get Error kOnceBusy.
  void take(const std::string& description, int64_t graceMs, bool once);
  // Frees the slot when `pid` holds it; true when it did.
  bool release(pid_t pid);
  // The pid of the first session that took the slot (its test started), 0 = none yet. Under
  // --once that session is the server's one test.
  pid_t firstTaker() const { return slot_->first.load(); }

 private:
  TestSlot* slot_ = nullptr;
};

// The admission protocol on the socketpair between a session child and the daemon: the child
// asks once, after its hello; the daemon answers whether it may run among --max-connections
// sessions (and, with --once, whether the one test has not started yet).
constexpr char kAskAdmission = 'H', kAdmitted = 'Y', kRefused = 'N', kRefusedOnce = 'O';
// What a client is told when --once's one test is already running.
extern const char* const kOnceBusy;
// In a child: asks over `fd` (closed on return) and returns once admitted. Errors: Error "server
// busy" naming --max-connections `maxConnections` or --once when refused, Error when the daemon
// does not answer within 2 s, SystemError when the socket fails, InterruptedError on Ctrl-C.
void askAdmission(int fd, uint32_t maxConnections);

// "stopped (SIGSTOP)" or "running", from /proc/PID/stat, for the log.
std::string processState(pid_t pid);
// "SIGSEGV", or "signal N" for one without a name.
std::string signalName(int sig);

}  // namespace rdmabench::engine::detail
