#pragma once
// Process limits a large run needs, checked before the first rank connects, so a limit that is
// too low is one line naming it instead of ranks refused at accept() and a timeout later
// (docs/rendezvous.md "Scale"). Thread-safety: call from the main thread before any rank or
// server thread exists.

#include <cstdint>
#include <string>

namespace rdmabench::launch {

// Descriptors the TCP store server needs for `ranks` clients: one connection per rank plus its
// own listening, epoll, eventfd and reserve descriptors, stdio and the hosting rank's own
// transport sockets (kept generous: 128).
inline uint64_t storeServerDescriptors(uint64_t ranks) {
  return ranks + 128;
}

// Makes sure this process may open `needed` descriptors: raises the soft RLIMIT_NOFILE up to the
// hard limit when it is lower. UsageError when even the hard limit is below `needed`, naming
// `what` ("--np 1024"), the need and both limits. SystemError when getrlimit/setrlimit fail.
void ensureDescriptors(uint64_t needed, const std::string& what);

}  // namespace rdmabench::launch
