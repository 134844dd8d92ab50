#pragma once
// The one diagnostics sink of lib/: every line that is not part of a report (warnings, notes,
// server and rendezvous session lines, test-hook lines) goes through here instead of straight to
// std::cerr, so tests can capture it and two threads never interleave inside a line.
// Thread-safety: every function takes one process-wide mutex; a line is written and flushed
// whole. Not async-signal-safe (a signal handler writes with write(2) itself).

#include <ostream>
#include <string_view>

namespace rdmabench::log {

// Writes `text` exactly as given (callers end it in "\n"), then flushes the stream.
void write(std::string_view text);

// "rdmabench: warning: MESSAGE\n" and "rdmabench: note: MESSAGE\n".
void warning(std::string_view message);
void note(std::string_view message);

// Flushes the sink's stream (before a fork, so a child does not repeat buffered text).
void flush();

// Where lines go: `stream`, or std::cerr when null (the default). Returns the previous stream
// (null = std::cerr). The stream must outlive its use; for tests (ScopedCapture).
std::ostream* setStream(std::ostream* stream);

// Sends the sink to `stream` for the lifetime of the object (tests), then restores the previous
// destination.
class ScopedCapture {
 public:
  explicit ScopedCapture(std::ostream& stream) : previous_(setStream(&stream)) {}
  ~ScopedCapture() { setStream(previous_); }
  ScopedCapture(const ScopedCapture&) = delete;
  ScopedCapture& operator=(const ScopedCapture&) = delete;

 private:
  std::ostream* previous_;
};

}  // namespace rdmabench::log
