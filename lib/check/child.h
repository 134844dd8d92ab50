#pragma once
// The budget's hard bound for a step of `rdmabench check` (docs/check.md): the step runs in a
// forked child, in a process group of its own, and reports one JSON object per line on a pipe;
// the parent reads until the child closes the pipe or the deadline passes, then kills the whole
// group (the child and anything it forked, e.g. a loopback server). A step that hangs or runs
// slow (a stuck device, a starved core) costs its share of the budget, never Slurm's 60 s.
// Thread-safety: call from one thread; it forks (the child must not rely on other threads).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace rdmabench::check {

struct ChildOutput {
  nlohmann::json merged;     // the child's lines merged into one object (later members win)
  bool finished = false;     // the child closed the pipe before the deadline
  bool interrupted = false;  // Ctrl-C / SIGTERM while waiting (the child was killed)
  int status = 0;            // waitpid status
  std::string parseError;    // a line that was not a JSON object ("" = none)
};

// Runs `body(fd)` in a child (which then _exits) and waits at most `deadlineMs` for it. `what`
// names the step in errors. SystemError when pipe or fork fail; never throws for the child's
// own failures (body should write {"error": ...} itself).
ChildOutput runInChild(std::string_view what, int64_t deadlineMs,
                       const std::function<void(int fd)>& body);

// One JSON object and a newline to `fd` (in the child), retried on EINTR; errors ignored (the
// parent sees a missing line).
void writeJsonLine(int fd, const nlohmann::json& j);

}  // namespace rdmabench::check
