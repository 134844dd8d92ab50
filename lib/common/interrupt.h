#pragma once
// Ctrl-C handling. installInterruptHandlers() makes SIGINT/SIGTERM/SIGHUP set a flag instead of
// killing the process, so every wait loop can notice it, throw InterruptedError and let
// destructors tear down QPs, MRs and endpoints (and remove a half-written -o temporary file). The
// same signal again, 250 ms or more after the first (Ctrl-C pressed twice), exits at once (status
// 130), and so does a teardown still running 10 s after the first. A repeat within 250 ms is the
// same request delivered twice (GNU timeout, say, will forward a SIGINT to the child and then to
// its process group) and only sets the flag again. SIGPIPE is ignored (a dead peer shows up as
// EPIPE on the socket instead). A signal this process inherited as ignored stays ignored (a
// non-interactive shell starts `rdmabench server &` with SIGINT ignored, so the terminal's Ctrl-C
// is not for it; nohup ignores SIGHUP).

#include <cstdint>
#include <exception>
#include <functional>
#include <string>

namespace rdmabench {

// Idempotent; call once from main().
void installInterruptHandlers();

// For the executable's DT_PREINIT_ARRAY hook, which runs before any shared library's constructor:
// records which of SIGINT, SIGTERM and SIGHUP the process inherited as ignored and blocks them
// until installInterruptHandlers(), which delivers one that arrived meanwhile to its handler. A
// library constructor (libinfinipath's backtrace printer, loaded with libfabric's PSM providers)
// handles SIGINT with a silent exit 1 before main() and replaces an inherited SIG_IGN.
void captureStartSignals();

// Puts SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT back to the default action where a handler
// from the PSM libraries (libinfinipath, libpsm_infinipath, libpsm2, loaded with libfabric; a
// constructor installs a backtrace printer unless IPATH_NO_BACKTRACE is set) holds them. That
// handler turned a crashing server session into an ordinary exit, so the daemon could not report
// "died: SIGSEGV" (docs/cli.md, crash isolation). Handlers from elsewhere (a sanitizer's) are
// left alone. Returns how many signals were reset. Not thread-safe: call from main() first.
int dropLibraryCrashHandlers();

// True once SIGINT, SIGTERM or SIGHUP arrived. Async-signal-safe read; cheap enough for hot loops.
bool interrupted();

// "Ctrl-C" (SIGINT), "SIGTERM" or "SIGHUP": what interrupted us, for messages.
const char* interruptName();

// The signal number behind interruptName() (SIGINT when none arrived yet): what a daemon
// forwards to its children.
int interruptSignal();

// Throws InterruptedError naming `phase` when interrupted() is true: "interrupted (SIGTERM)
// during PHASE", prefixed with "launcher (pid N) died: " when the launcher is gone (its
// PR_SET_PDEATHSIG is the SIGTERM).
void throwIfInterrupted(const char* phase);

// A rank forked by the `--np` launcher (launch::runLocal) records the launcher's pid here, so it
// can tell when the launcher died (its parent then is someone else: init or a subreaper). 0 = no
// launcher to watch (the default).
void setLauncherPid(long pid);

// The stderr the rank inherited before the launcher redirected fd 2 into its line-folding pipe
// (launch/fold.h), or -1. When launcherDeath() finds the launcher gone, fd 2 is pointed back at it:
// the pipe's reader died with the launcher, and the rank's last line must still reach the user.
void setLauncherStderr(int fd);

// "launcher (pid N) died" when a launcher pid was set and this process's parent is no longer that
// pid, else "". Waits up to `waitMs` for the reparenting (the kernel closes a dying launcher's
// sockets before it reparents its children, so a rank can see the store connection close a
// moment before getppid() changes). Cheap with waitMs 0 (one getppid()).
std::string launcherDeath(int64_t waitMs = 0);

// A forked rank's last error line: `msg` prefixed with "launcher (pid N) died: " when the launcher
// died and `msg` does not name it yet (an error from a peer rank's closed connection can come
// before this rank's own SIGTERM is handled), else `msg`. Waits up to 500 ms for the reparenting
// once a signal arrived, 0 otherwise. Also points fd 2 back at the rank's own stderr then, so the
// line is not lost in the dead launcher's folding pipe. Not thread-safe against launcherDeath().
std::string withLauncherDeath(const std::string& msg);

// The exit status for an error that ends the process: 4 (interrupted) when SIGINT or SIGTERM
// arrived, whatever error surfaced first (a peer that handled the same Ctrl-C first and closed
// its connection: the user still interrupted this process), else exitCodeFor(e) (common/error.h).
int exitStatusFor(const std::exception& e);

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
