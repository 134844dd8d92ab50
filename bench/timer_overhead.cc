// Timer + sample overhead per ping-pong iteration, as the latency engine pays it: two reads of
// the measurement clock and one SampleSet::add. Prints one line per clock (tsc, monotonic):
// median and min over reps of ns per iteration. Goal (issue #10): < 50 ns.
// Build and run: bench/timer_overhead.sh (one command; builds this target outside `all`).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/error.h"
#include "common/measure_clock.h"
#include "stats/summary.h"

namespace {

double perIterationNs(uint64_t n) {
  rdmabench::stats::SampleSet samples;
  samples.reserve(n);
  timespec a, b;
  clock_gettime(CLOCK_MONOTONIC_RAW, &a);
  for (uint64_t i = 0; i < n; ++i) {
    int64_t t0 = rdmabench::measureNs();
    int64_t t1 = rdmabench::measureNs();
    samples.add(t1 - t0);
  }
  clock_gettime(CLOCK_MONOTONIC_RAW, &b);
  double ns =
      static_cast<double>(b.tv_sec - a.tv_sec) * 1e9 + static_cast<double>(b.tv_nsec - a.tv_nsec);
  if (samples.count() != n) std::abort();
  return ns / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 7;
  const uint64_t n = 1'000'000;
  std::printf("%-10s %-12s %10s %14s %14s %8s\n", "clock", "clocksource", "read[ns]",
              "median[ns/it]", "min[ns/it]", "reps");
  for (const char* clock : {"tsc", "monotonic"}) {
    try {
      const rdmabench::ClockFacts& f = rdmabench::selectMeasureClock(clock);
      std::vector<double> v;
      for (int r = 0; r < reps; ++r)
        v.push_back(perIterationNs(n));
      std::sort(v.begin(), v.end());
      std::printf("%-10s %-12s %10.1f %14.1f %14.1f %8d\n", clock, f.kernelClocksource.c_str(),
                  f.readCostNs, v[v.size() / 2], v.front(), reps);
    } catch (const rdmabench::UsageError& e) {
      std::printf("%-10s not usable: %s\n", clock, e.what());
    }
  }
  return 0;
}
