#include "cli/loopback_progress.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <limits>
#include <string>
#include <thread>

#include <fmt/format.h>

namespace rdmabench::cli {

std::optional<LoopbackProgress> loopbackProgress(bool asked, int allowedCpus, int onlineCpus,
                                                 int otherRunnable) {
  if (asked) return std::nullopt;
  if (allowedCpus < 2)
    return LoopbackProgress{
        transport::ProgressMode::kEvent,
        "auto: event mode (the loopback client and its forked server would busy-poll on 1 "
        "allowed CPU)"};
  if (otherRunnable < 0) return std::nullopt;
  const double expected = static_cast<double>(otherRunnable) * allowedCpus /
                          static_cast<double>(std::max(onlineCpus, allowedCpus));
  if (2 + expected < allowedCpus + 0.5) return std::nullopt;
  return LoopbackProgress{
      transport::ProgressMode::kYield,
      fmt::format("auto: yield mode (the loopback client and its forked server share {} CPUs "
                  "with {} other runnable task{} on this host: busy polling would time the "
                  "scheduler; busy polling with sched_yield() after every empty poll, as Open "
                  "MPI's mpi_yield_when_idle; -e on for event mode, -e off to busy-poll)",
                  allowedCpus, otherRunnable, otherRunnable == 1 ? "" : "s")};
}

int otherRunnableTasks(int samples, int gapMs) {
  int fewest = -1;
  for (int i = 0; i < samples; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(gapMs));
    std::ifstream in("/proc/stat");
    std::string key;
    long value = -1;
    while (in >> key) {
      if (key == "procs_running") {
        in >> value;
        break;
      }
      in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    }
    if (value < 1) return -1;
    const int others = static_cast<int>(value - 1);
    fewest = fewest < 0 ? others : std::min(fewest, others);
  }
  return fewest;
}

}  // namespace rdmabench::cli
