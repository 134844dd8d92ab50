#pragma once
// Parsers of the /proc files `rdmabench noise` samples for attribution (docs/noise.md,
// "Attribution"). Pure functions over the files' text, unit-tested with fixed input
// (tests/unit/noise_proc_test.cc); reading the files is attribution.h's job.
// Formats: Documentation/filesystems/proc.rst and scheduler/sched-stats.rst of the kernel.
// Malformed lines are skipped, never fatal: /proc varies between kernels.
// Thread-safety: pure, thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmabench::noise {

// One "cpuN" line of /proc/stat, in USER_HZ ticks (cumulative since boot).
struct CpuTimes {
  int cpu = -1;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  uint64_t total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
};
// Every "cpuN" line (not the aggregate "cpu" line), in file order.
std::vector<CpuTimes> parseProcStat(std::string_view text);

// One row of /proc/interrupts or /proc/softirqs: per-CPU counts, cumulative since boot.
struct CounterRow {
  std::string id;    // "45", "LOC", "NET_RX"
  std::string name;  // the trailing description: "IR-PCI-MSI 524288-edge mlx5_comp3@pci:..."
  std::vector<uint64_t> perCpu;  // index = CPU number as in the header (CPU0 CPU1 ...)
};
// /proc/interrupts: the header gives the CPU numbers (CPU0 CPU3 on a host with CPUs offline:
// perCpu is indexed by the CPU number, zero-filled). Rows with fewer counts than CPUs (ERR, MIS)
// keep what they have.
std::vector<CounterRow> parseInterrupts(std::string_view text);
// /proc/softirqs: the same layout without descriptions.
std::vector<CounterRow> parseSoftirqs(std::string_view text);
// The short name of an interrupt row for reports: the last word of the description (the
// action name, "mlx5_comp3@pci:0000:3b:00.0"), or the whole description for the summary rows
// ("Local timer interrupts").
std::string interruptLabel(const CounterRow& row);

// /proc/PID/task/TID/stat. comm may contain spaces and parentheses: the fields after it are
// split after the LAST ')'.
struct TaskStat {
  int tid = 0;
  std::string comm;
  char state = '?';
  uint64_t utime = 0, stime = 0;  // USER_HZ ticks (fields 14, 15)
  int processor = -1;             // field 39: the CPU it last ran on
};
std::optional<TaskStat> parseTaskStat(std::string_view text);

// /proc/PID/task/TID/schedstat: time on a CPU (ns), time waiting on a runqueue (ns), timeslices.
struct SchedStat {
  uint64_t runNs = 0, waitNs = 0, slices = 0;
};
std::optional<SchedStat> parseSchedstat(std::string_view text);

// "Cpus_allowed_list:" of /proc/PID/task/TID/status -> the CPUs ("0-3,8" -> 0 1 2 3 8); empty
// when absent or malformed.
std::vector<int> parseCpusAllowedList(std::string_view statusText);
// A cpuset list "0-3,8" -> 0 1 2 3 8 (empty on malformed text).
std::vector<int> parseCpuList(std::string_view list);

}  // namespace rdmabench::noise
