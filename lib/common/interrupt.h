#pragma once
// Ctrl-C handling. installInterruptHandlers() makes SIGINT/SIGTERM set a flag instead of killing
// the process, so every wait loop can notice it, throw InterruptedError and let destructors tear
// down QPs, MRs and endpoints. The same signal again, 250 ms or more after the first (Ctrl-C
// pressed twice), exits at once (status 130), and so does a teardown still running 10 s after
// the first. A repeat within 250 ms is the same request delivered twice (GNU timeout, say, will
// forward a SIGINT to the child and then to its process group) and only sets the flag again.
// SIGPIPE is ignored (a dead peer shows up as EPIPE on the socket instead).

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

}  // namespace rdmabench
