#pragma once
// POSIX socket helpers shared by the socket backend and the rendezvous channel/store: an owning
// file descriptor, O_NONBLOCK / TCP_NODELAY, numeric address text, and a sliced poll that
// notices Ctrl-C. Thread-safe (no shared state).

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <utility>

#include "common/clock.h"

namespace rdmabench {

// Owns one file descriptor; closes it in the destructor (never throws). Move-only.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset() noexcept;  // closes now (no-op when empty)
  // Gives up ownership: returns the descriptor and leaves this empty.
  int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

// Sets O_NONBLOCK. Throws SystemError naming `what` (e.g. "socket: peer 10.0.0.2:4791").
void setNonBlocking(int fd, const std::string& what);
// Sets TCP_NODELAY; false (errno set) when that fails, e.g. on an AF_UNIX socket.
bool setNoDelay(int fd);

// Numeric host of a socket address ("10.0.0.1", "fe80::1"); IPv4-mapped IPv6 addresses are
// shown as IPv4. "" for other families.
std::string numericHost(const sockaddr_storage& ss);
// Port of an AF_INET / AF_INET6 socket address (host byte order; 0 for other families).
uint16_t portOf(const sockaddr_storage& ss);

// Waits until `fd` is ready for `events` in slices of at most 100 ms so that Ctrl-C is noticed
// (throws InterruptedError naming `phase`). Returns false once the deadline has passed. Throws
// SystemError when poll() fails.
bool waitFd(int fd, short events, const Deadline& deadline, const char* phase);

}  // namespace rdmabench
