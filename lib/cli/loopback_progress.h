#pragma once
// The progress mode of a loopback lat / bw run, where the client and the server it forks poll on
// the same host. Busy polling is only sound when both have a CPU of their own: on one allowed CPU,
// or on a host whose CPUs are all taken by other runnable tasks, each side's poll spins away the
// time slice the other needs, and the medians are the scheduler's time slices (7976 us for a
// 7.5 us link). The N-rank commands switch to yield mode for the same reason
// (collective::chooseProgress). Thread-safety: pure functions, except otherRunnableTasks (reads
// /proc, sleeps).

#include <optional>
#include <string>

#include "transport/transport.h"

namespace rdmabench::cli {

struct LoopbackProgress {
  transport::ProgressMode mode = transport::ProgressMode::kBusyPoll;
  std::string note;  // the header's progress_note: what was chosen and why
};

// The mode to use instead of the default busy poll, or nullopt to keep it. `asked`: -e given
// (always honoured). `allowedCpus`: CPUs this process may run on (sched_getaffinity);
// `onlineCpus`: the host's; `otherRunnable`: runnable tasks on the host besides this process
// (< 0 = unknown). Fewer than 2 allowed CPUs: event mode (the two sides sleep on completions).
// Otherwise yield mode (busy polling with sched_yield() after every empty poll, as Open MPI's
// mpi_yield_when_idle) when the two sides and the other runnable tasks expected on the allowed
// CPUs (otherRunnable x allowed / online) exceed the allowed CPUs by half a task or more.
std::optional<LoopbackProgress> loopbackProgress(bool asked, int allowedCpus, int onlineCpus,
                                                 int otherRunnable);

// Runnable tasks on the host besides this process: /proc/stat's procs_running minus one, the
// smallest of `samples` reads `gapMs` ms apart (a momentary spike is not a busy host); -1 when
// /proc/stat cannot be read.
int otherRunnableTasks(int samples = 5, int gapMs = 2);

}  // namespace rdmabench::cli
