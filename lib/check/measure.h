#pragma once
// Step 3 of `rdmabench check` (docs/check.md): a short latency (p50, p99) and bandwidth run with
// --check through the project's engines (engine::runClient in loopback: the client and a forked
// `server --once` on 127.0.0.1), over the verbs transport, from one port to itself or to another
// port or device of the node; or, with a peer, from the port to `rdmabench server` on another
// node (check --peer), so the data crosses the fabric. The whole step runs in a child process of
// its own process group: the parent waits for its result at most until the step's deadline and then
// kills the group (client and loopback server), so a hung device costs the step's share of the
// budget, never the Slurm health check's 60 s. The parent never opens an RDMA device (fork safety
// of verbs). Thread-safety: call from one thread; it forks.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace rdmabench::check {

struct MeasureRequest {
  std::string clientDevice;  // verbs device of the client side
  int clientPort = 1;
  std::string serverDevice;  // verbs device of the server side (== client: one port loopback)
  int serverPort = 1;
  double latSec = 1;            // seconds of latency measurement (-D)
  double bwSec = 1;             // seconds of bandwidth measurement (-D)
  int64_t deadlineMs = 10'000;  // from now: the child is killed after this
  // "verbs" (RC queue pairs) or "ofi" (libfabric `provider` on the domain named like the verbs
  // device, e.g. "verbs;ofi_rxm" on rxe0).
  std::string transport = "verbs";
  std::string provider;
  bool lat = true, bw = true;  // which timed loops run (check --skip lat / bw)
  uint64_t latBytes = 8;
  uint64_t bwBytes = 65536;
  // check --peer: the server's host ("" = loopback, the server devices above), control port and
  // access token. The peer's server picks its own device (its -d or its first active port).
  std::string peer;
  uint16_t peerPort = 18515;
  std::string token;
};

// The name a measurement's figures and findings carry: "rxe0/1" (loopback, verbs),
// "rxe0/1->HOST" (against a peer), " ofi:PROVIDER" appended for libfabric ("rxe0/1
// ofi:verbs;ofi_rxm"): a history keeps one series per port, peer and transport.
std::string measureSubject(const MeasureRequest& r);

// The port part of a subject ("rxe0/1->HOST ofi:verbs;ofi_rxm" -> "rxe0/1").
std::string subjectPort(const std::string& subject);

struct Measurement {
  std::string subject;     // measureSubject: "rxe0/1" or "rxe0/1->HOST"
  std::string connection;  // connectionText
  std::string peer;        // the peer's host; "" = loopback
  std::string transport = "verbs";
  std::string provider;  // ofi: the provider string
  // Not measured, and not a failure: the transport is not present here (no libfabric, or its
  // provider has no domain for this device); says why. The step's notes carry it.
  std::string skipped;
  bool latDone = false, bwDone = false;
  double latP50Us = 0, latP99Us = 0;
  uint64_t latIterations = 0, latWrong = 0;
  double bwMBs = 0;
  uint64_t bwMessages = 0, bwWrong = 0;
  std::string error;     // the run failed: the engine's one-line error; or "killed at ..."
  bool cut = false;      // killed at the deadline
  double seconds = 0;    // wall time of the step
  nlohmann::json local;  // the client side's device facts (GID, MTU...) from the run header
  nlohmann::json toJson() const;
};

// Runs the latency then the bandwidth test as described above. Never throws for a failing
// measurement (Measurement::error says why); SystemError when fork or pipe fail.
Measurement measure(const MeasureRequest& r);

// "rxe0/1 -> rxe1/1 (two devices, ...)", "rxe0/1 -> HOST:18515 (verbs RC, `rdmabench server`
// on the peer)" and the like.
std::string connectionText(const MeasureRequest& r);

}  // namespace rdmabench::check
