#pragma once
// Ctrl-C handling. installInterruptHandlers() makes SIGINT/SIGTERM set a flag instead of killing
// the process, so every wait loop can notice it, throw InterruptedError and let destructors tear
// down QPs, MRs and endpoints. The same signal again, 250 ms or more after the first (Ctrl-C
// pressed twice), exits at once (status 130), and so does a teardown still running 10 s after
// the first. A repeat within 250 ms is the same request delivered twice (GNU timeout, say, will
// forward a SIGINT to the child and then to its process group) and only sets the flag again.
// SIGPIPE is ignored (a dead peer shows up as EPIPE on the socket instead).

#include <functional>

namespace rdmabench {

// Idempotent; call once from main().
void installInterruptHandlers();

// True once SIGINT or SIGTERM arrived. Async-signal-safe read; cheap enough for hot loops.
bool interrupted();

// "Ctrl-C" (SIGINT) or "SIGTERM": what interrupted us, for messages.
const char* interruptName();

// Throws InterruptedError naming `phase` when interrupted() is true.
void throwIfInterrupted(const char* phase);

// Resets the flag (tests, and the server after it has torn down the interrupted session).
void clearInterrupted();

// For the transports' connection set-up loops (socket accept/connect, rdma_cm events, libfabric
// EQ): throwIfInterrupted(phase), then, at most every 100 ms, this thread's connect check if one
// is installed (ScopedConnectCheck), which throws what it throws. The collectives install the
// rendezvous store's dead-rank check for their wire-up, so a rank that dies before connecting
// ends its peers' connects at once, naming it, instead of after --timeout.
void throwIfConnectAborted(const char* phase);

// Installs `check` as this thread's connect check for its lifetime (the previous one comes
// back after). The check must not itself wait long; it is not run re-entrantly.
class ScopedConnectCheck {
 public:
  explicit ScopedConnectCheck(std::function<void()> check);
  ~ScopedConnectCheck();
  ScopedConnectCheck(const ScopedConnectCheck&) = delete;
  ScopedConnectCheck& operator=(const ScopedConnectCheck&) = delete;

 private:
  std::function<void()> check_;
  std::function<void()>* previous_;
};

}  // namespace rdmabench
