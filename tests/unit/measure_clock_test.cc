// The measurement clock: invariant-TSC detection, calibration sanity against
// CLOCK_MONOTONIC_RAW, the measured read cost, and the header facts on every output format.
#include "common/measure_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "report/report.h"

namespace rdmabench {
namespace {

int64_t rawNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

TEST(MeasureClock, InvariantTscNeedsBothFlagsAsWholeWords) {
  EXPECT_TRUE(cpuinfoHasInvariantTsc(
      "processor\t: 0\nflags\t\t: fpu tsc constant_tsc rep_good nonstop_tsc cpuid\nbogomips: 1\n"));
  EXPECT_TRUE(cpuinfoHasInvariantTsc("flags\t: constant_tsc nonstop_tsc"));
  EXPECT_FALSE(cpuinfoHasInvariantTsc("processor: 0\nflags\t\t: fpu tsc constant_tsc cpuid\n"));
  EXPECT_FALSE(cpuinfoHasInvariantTsc("processor: 0\nflags\t\t: fpu nonstop_tsc cpuid\n"));
  EXPECT_FALSE(cpuinfoHasInvariantTsc("flags\t\t: xconstant_tsc nonstop_tscx\n"));
  EXPECT_FALSE(cpuinfoHasInvariantTsc(""));
  // Only the flags line counts, not another field that mentions the words.
  EXPECT_FALSE(cpuinfoHasInvariantTsc("model name: constant_tsc nonstop_tsc\nflags\t: fpu tsc\n"));
}

TEST(MeasureClock, SlowClocksources) {
  EXPECT_TRUE(isSlowClocksource("hpet"));
  EXPECT_TRUE(isSlowClocksource("acpi_pm"));
  EXPECT_FALSE(isSlowClocksource("tsc"));
  EXPECT_FALSE(isSlowClocksource("kvm-clock"));
  EXPECT_FALSE(isSlowClocksource("arch_sys_counter"));
}

TEST(MeasureClock, RateFromTwoPoints) {
  EXPECT_DOUBLE_EQ(tscGhz(1000, 0, 3'001'000, 1'000'000), 3.0);
  EXPECT_EQ(tscGhz(1000, 5, 900, 10), 0.0);  // ticks went backwards
  EXPECT_EQ(tscGhz(1000, 5, 2000, 5), 0.0);  // no time passed
}

TEST(MeasureClock, UnknownChoiceIsAUsageError) {
  try {
    selectMeasureClock("rdtsc");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--clock rdtsc"), std::string::npos) << e.what();
  }
}

// Whichever clock is selected, an interval measured on it agrees with CLOCK_MONOTONIC_RAW
// within 1% (20 ms: read skew of a few microseconds even on a loaded machine).
void expectAgreesWithRaw() {
  for (int attempt = 0; attempt < 3; ++attempt) {
    int64_t r0 = rawNs(), m0 = measureNs();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    int64_t m1 = measureNs(), r1 = rawNs();
    double ratio = static_cast<double>(m1 - m0) / static_cast<double>(r1 - r0);
    if (ratio > 0.99 && ratio < 1.01) return;
    if (attempt == 2) ADD_FAILURE() << "measured/raw interval ratio " << ratio;
  }
}

TEST(MeasureClock, MonotonicSelection) {
  const ClockFacts& f = selectMeasureClock("monotonic");
  EXPECT_EQ(f.used, "monotonic");
  EXPECT_GT(f.readCostNs, 0.0);
  EXPECT_LT(f.readCostNs, 100'000.0);
  expectAgreesWithRaw();
  nlohmann::json j = f.toJson();
  EXPECT_EQ(j["used"], "monotonic");
  EXPECT_FALSE(j.contains("tsc_ghz"));
}

TEST(MeasureClock, TscCalibrationIsSane) {
  ClockFacts f;
  try {
    f = selectMeasureClock("tsc");
  } catch (const UsageError& e) {
    // Refused only with a reason (no TSC, or a calibration that disagrees), and only where auto
    // also falls back to monotonic.
    EXPECT_NE(std::string(e.what()).find("--clock tsc: cannot use the TSC"), std::string::npos);
    EXPECT_EQ(selectMeasureClock("auto").used, "monotonic");
    GTEST_SKIP() << "no usable invariant TSC here: " << e.what();
  }
  EXPECT_EQ(f.used, "tsc");
  // Forced on a CPU without the invariant flags: used, with a warning that says so.
  EXPECT_EQ(f.warning.empty(), f.invariantTsc) << f.warning;
  EXPECT_NE(f.describe().find(f.invariantTsc ? "invariant" : "not invariant, forced"),
            std::string::npos);
  EXPECT_GT(f.tscGhz, 0.2);
  EXPECT_LT(f.tscGhz, 10.0);
  EXPECT_GT(f.readCostNs, 0.0);
  EXPECT_LT(f.readCostNs, 10'000.0);
  expectAgreesWithRaw();
  // Monotonic non-decreasing across many reads.
  int64_t last = measureNs();
  for (int i = 0; i < 100'000; ++i) {
    int64_t now = measureNs();
    ASSERT_GE(now, last);
    last = now;
  }
  EXPECT_EQ(selectMeasureClock("auto").used, f.invariantTsc ? "tsc" : "monotonic");
}

TEST(MeasureClock, FactsOnEveryOutputFormat) {
  report::RunInfo info;
  info.test = report::Test::kLat;
  info.transport = "socket";
  info.op = "send";
  ClockFacts clock;
  clock.used = "monotonic";
  clock.kernelClocksource = "hpet";
  clock.readCostNs = 2480.0;
  clock.note = "the CPU does not advertise constant_tsc and nonstop_tsc";
  clock.warning = "kernel clocksource hpet is slow";
  info.clock = clock;
  PlacementFacts placement;
  placement.cpus = "0-3";
  placement.cpuNumaNodes = "0";
  placement.device = "mlx5_0";
  placement.deviceNumaNode = 1;
  placement.source = "bound by --cpu 0-3";
  placement.warning = "CPUs 0-3 are not on NUMA node 1";
  info.placement = placement;
  for (const char* format : {"table", "perftest", "osu", "imb", "json", "csv"}) {
    std::ostringstream out;
    auto r = report::makeReporter(format, out);
    r->begin(info);
    report::Row row;
    row.bytes = 8;
    row.iterations = 10;
    stats::Summary s;
    s.count = 10;
    row.latency = s;
    r->row(row);
    r->end();
    std::string text = out.str();
    EXPECT_NE(text.find("hpet"), std::string::npos) << format << ":\n" << text;
    EXPECT_NE(text.find("0-3"), std::string::npos) << format << ":\n" << text;
    if (std::string(format) == "csv") {
      EXPECT_NE(text.find("clock_read_ns"), std::string::npos) << text;
      EXPECT_NE(text.find(",monotonic,2480,hpet,0-3,"), std::string::npos) << text;
    } else if (std::string(format) == "json") {
      auto j = nlohmann::json::parse(text);
      EXPECT_EQ(j["run"]["clock"]["kernel_clocksource"], "hpet");
      EXPECT_EQ(j["run"]["placement"]["device_numa_node"], 1);
    } else {
      EXPECT_NE(text.find("2480.0 ns"), std::string::npos) << format << ":\n" << text;
      EXPECT_NE(text.find("WARNING"), std::string::npos) << format << ":\n" << text;
      EXPECT_NE(text.find("NUMA node 1"), std::string::npos) << format << ":\n" << text;
    }
  }
}

}  // namespace
}  // namespace rdmabench
