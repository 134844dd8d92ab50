#pragma once
// Exception hierarchy of rdmabench. Setup and usage errors throw; timed loops return status
// values and the engine throws only after it has stopped the clock.
//
// Every message is one line meant for the user: it names the failing call or option, the
// device/provider/peer, and the library's own error text (strerror, ibv_wc_status_str,
// fi_strerror). Thread-safety: plain value types.

#include <stdexcept>
#include <string>

namespace rdmabench {

// Base of every rdmabench error; what() is the complete one-line message.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Bad command-line input or parameters: the message names the option, the value and the
// accepted range or limit. The CLI exits with status 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

// A system call failed: "<call>: <strerror(errno)>" plus context.
class SystemError : public Error {
 public:
  // `what` describes the call and its context; `err` is the errno value.
  SystemError(const std::string& what, int err);
  int code() const { return code_; }

 private:
  int code_;
};

// A transport operation failed (bad completion status, provider error, device limit).
class TransportError : public Error {
 public:
  using Error::Error;
};

// A wait exceeded its deadline; the message names the peer and the phase waited for.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

// The peer broke the protocol (bad magic/version, malformed or oversized frame) or reported
// an error of its own, or disconnected.
class ProtocolError : public Error {
 public:
  using Error::Error;
};

// The peer reported an error of its own over the control channel, or the rendezvous store
// reported a rank lost or failed (its one-line message is part of what()). Engines prefer it to
// the transport error they saw themselves, which is only the symptom.
class PeerError : public ProtocolError {
 public:
  using ProtocolError::ProtocolError;
};

// The user pressed Ctrl-C (SIGINT) or the process got SIGTERM.
class InterruptedError : public Error {
 public:
  using Error::Error;
};

// Exit status the CLI uses for each error class: 2 usage, 3 timeout, 4 interrupted (130 is
// left to the shell), 1 anything else.
int exitCodeFor(const std::exception& e);

}  // namespace rdmabench
