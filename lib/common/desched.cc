#include "common/desched.h"

#include <sched.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "common/clock.h"

namespace rdmabench {

namespace {

int64_t involuntarySwitches() {
  rusage u{};
  if (getrusage(RUSAGE_THREAD, &u) != 0) return 0;
  return u.ru_nivcsw;
}

// /proc/thread-self/schedstat: {run time on a CPU, run delay}, ns; {-1, -1} when absent.
std::pair<int64_t, int64_t> schedstat() {
  std::ifstream f("/proc/thread-self/schedstat");
  int64_t run = -1, wait = -1;
  if (!(f >> run >> wait)) return {-1, -1};
  return {run, wait};
}

// {steal, irq + softirq} ticks summed over the CPUs this thread may run on.
std::pair<int64_t, int64_t> stealAndIrqTicks() {
  cpu_set_t set;
  CPU_ZERO(&set);
  const bool haveSet = sched_getaffinity(0, sizeof set, &set) == 0;
  std::ifstream f("/proc/stat");
  std::string line;
  int64_t steal = 0, irq = 0;
  while (std::getline(f, line)) {
    if (line.rfind("cpu", 0) != 0) break;
    if (line.size() < 4 || line[3] == ' ') continue;  // the "cpu " total line
    std::istringstream in(line.substr(3));
    int cpu = -1;
    int64_t v[8] = {};
    in >> cpu;
    for (auto& x : v)
      in >> x;
    if (!in || cpu < 0) continue;
    if (haveSet && (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &set))) continue;
    steal += v[7];
    irq += v[5] + v[6];
  }
  return {steal, irq};
}

// This thread's run time, ns (CLOCK_THREAD_CPUTIME_ID); -1 when unavailable. Not schedstat's
// first field: the kernel prints that as last updated (at a tick or a switch), so a running
// thread's value lags by up to one scheduler tick (4 ms at HZ=250) and a 20 ms loop read 24 ms.
int64_t threadCpuNs() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

// The CPU-time window nests inside the wall-time window (wall read first at the start, last at
// the end), so cpuUs <= wallUs holds by construction for one thread.
DeschedProbe::DeschedProbe() : switches_(involuntarySwitches()) {
  std::tie(stealTicks_, irqTicks_) = stealAndIrqTicks();
  startNs_ = nowNs();
  runDelayNs_ = schedstat().second;
  cpuNs_ = threadCpuNs();
}

DeschedDelta DeschedProbe::stop() const {
  DeschedDelta d;
  const int64_t cpu = threadCpuNs();
  const int64_t delay = schedstat().second;
  d.wallUs = static_cast<double>(nowNs() - startNs_) / 1000;
  d.involuntarySwitches = std::max<int64_t>(0, involuntarySwitches() - switches_);
  if (runDelayNs_ >= 0 && delay >= 0)
    d.runDelayUs = static_cast<double>(std::max<int64_t>(0, delay - runDelayNs_)) / 1000;
  if (cpuNs_ >= 0 && cpu >= 0)
    d.cpuUs = static_cast<double>(std::max<int64_t>(0, cpu - cpuNs_)) / 1000;
  static const long hz = std::max(1L, sysconf(_SC_CLK_TCK));
  const auto [steal, irq] = stealAndIrqTicks();
  const double usPerTick = 1e6 / static_cast<double>(hz);
  d.stealUs = static_cast<double>(std::max<int64_t>(0, steal - stealTicks_)) * usPerTick;
  d.irqUs = static_cast<double>(std::max<int64_t>(0, irq - irqTicks_)) * usPerTick;
  d.allowedCpus = allowedCpuCount();
  return d;
}

bool DeschedDelta::lostCpu() const {
  if (runDelayUs < 0) return involuntarySwitches > 0 || stealUs > 0;
  const double lost = runDelayUs + stealUs;
  return (involuntarySwitches > 0 || stealUs > 0) && lost >= 20 && lost >= 0.01 * wallUs;
}

bool sharedCpusLost(double cpuUs, double entitledUs) {
  if (cpuUs < 0 || entitledUs <= 0) return false;
  const double lost = entitledUs - cpuUs;
  return lost >= 20 && lost >= 0.01 * entitledUs;
}

DeschedDelta& DeschedDelta::operator+=(const DeschedDelta& d) {
  involuntarySwitches += d.involuntarySwitches;
  stealUs += d.stealUs;
  runDelayUs = runDelayUs < 0 || d.runDelayUs < 0 ? std::max(runDelayUs, d.runDelayUs)
                                                  : runDelayUs + d.runDelayUs;
  wallUs += d.wallUs;
  return *this;
}

nlohmann::json DeschedDelta::toJson() const {
  nlohmann::json j{{"involuntary_switches", involuntarySwitches}, {"steal_us", stealUs}};
  if (runDelayUs >= 0) j["run_delay_us"] = runDelayUs;
  return j;
}

std::string DeschedDelta::describe() const {
  return fmt::format(
      "{} involuntary context switch{}{}{}", involuntarySwitches,
      involuntarySwitches == 1 ? "" : "es",
      runDelayUs >= 0 ? fmt::format(", {:.0f} us waiting for a CPU", runDelayUs) : std::string(),
      stealUs > 0 ? fmt::format(", {:.0f} us stolen", stealUs) : std::string());
}

int allowedCpuCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

std::string deschedAdvice() {
  return "rows marked 'desched' lost the CPU during their timed loop (another process ran on "
         "its core: the time includes its work); use -e / --use-event on (event mode), pin to "
         "an idle core (--cpu, taskset), or run fewer ranks per host";
}

}  // namespace rdmabench
