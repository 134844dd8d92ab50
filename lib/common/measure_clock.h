#pragma once
// The measurement clock: what timed loops read (t0/t1 of an iteration, loop wall time).
// Deadlines and timeouts stay on CLOCK_MONOTONIC (common/clock.h), except the no-progress and
// watchdog checks inside engine::Progress's idle spin, which read this clock (a syscall per
// check on an hpet clocksource otherwise).
//
//  - "tsc": the CPU's time-stamp counter (rdtsc, ~5-25 ns, no vDSO and no kernel clocksource
//    involved), chosen by "auto" only where the CPU advertises an invariant TSC (constant_tsc
//    and nonstop_tsc in /proc/cpuinfo), scaled by a rate calibrated against CLOCK_MONOTONIC_RAW
//    at start-up (two 10 ms windows that must agree within kMaxCalibrationSkew). Same method as
//    perftest's get_cycles() + get_cpu_mhz(), but calibrated instead of trusting cpu MHz.
//    "--clock tsc" on a CPU without the invariant flags (e.g. a TCG VM) still uses it when the
//    calibration agrees, with ClockFacts::warning saying so: like for like with perftest, which
//    reads the cycle counter everywhere.
//  - "monotonic": clock_gettime(CLOCK_MONOTONIC). Through the vDSO it costs ~20 ns when the
//    kernel clocksource is tsc/kvm-clock; on hpet or acpi_pm each read is a syscall of ~1-3 us
//    that lands inside every sample (ClockFacts::warning says so).
// selectMeasureClock() runs once at start-up, before any timed loop; until then (and in unit
// tests that never call it) measureNs() reads CLOCK_MONOTONIC. measureNs() is thread-safe;
// selectMeasureClock() is not (call it from main before threads start).

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define RDMABENCH_HAVE_TSC 1
#else
#define RDMABENCH_HAVE_TSC 0
#endif

namespace rdmabench {

// What the run header says about the clock (table "clock:" line, JSON run.clock, comment lines
// of the other formats).
struct ClockFacts {
  std::string requested = "auto";  // --clock: auto | tsc | monotonic
  std::string used = "monotonic";  // tsc | monotonic
  std::string kernelClocksource;   // /sys/.../clocksource0/current_clocksource ("" unknown)
  bool invariantTsc = false;       // constant_tsc and nonstop_tsc advertised
  double tscGhz = 0;               // calibrated TSC rate (used == "tsc"), 10^9 ticks/s
  double readCostNs = 0;           // measured cost of one measureNs() call, ns
  std::string note;                // why the TSC was not used ("" when it is)
  std::string warning;             // slow clock inside every sample ("" when fine)
  // JSON run.clock: requested, used, kernel_clocksource, invariant_tsc, read_cost_ns (0.1 ns),
  // tsc_ghz (when used == "tsc", 10^-4 GHz), note and warning (when set).
  nlohmann::json toJson() const;
  // The values as recorded in the JSON (and printed by every format): rounded as above.
  double readCostNsRounded() const;
  double tscGhzRounded() const;
  // One line for text headers: "tsc 2.90 GHz (invariant), read 9.1 ns; kernel clocksource
  // kvm-clock".
  std::string describe() const;
};

// Largest relative difference between the two calibration windows before the TSC is refused.
inline constexpr double kMaxCalibrationSkew = 0.002;

namespace detail {
struct MeasureScale {
  bool useTsc = false;
  uint64_t baseTicks = 0;
  uint64_t nsPerTickQ32 = 0;  // ns per tick in 32.32 fixed point
};
extern MeasureScale gMeasureScale;
}  // namespace detail

// Nanoseconds on the measurement clock; only differences are meaningful.
inline int64_t measureNs() {
#if RDMABENCH_HAVE_TSC
  const detail::MeasureScale& s = detail::gMeasureScale;
  if (s.useTsc) {
    unsigned __int128 t = static_cast<unsigned __int128>(__rdtsc() - s.baseTicks);
    return static_cast<int64_t>((t * s.nsPerTickQ32) >> 32);
  }
#endif
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Selects the measurement clock for `choice` ("auto", "tsc", "monotonic"), calibrates the TSC
// when used (~20 ms) and measures the cost of one read. "auto" takes the TSC when invariant and
// the calibration is consistent, else monotonic; "tsc" takes the TSC even when it is not
// advertised invariant (with a warning). Throws UsageError for an unknown choice and for "tsc"
// when there is no TSC or the calibration fails (naming why).
const ClockFacts& selectMeasureClock(std::string_view choice);
// The option parsers' check of a --clock value, one wording for every command: UsageError
// "--clock X: unknown clock (valid: auto, tsc, monotonic)" unless `choice` is one of those.
void checkClockChoice(std::string_view choice);
// The facts of the current selection (selects "auto" on first use if nothing was selected).
const ClockFacts& measureClockFacts();

// Pure helpers (unit-tested).
// True when a /proc/cpuinfo "flags" line lists both constant_tsc and nonstop_tsc.
bool cpuinfoHasInvariantTsc(std::string_view cpuinfo);
// Kernel clocksources whose reads are syscalls of microseconds (hpet, acpi_pm, jiffies, pit).
bool isSlowClocksource(std::string_view name);
// TSC rate in GHz from two (ticks, ns) points; 0 when the interval is empty.
double tscGhz(uint64_t ticks0, int64_t ns0, uint64_t ticks1, int64_t ns1);

}  // namespace rdmabench
