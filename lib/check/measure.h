#pragma once
// Step 3 of `rdmabench check` (docs/check.md): a short latency (p50, p99) and bandwidth run with
// --check through the project's engines (engine::runClient in loopback: the client and a forked
// `server --once` on 127.0.0.1), over the verbs transport, from one port to itself or to another
// port or device of the node. The whole step runs in a child process of its own process group:
// the parent waits for its result at most until the step's deadline and then kills the group
// (client and loopback server), so a hung device costs the step's share of the budget, never
// the Slurm health check's 60 s. The parent never opens an RDMA device (fork safety of verbs).
// Thread-safety: call from one thread; it forks.

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
  uint64_t latBytes = 8;
  uint64_t bwBytes = 65536;
};

struct Measurement {
  std::string subject;     // "rxe0/1": the client's port
  std::string connection;  // "rxe0/1 -> rxe0/1 (one port to itself)"
  std::string transport = "verbs";
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

// "rxe0/1 -> rxe1/1 (two devices)" and the like.
std::string connectionText(const MeasureRequest& r);

}  // namespace rdmabench::check
