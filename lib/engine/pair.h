#pragma once
// The server/client pair: the client drives a whole point-to-point test against
// `rdmabench server` over the control channel (docs/wire-protocol.md), both sides run the
// engines on the chosen transport, and the client reports rows. Loopback mode forks the server
// side on 127.0.0.1 before any device is opened (fork safety of verbs/libfabric).
// Errors: UsageError (bad options, sizes above the device's limit), TimeoutError (names peer
// and phase), ProtocolError (peer broke protocol, reported an error or disconnected),
// TransportError, InterruptedError (Ctrl-C; the peer is told before the exception leaves).

#include <cstdint>
#include <functional>
#include <string>

#include "engine/spec.h"
#include "report/report.h"
#include "transport/transport.h"

namespace rdmabench::engine {

inline constexpr uint16_t kDefaultControlPort = 18515;  // perftest's default port

struct ClientOptions {
  TestSpec spec;
  std::string host;  // server host; empty = loopback (forks a server on 127.0.0.1)
  // Appended to the one-line error when `host` does not resolve: set when HOST came from the
  // word after an optional-value flag (`lat -e maybe`: -e takes only on | off); "" = none.
  std::string hostHint;
  uint16_t port = kDefaultControlPort;
  transport::DeviceOptions localDevice;  // this side's device options
  std::string commandLine;
  int64_t connectTimeoutMs = 5000;
  // --max-time (IMB's -time): with automatic iteration counts (no -n, no -D), a size whose
  // calibration says the count would take longer runs fewer iterations (at least 1), seconds;
  // 0 = off. The row is flagged "capped" and the header says so.
  double maxTimeSec = 10;
  std::string token;  // access token sent in the hello (common/token.h); empty = none
  // Informational line for the header, e.g. why this transport was chosen automatically.
  std::string transportNote;
  // Why the progress mode was chosen automatically (event mode on a shared core); "" = none.
  std::string progressNote;
  // Called before each measured size starts (index from 0, count of sizes, message bytes), e.g.
  // for a progress line on a terminal. Runs on the benchmark thread, outside timed loops.
  std::function<void(size_t index, size_t count, uint64_t bytes)> onSizeStart;
  // Called once the local device is open, before any timed loop, with the device's name (verbs
  // device, ofi domain, interface): binds the benchmark thread and returns the placement facts
  // for the run header (common/placement.h). Empty = no placement, no header facts.
  std::function<PlacementFacts(const std::string& deviceName)> placeThread;
};

// The report's name of the test `spec` describes (RunInfo::test): lat or bw.
report::Test reportTest(const TestSpec& spec);

// Runs the test and feeds `reporter` (begin, one row per size, end; abort on failure).
// `options.spec` must have passed TestSpec::validate (cli::parseClientCommand does it; the
// server validates what it receives again).
void runClient(const ClientOptions& options, report::Reporter& reporter);

struct ServerOptions {
  std::string bind;  // empty = all addresses
  uint16_t port = kDefaultControlPort;
  bool once = false;               // exit after one test: the first session admitted (hello passed)
  uint64_t maxBytes = 1ull << 30;  // cap on buffer memory a client may make us allocate
  // A connection that does not say hello within this is dropped, so a stray or idle
  // connection holds up the next client for at most this long.
  int64_t helloTimeoutMs = 2'000;
  bool verbose = true;  // one log line per session on stderr
  // Access token every client's hello must carry (common/token.h); empty = anyone.
  std::string token;
  // Cap on the client's timeout_ms: the longest a session waits for a silent client.
  int64_t maxTimeoutMs = 60'000;
  // Sessions admitted at once (hello passed: waiting for the test slot or running); one beyond
  // it is answered "server busy". Connections before their hello have budgets of their own
  // (server.cc: the oldest is dropped for a new one).
  uint32_t maxConnections = 64;
};

class Listener;

// Serves tests one after another until Ctrl-C (or after one with `once`). A failing session is
// reported to its client and logged; the server goes on with the next client.
void runServer(const ServerOptions& options);

}  // namespace rdmabench::engine
