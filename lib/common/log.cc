#include "common/log.h"

#include <pthread.h>

#include <iostream>
#include <mutex>
#include <string>

namespace rdmabench::log {

namespace {

// A fork() while another thread writes a line must not leave the child's copy of the mutex
// locked forever (the server forks sessions while its threads log): the forking thread holds it
// across fork() and both processes release it.
std::mutex& sinkMutex() {
  static std::mutex* m = [] {
    static std::mutex mutex;
    ::pthread_atfork([] { mutex.lock(); }, [] { mutex.unlock(); }, [] { mutex.unlock(); });
    return &mutex;
  }();
  return *m;
}

std::ostream* sinkStream = nullptr;  // guarded by sinkMutex(); null = std::cerr

std::ostream& out() {
  return sinkStream ? *sinkStream : std::cerr;
}

}  // namespace

void write(std::string_view text) {
  std::lock_guard<std::mutex> lock(sinkMutex());
  std::ostream& s = out();
  s.write(text.data(), static_cast<std::streamsize>(text.size()));
  s.flush();
}

void warning(std::string_view message) {
  write(std::string("rdmabench: warning: ").append(message).append("\n"));
}

void note(std::string_view message) {
  write(std::string("rdmabench: note: ").append(message).append("\n"));
}

void flush() {
  std::lock_guard<std::mutex> lock(sinkMutex());
  out().flush();
}

std::ostream* setStream(std::ostream* stream) {
  std::lock_guard<std::mutex> lock(sinkMutex());
  std::ostream* previous = sinkStream;
  sinkStream = stream;
  return previous;
}

}  // namespace rdmabench::log
