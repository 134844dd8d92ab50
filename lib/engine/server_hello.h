#pragma once
// Internal to lib/engine (server.cc): the connections the daemon holds until their whole hello
// has arrived. Not a public API.
//
// A connection costs the daemon one descriptor and no process until its complete Hello frame
// (8-byte header + <= 328 bytes) is in the socket's receive queue; only then is its session
// forked. The daemon never reads those bytes (the session does): SO_RCVLOWAT is set to the
// bytes still missing, so poll() wakes for a connection only when its hello is complete, it
// hung up, or its first frame is no hello. A stranger that dribbles its hello one byte at a time
// therefore costs neither a process nor a wake-up, is dropped at the hello deadline counted
// from accept, and (when the pool is full) the oldest incomplete connection makes room, never
// the new one: a client that sends its hello at once leaves the pool as soon as it is accepted.
// Thread-safety: one thread (the daemon's).

#include <poll.h>

#include <chrono>
#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include "rendezvous/channel.h"

namespace rdmabench::engine::detail {

using SteadyTime = std::chrono::steady_clock::time_point;

// A connection whose first frame is complete (or is no hello): its session is to be forked.
struct HelloReady {
  rendezvous::Channel channel;
  SteadyTime acceptedAt;
};

class HelloPool {
 public:
  // `budget`: connections held at most (see helloPoolBudget); `helloTimeoutMs`: how long one may
  // take to complete its hello, counted from accept; `verbose`: log a line per dropped one.
  HelloPool(size_t budget, int64_t helloTimeoutMs, bool verbose);

  // Takes a newly accepted connection. When its hello is already complete it goes to `ready` at
  // once; otherwise it is held, and when the pool is full the oldest held one is dropped (told
  // "server dropped this connection before its hello: ..."). A peer that already hung up is
  // closed quietly.
  void add(rendezvous::Channel ch, std::vector<HelloReady>& ready);
  // One pollfd per held connection, appended to `fds` (POLLIN fires only when its hello is
  // complete, or on a hang-up).
  void appendPollFds(std::vector<pollfd>& fds) const;
  // After poll(): `fds` points at the entries appendPollFds added. Moves the connections whose
  // hello is complete to `ready`, closes those that hung up (quietly: no hello was sent).
  void collect(const pollfd* fds, std::vector<HelloReady>& ready);
  // Drops every held connection whose hello deadline (from accept) has passed.
  void dropLate(SteadyTime now);
  // Descriptors held (closed by a forked child, which keeps only its own connection).
  void closeInChild() const;
  size_t size() const { return held_.size(); }

 private:
  struct Held {
    rendezvous::Channel channel;
    SteadyTime acceptedAt;
  };
  enum class State { kWaiting, kComplete, kGone };
  // Peeks at what has arrived (never reads) and sets SO_RCVLOWAT to the bytes still missing.
  static State examine(rendezvous::Channel& ch);
  void drop(Held& h, const std::string& why);

  std::deque<Held> held_;  // oldest first
  size_t budget_;
  int64_t helloTimeoutMs_;
  bool verbose_;
};

// How many connections the daemon may hold before their hello: raises this process's soft
// RLIMIT_NOFILE towards its hard limit, then keeps half the descriptors for sessions (each
// costs the daemon two) and the rest: between 16 and 4096.
size_t helloPoolBudget();

}  // namespace rdmabench::engine::detail
