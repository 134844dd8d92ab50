#pragma once
// Internal to lib/engine: one server session (pair.cc) and the daemon that runs each session in
// a child process (server.cc). Not a public API.

#include <cstdint>
#include <exception>
#include <functional>
#include <string>

#include "engine/pair.h"
#include "engine/spec.h"
#include "rendezvous/channel.h"

namespace rdmabench::engine::detail {

// Called once the test description is valid, before the device opens. Throws (its message goes
// to the client as the session's error) when the test may not run now, e.g. "server busy".
using AdmitFn = std::function<void(const TestSpec& spec)>;

// Called once the client's hello passed (version, token), before the test description is read.
// Throws (e.g. "server busy: ... --max-connections") when the daemon admits no more sessions.
using HelloFn = std::function<void()>;

// Serves one client on `ch` in this process: hello (token check), test description, admission,
// device, data path, until Done. Throws on failure; the caller tells the client (tellPeer).
// `session` numbers the log lines. `helloDone` (may be empty) runs after the hello.
void serveSession(rendezvous::Channel& ch, const ServerOptions& so, uint64_t session,
                  const AdmitFn& admit, const HelloFn& helloDone = {});

// Puts this session process under an RLIMIT_DATA of its current data size + `maxBytes` +
// kSessionBaselineBytes (what libfabric, rdma-core, threads and the socket transport map for a
// session, measured: docs/wire-protocol.md "Memory"), so an allocation the server's checks
// missed fails inside the session instead of growing the host into the OOM killer. Returns
// the limit in bytes (0 when setrlimit failed; the session then runs without one).
uint64_t limitSessionMemory(uint64_t maxBytes);
// Extra data (private writable) bytes a session may map beyond --max-bytes.
inline constexpr uint64_t kSessionBaselineBytes = 256ull << 20;

// The one-line text the client and the log get for a session's failure `e`: an allocation that
// failed under limitSessionMemory's limit (std::bad_alloc, or an error naming ENOMEM's
// "Cannot allocate memory") becomes "server: session memory limit (N MiB from --max-bytes)
// reached"; anything else rendezvous::errorFrameText(e).
std::string sessionErrorText(const std::exception& e);

// Sends a one-line kError to the peer (best effort, 1 s) and closes the channel.
void tellPeer(rendezvous::Channel& ch, const std::string& message);

// The daemon: accepts connections and serves each in a forked child (server.cc). With
// `so.once`, serves one connection (waiting at most 60 s for it) and returns; throws Error when
// that session failed.
void serveListener(rendezvous::Listener& listener, const ServerOptions& so);

// Test-only crash hook: when $RDMABENCH_TEST_SESSION_CRASH_AT equals the size about to run, the
// session raises SIGSEGV (docs/cli.md lists it as test-only).
void testCrashHook(uint64_t bytes);
// Test-only: when $RDMABENCH_TEST_SESSION_ALLOC_MIB is set, the admitted session allocates and
// touches that many MiB (an allocation no check foresaw; limitSessionMemory must stop it).
void testAllocHook();

}  // namespace rdmabench::engine::detail
