#include "cli/run_note.h"

#include <algorithm>

#include <fmt/format.h>

namespace rdmabench::cli {

namespace {

// "2.7 min", "16 s", "1.5 h": a rough duration for a lower bound.
std::string roughDuration(double seconds) {
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

// Messages per connection and direction of one size: (iterations + warmup) x per iteration.
double messagesFor(const engine::TestSpec& spec, uint64_t bytes) {
  const double perIteration =
      spec.bandwidth() && spec.mode == engine::BwMode::kWindow ? spec.window : 1;
  return static_cast<double>(spec.iterationsFor(bytes) + spec.warmupFor(bytes)) * perIteration;
}

}  // namespace

double plannedBytes(const engine::TestSpec& spec) {
  if (spec.durationSec > 0) return 0;
  const double directions = spec.latency() || spec.bidirectional ? 2 : 1;
  const double connections = spec.bandwidth() ? spec.queuePairs : 1;
  double total = 0;
  for (uint64_t bytes : spec.sizes)
    total += static_cast<double>(bytes) * messagesFor(spec, bytes) * connections * directions;
  return total;
}

std::string largeRunNote(const engine::TestSpec& spec, double maxTimeSec) {
  const double total = plannedBytes(spec);
  if (total < kLargeRunBytes) return "";
  if (spec.iterations == 0 && maxTimeSec > 0) return "";  // OSU's counts, cut at --max-time
  const uint64_t largest = spec.maxSize();
  const std::string what =
      spec.sizes.size() == 1
          ? fmt::format("{} B x {:.0f} messages incl. warmup", largest, messagesFor(spec, largest))
          : fmt::format("{} sizes; the largest, {} B, x {:.0f} messages incl. warmup",
                        spec.sizes.size(), largest, messagesFor(spec, largest));
  const double bits = total * 8;
  return fmt::format(
      "rdmabench: note: this run moves {:.1f} GB ({}{}{}): at least {} at 100 Gb/s, {} at "
      "10 Gb/s; a row prints when its size completes (Ctrl-C stops the run; -D SEC or a smaller "
      "-n bounds it)",
      total / 1e9, what,
      spec.bandwidth() && spec.queuePairs > 1 ? fmt::format(" x {} connections", spec.queuePairs)
                                              : std::string(),
      spec.latency() || spec.bidirectional ? ", both directions" : "", roughDuration(bits / 100e9),
      roughDuration(bits / 10e9));
}

std::string oversubscriptionWarning(const std::string& what, int ranks, int cpus, bool eventMode,
                                    double timeoutSec) {
  cpus = std::max(cpus, 1);
  if (ranks <= kRanksPerCpuWarning * cpus) return "";
  const double perCpu = static_cast<double>(ranks) / cpus;
  return fmt::format(
      "{} on {} allowed CPU{} ({:.0f} ranks per CPU): every rank waits its turn for a CPU at each "
      "step, so wire-up and every iteration take about that many times longer, ranks may exceed "
      "--timeout {:g} s, and the figures are the scheduler's, not the fabric's{}",
      what, cpus, cpus == 1 ? "" : "s", perCpu, timeoutSec,
      eventMode ? "" : "; -e on (event mode: ranks sleep until data arrives) goes furthest");
}

}  // namespace rdmabench::cli
