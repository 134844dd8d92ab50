#pragma once
// Attribution of OS noise to its sources (docs/noise.md, "Attribution"). One reader per node
// samples, at the start, every --sample seconds and at the end:
//  - /proc/stat per CPU: irq, softirq and steal time (USER_HZ ticks);
//  - /proc/interrupts and /proc/softirqs: per-CPU counts of every interrupt and softirq;
//  - /proc/PID/task/TID/stat (comm, the CPU it last ran on) and schedstat (ns on a CPU): which
//    threads ran where and for how long.
// The differences between the first and the last sample give, per CPU, the top sources:
// "waagent (pid 812): 0.8% of cpu 3", "irq 45 mlx5_comp3: 1.2k/s on cpu 3", "steal 0.4% of
// cpu 3". Limits (stated in the report): a thread's time is charged to the CPU it last ran on
// (exact only for threads pinned to one CPU); a thread born and gone between two samples is not
// seen; without IRQ_TIME_ACCOUNTING the irq time of /proc/stat stays near zero.
// Where /proc is restricted (hidepid, PID namespace, no schedstat) the reader keeps going and
// AttributionResult::unseen says what it could not see.
// Thread-safety: AttributionReader belongs to one thread; attribute() is pure.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "noise/proc_parse.h"

namespace rdmabench::noise {

// One thread as one sample saw it.
struct TaskSample {
  int pid = 0, tid = 0;
  std::string comm;
  int processor = -1;
  uint64_t cpuNs = 0;  // schedstat run time, else (utime + stime) ticks converted to ns
};

// One reading of /proc.
struct Snapshot {
  int64_t monoNs = 0;  // CLOCK_MONOTONIC when taken
  bool statOk = false, interruptsOk = false, softirqsOk = false;
  std::vector<CpuTimes> cpus;
  std::vector<CounterRow> interrupts, softirqs;
  std::map<int, TaskSample> tasks;  // by tid
  bool schedstat = false;           // at least one schedstat was read
  uint64_t unreadableTasks = 0;     // task directories whose stat could not be read
  bool pid1Visible = false;         // false: hidepid or a PID namespace hides other processes
};

// Reads a snapshot under `procRoot` ("/proc"). Never throws for missing or unreadable files.
Snapshot readSnapshot(const std::string& procRoot);

// Merges snapshots: a thread's time is its last value minus its first (0 for a thread that first
// appeared after the first snapshot: it was born during the run).
struct TaskDelta {
  int pid = 0, tid = 0;
  std::string comm;
  int processor = -1;
  uint64_t ns = 0;
};

class TaskTracker {
 public:
  void add(const Snapshot& s);
  const std::map<int, TaskDelta>& deltas() const { return deltas_; }
  int samples() const { return samples_; }

 private:
  struct Seen {
    uint64_t first = 0;
    TaskSample last;
  };
  std::map<int, Seen> seen_;
  std::map<int, TaskDelta> deltas_;
  int samples_ = 0;
};

// One source of noise on one CPU.
struct NoiseSource {
  std::string kind;  // "thread", "steal", "irq-time", "softirq-time", "irq", "softirq"
  std::string name;  // comm, interrupt label ("45 mlx5_comp3"), softirq name
  int cpu = -1;
  int pid = 0;           // thread: its process
  double pct = 0;        // share of the CPU's time, % (time kinds)
  double perSecond = 0;  // events per second (irq, softirq)
  std::string text;      // "waagent (pid 812): 0.8% of cpu 3"
  nlohmann::json toJson() const;
};

struct CpuSources {
  int cpu = -1;
  std::vector<NoiseSource> top;  // time sources by share, then interrupts and softirqs by rate
};

struct AttributionResult {
  double seconds = 0;  // between the first and the last sample
  int samples = 0;
  std::vector<CpuSources> cpus;     // the CPUs asked for, in that order
  std::vector<std::string> unseen;  // what could not be seen ("" lines never)
  nlohmann::json toJson() const;
};

// Pure: the top sources on each CPU of `cpus` between `first` and `last` (`tasks` from a
// TaskTracker fed with every sample), leaving out the processes in `exclude` (rdmabench's own).
// At most `maxTime` time sources (share >= 0.01%) and `maxRate` interrupt and softirq rows each.
// `ticksPerSecond`: USER_HZ.
AttributionResult attribute(const Snapshot& first, const Snapshot& last,
                            const std::map<int, TaskDelta>& tasks, int samples,
                            const std::vector<int>& cpus, const std::set<int>& exclude,
                            long ticksPerSecond, size_t maxTime = 5, size_t maxRate = 3);

// "1.2k/s", "250/s", "0.5/s".
std::string formatRate(double perSecond);

// The reader: start(), sample() every --sample seconds, finish() at the end.
class AttributionReader {
 public:
  // `procRoot`: "/proc" (tests point it elsewhere).
  explicit AttributionReader(std::string procRoot = "/proc");
  void sample();  // the first call is the start
  AttributionResult finish(const std::vector<int>& cpus, const std::set<int>& exclude);

 private:
  std::string root_;
  Snapshot first_, last_;
  TaskTracker tracker_;
  bool started_ = false;
};

}  // namespace rdmabench::noise
