#pragma once
// Internal to lib/engine: one server session (pair.cc) and the daemon that runs each session in
// a child process (server.cc). Not a public API.

#include <cstdint>
#include <functional>
#include <string>

#include "engine/pair.h"
#include "engine/spec.h"
#include "rendezvous/channel.h"

namespace rdmabench::engine::detail {

// Called once the test description is valid, before the device opens. Throws (its message goes
// to the client as the session's error) when the test may not run now, e.g. "server busy".
using AdmitFn = std::function<void(const TestSpec& spec)>;

// Serves one client on `ch` in this process: hello (token check), test description, admission,
// device, data path, until Done. Throws on failure; the caller tells the client (tellPeer).
// `session` numbers the log lines.
void serveSession(rendezvous::Channel& ch, const ServerOptions& so, uint64_t session,
                  const AdmitFn& admit);

// Sends a one-line kError to the peer (best effort, 1 s) and closes the channel.
void tellPeer(rendezvous::Channel& ch, const std::string& message);

// The daemon: accepts connections and serves each in a forked child (server.cc). With
// `so.once`, serves one connection (waiting at most 60 s for it) and returns; throws Error when
// that session failed.
void serveListener(rendezvous::Listener& listener, const ServerOptions& so);

// Test-only crash hook: when $RDMABENCH_TEST_SESSION_CRASH_AT equals the size about to run, the
// session raises SIGSEGV (docs/cli.md lists it as test-only).
void testCrashHook(uint64_t bytes);

}  // namespace rdmabench::engine::detail
