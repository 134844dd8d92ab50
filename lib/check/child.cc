#include "check/child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "common/json_read.h"

namespace rdmabench::check {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Largest document a child may send (a noise report of a many-core node is the largest).
constexpr size_t kMaxChildBytes = 16u << 20;

// Reads until EOF or the deadline; false at the deadline or on Ctrl-C / SIGTERM. Polls in slices
// of 100 ms so an interrupt is seen even where the signal does not interrupt poll().
bool readUntil(int fd, Clock::time_point until, std::string& text) {
  char buf[8192];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0 || interrupted()) return false;
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 100)));
    if (n == 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return true;  // the document so far decides
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return true;
    if (text.size() < kMaxChildBytes) text.append(buf, static_cast<size_t>(got));
  }
}

// The lines merged into one object; a line cut by the kill is left out.
json mergeLines(const std::string& text, std::string_view what, std::string& error) {
  json all = json::object();
  size_t i = 0;
  while (i < text.size()) {
    const size_t j = text.find('\n', i);
    if (j == std::string::npos) break;
    try {
      const json one =
          parseUntrustedJson(std::string_view(text).substr(i, j - i), what, 64, kMaxChildBytes);
      if (!one.is_object()) throw ProtocolError(fmt::format("{}: a line is not an object", what));
      all.update(one);
    } catch (const std::exception& e) {
      if (error.empty()) error = e.what();
    }
    i = j + 1;
  }
  return all;
}

}  // namespace

void writeJsonLine(int fd, const json& j) {
  const std::string text = j.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0 && errno != EINTR) return;
    if (n > 0) done += static_cast<size_t>(n);
  }
}

ChildOutput runInChild(std::string_view what, int64_t deadlineMs,
                       const std::function<void(int fd)>& body) {
  const auto until = Clock::now() + std::chrono::milliseconds(deadlineMs);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw SystemError(fmt::format("check: pipe ({})", what), errno);
  std::cout.flush();  // the child must not write out a copy of what the parent buffered
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw SystemError(fmt::format("check: fork ({})", what), err);
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::setpgid(0, 0);  // what it forks joins this group: one kill ends them all
    try {
      body(fds[1]);
    } catch (const std::exception& e) {
      writeJsonLine(fds[1], {{"error", e.what()}});
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  ::setpgid(pid, pid);  // also from here: no race with the child's own call
  std::string text;
  ChildOutput out;
  out.finished = readUntil(fds[0], until, text);
  ::close(fds[0]);
  out.interrupted = !out.finished && interrupted();
  if (!out.finished) ::kill(-pid, SIGKILL);
  while (::waitpid(pid, &out.status, 0) < 0 && errno == EINTR) {
  }
  out.merged = mergeLines(text, what, out.parseError);
  return out;
}

}  // namespace rdmabench::check
