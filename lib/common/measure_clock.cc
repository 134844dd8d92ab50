#include "common/measure_clock.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "common/log.h"

namespace rdmabench {
namespace detail {
MeasureScale gMeasureScale;
}  // namespace detail

namespace {

ClockFacts gFacts;
bool gSelected = false;

std::string readFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' '))
    line.pop_back();
  return line;
}

std::string readAll(const char* path) {
  std::ifstream in(path);
  std::ostringstream s;
  if (in) s << in.rdbuf();
  return s.str();
}

int64_t rawNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

#if RDMABENCH_HAVE_TSC
struct Point {
  uint64_t ticks;
  int64_t ns;
};

// A (ticks, CLOCK_MONOTONIC_RAW) pair read as close together as possible: the tightest bracket
// of 16 tries (a preemption between the reads widens the bracket and is discarded).
Point samplePoint() {
  Point best{0, 0};
  uint64_t bestWidth = UINT64_MAX;
  for (int i = 0; i < 16; ++i) {
    uint64_t a = __rdtsc();
    int64_t ns = rawNs();
    uint64_t b = __rdtsc();
    if (b - a < bestWidth) {
      bestWidth = b - a;
      best = Point{a + (b - a) / 2, ns};
    }
  }
  return best;
}
#endif

double measureReadCostNs() {
  // Best of 5 batches of 2000 reads, timed on CLOCK_MONOTONIC_RAW (a loaded machine only makes
  // batches slower; the fastest batch is the clock's own cost).
  double best = 1e9;
  for (int batch = 0; batch < 5; ++batch) {
    int64_t sink = 0;
    int64_t t0 = rawNs();
    for (int i = 0; i < 2000; ++i)
      sink += measureNs();
    int64_t t1 = rawNs();
    asm volatile("" : : "r"(sink));
    best = std::min(best, static_cast<double>(t1 - t0) / 2000);
  }
  return best;
}

}  // namespace

bool cpuinfoHasInvariantTsc(std::string_view cpuinfo) {
  // Look at the first "flags" line only (all CPUs of a host report the same TSC flags).
  size_t at = cpuinfo.find("\nflags");
  if (cpuinfo.substr(0, 5) == "flags") at = 0;
  if (at == std::string_view::npos) return false;
  size_t end = cpuinfo.find('\n', at + 1);
  std::string_view line = cpuinfo.substr(at, end == std::string_view::npos ? end : end - at);
  auto has = [&](std::string_view flag) {
    size_t pos = 0;
    while ((pos = line.find(flag, pos)) != std::string_view::npos) {
      bool startOk = pos > 0 && (line[pos - 1] == ' ' || line[pos - 1] == '\t');
      size_t after = pos + flag.size();
      bool endOk = after == line.size() || line[after] == ' ' || line[after] == '\n';
      if (startOk && endOk) return true;
      pos = after;
    }
    return false;
  };
  return has("constant_tsc") && has("nonstop_tsc");
}

bool isSlowClocksource(std::string_view name) {
  return name == "hpet" || name == "acpi_pm" || name == "jiffies" || name == "pit" ||
         name == "refined-jiffies";
}

double tscGhz(uint64_t ticks0, int64_t ns0, uint64_t ticks1, int64_t ns1) {
  if (ns1 <= ns0 || ticks1 <= ticks0) return 0;
  return static_cast<double>(ticks1 - ticks0) / static_cast<double>(ns1 - ns0);
}

double ClockFacts::readCostNsRounded() const {
  return std::round(readCostNs * 10) / 10;
}

double ClockFacts::tscGhzRounded() const {
  return std::round(tscGhz * 10000) / 10000;
}

nlohmann::json ClockFacts::toJson() const {
  nlohmann::json j{{"requested", requested},
                   {"used", used},
                   {"kernel_clocksource", kernelClocksource},
                   {"invariant_tsc", invariantTsc},
                   {"read_cost_ns", readCostNsRounded()}};
  if (used == "tsc") j["tsc_ghz"] = tscGhzRounded();
  if (!note.empty()) j["note"] = note;
  if (!warning.empty()) j["warning"] = warning;
  return j;
}

std::string ClockFacts::describe() const {
  std::string s = used == "tsc" ? fmt::format("tsc {:.3f} GHz ({}, calibrated)", tscGhz,
                                              invariantTsc ? "invariant" : "not invariant, forced")
                                : std::string("clock_gettime(CLOCK_MONOTONIC)");
  s += fmt::format(", one read {:.1f} ns; kernel clocksource {}", readCostNs,
                   kernelClocksource.empty() ? "unknown" : kernelClocksource);
  if (!note.empty()) s += " (" + note + ")";
  return s;
}

void checkClockChoice(std::string_view choice) {
  if (choice != "auto" && choice != "tsc" && choice != "monotonic")
    throw UsageError(
        fmt::format("--clock {}: unknown clock (valid: auto, tsc, monotonic)", choice));
}

const ClockFacts& selectMeasureClock(std::string_view choice) {
  checkClockChoice(choice);
  // Test hook (tests/system/test_startup.sh): each calibration is counted; --help must make none.
  if (std::getenv("RDMABENCH_TEST_CLOCK_LOG")) log::write("rdmabench: test hook: clock selected\n");
  ClockFacts f;
  f.requested = std::string(choice);
  f.kernelClocksource =
      readFirstLine("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  f.invariantTsc = RDMABENCH_HAVE_TSC && cpuinfoHasInvariantTsc(readAll("/proc/cpuinfo"));
  detail::gMeasureScale = detail::MeasureScale{};
  if (choice != "monotonic") {
    std::string why;
#if RDMABENCH_HAVE_TSC
    const bool forced = choice == "tsc" && !f.invariantTsc;
    if (!f.invariantTsc && !forced) {
      why = "the CPU does not advertise constant_tsc and nonstop_tsc";
    } else {
      Point a = samplePoint();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      Point b = samplePoint();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      Point c = samplePoint();
      double g1 = tscGhz(a.ticks, a.ns, b.ticks, b.ns);
      double g2 = tscGhz(b.ticks, b.ns, c.ticks, c.ns);
      double g = tscGhz(a.ticks, a.ns, c.ticks, c.ns);
      if (g <= 0 || g1 <= 0 || g2 <= 0) {
        why = "TSC calibration saw no ticks";
      } else if (std::abs(g1 - g2) / g > kMaxCalibrationSkew) {
        why = fmt::format("TSC calibration windows disagree ({:.4f} vs {:.4f} GHz)", g1, g2);
      } else {
        f.tscGhz = g;
        detail::gMeasureScale.baseTicks = __rdtsc();
        detail::gMeasureScale.nsPerTickQ32 = static_cast<uint64_t>(std::llround(4294967296.0 / g));
        detail::gMeasureScale.useTsc = true;
        f.used = "tsc";
        if (forced)
          f.warning =
              "--clock tsc on a CPU that does not advertise constant_tsc and nonstop_tsc (as "
              "perftest's cycle counter always does): the calibration windows agreed, but the "
              "figures are wrong if the TSC rate changes or CPUs' TSCs differ during the run";
      }
    }
#else
    why = "no TSC on this architecture";
#endif
    if (choice == "tsc" && f.used != "tsc")
      throw UsageError(fmt::format("--clock tsc: cannot use the TSC: {}", why));
    f.note = why;
  } else {
    f.note = "--clock monotonic";
  }
  f.readCostNs = measureReadCostNs();
  if (f.used != "tsc" && isSlowClocksource(f.kernelClocksource))
    f.warning = fmt::format(
        "kernel clocksource {} is slow ({:.0f} ns per read, inside every sample) and the TSC "
        "cannot be used: {}",
        f.kernelClocksource, f.readCostNs, f.note);
  gFacts = f;
  gSelected = true;
  return gFacts;
}

const ClockFacts& measureClockFacts() {
  if (!gSelected) selectMeasureClock("auto");
  return gFacts;
}

}  // namespace rdmabench
