#include "noise/attribution.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

namespace rdmabench::noise {

namespace {

// The whole of a (small) /proc file; false when it cannot be opened or read.
bool readFile(const std::string& path, std::string& out) {
  out.clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (64u << 20)) break;  // bounded
  }
  ::close(fd);
  return true;
}

bool allDigits(const char* s) {
  if (*s == 0) return false;
  for (; *s; ++s)
    if (*s < '0' || *s > '9') return false;
  return true;
}

int64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

uint64_t counterDelta(const std::vector<CounterRow>& first, const CounterRow& last, int cpu) {
  if (cpu < 0 || static_cast<size_t>(cpu) >= last.perCpu.size()) return 0;
  uint64_t before = 0;
  for (const auto& r : first)
    if (r.id == last.id) {
      if (static_cast<size_t>(cpu) < r.perCpu.size()) before = r.perCpu[static_cast<size_t>(cpu)];
      break;
    }
  const uint64_t now = last.perCpu[static_cast<size_t>(cpu)];
  return now >= before ? now - before : 0;
}

const CpuTimes* findCpu(const std::vector<CpuTimes>& v, int cpu) {
  for (const auto& c : v)
    if (c.cpu == cpu) return &c;
  return nullptr;
}

std::string pct(double p) {
  return p >= 10    ? fmt::format("{:.1f}%", p)
         : p >= 0.1 ? fmt::format("{:.2f}%", p)
                    : fmt::format("{:.3f}%", p);
}

}  // namespace

Snapshot readSnapshot(const std::string& root) {
  Snapshot s;
  s.monoNs = monotonicNs();
  std::string text;
  if ((s.statOk = readFile(root + "/stat", text))) s.cpus = parseProcStat(text);
  if ((s.interruptsOk = readFile(root + "/interrupts", text))) s.interrupts = parseInterrupts(text);
  if ((s.softirqsOk = readFile(root + "/softirqs", text))) s.softirqs = parseSoftirqs(text);
  s.pid1Visible = ::access((root + "/1/stat").c_str(), R_OK) == 0;
  const long hz = std::max(1L, sysconf(_SC_CLK_TCK));
  DIR* proc = ::opendir(root.c_str());
  if (proc == nullptr) return s;
  while (dirent* pe = ::readdir(proc)) {
    if (!allDigits(pe->d_name)) continue;
    const int pid = std::atoi(pe->d_name);
    const std::string taskDir = root + "/" + pe->d_name + "/task";
    DIR* tasks = ::opendir(taskDir.c_str());
    if (tasks == nullptr) {
      ++s.unreadableTasks;
      continue;
    }
    while (dirent* te = ::readdir(tasks)) {
      if (!allDigits(te->d_name)) continue;
      const std::string dir = taskDir + "/" + te->d_name;
      if (!readFile(dir + "/stat", text)) {
        ++s.unreadableTasks;
        continue;
      }
      auto st = parseTaskStat(text);
      if (!st) continue;
      TaskSample t;
      t.pid = pid;
      t.tid = st->tid;
      t.comm = st->comm;
      t.processor = st->processor;
      t.cpuNs = (st->utime + st->stime) * (1'000'000'000ull / static_cast<uint64_t>(hz));
      if (readFile(dir + "/schedstat", text)) {
        if (auto ss = parseSchedstat(text)) {
          t.cpuNs = ss->runNs;
          s.schedstat = true;
        }
      }
      s.tasks[t.tid] = std::move(t);
    }
    ::closedir(tasks);
  }
  ::closedir(proc);
  return s;
}

void TaskTracker::add(const Snapshot& s) {
  const bool first = samples_ == 0;
  ++samples_;
  for (const auto& [tid, t] : s.tasks) {
    auto it = seen_.find(tid);
    if (it == seen_.end() || it->second.last.pid != t.pid) {
      Seen n;
      n.first = first ? t.cpuNs : 0;  // born during the run: all its time is in the run
      n.last = t;
      it = seen_.insert_or_assign(tid, n).first;
    } else {
      it->second.last = t;
    }
    TaskDelta d;
    d.pid = t.pid;
    d.tid = tid;
    d.comm = t.comm;
    d.processor = t.processor;
    d.ns = t.cpuNs >= it->second.first ? t.cpuNs - it->second.first : 0;
    deltas_[tid] = d;
  }
}

nlohmann::json NoiseSource::toJson() const {
  nlohmann::json j{{"kind", kind}, {"name", name}, {"cpu", cpu}, {"text", text}};
  if (kind == "thread") j["pid"] = pid;
  if (kind == "irq" || kind == "softirq")
    j["per_second"] = perSecond;
  else
    j["percent"] = pct;
  return j;
}

nlohmann::json AttributionResult::toJson() const {
  nlohmann::json cpusJ = nlohmann::json::array();
  for (const auto& c : cpus) {
    nlohmann::json top = nlohmann::json::array();
    for (const auto& s : c.top)
      top.push_back(s.toJson());
    cpusJ.push_back({{"cpu", c.cpu}, {"sources", top}});
  }
  return {{"seconds", seconds}, {"samples", samples}, {"cpus", cpusJ}, {"unseen", unseen}};
}

std::string formatRate(double r) {
  if (r >= 1e6) return fmt::format("{:.1f}M/s", r / 1e6);
  if (r >= 1e4) return fmt::format("{:.0f}k/s", r / 1e3);
  if (r >= 1e3) return fmt::format("{:.1f}k/s", r / 1e3);
  if (r >= 10) return fmt::format("{:.0f}/s", r);
  return fmt::format("{:.1f}/s", r);
}

namespace {

// What the reader could not see in `last` (unreadable files, hidden processes, no schedstat),
// one sentence each.
std::vector<std::string> unseenSources(const Snapshot& last) {
  std::vector<std::string> unseen;
  if (!last.statOk)
    unseen.push_back("/proc/stat unreadable: no steal, irq or softirq time per CPU");
  if (!last.interruptsOk) unseen.push_back("/proc/interrupts unreadable: no interrupt rates");
  if (!last.softirqsOk) unseen.push_back("/proc/softirqs unreadable: no softirq rates");
  if (!last.pid1Visible)
    unseen.push_back(
        "other processes are hidden (/proc mounted with hidepid= or a PID namespace): only "
        "the threads this reader may see are attributed");
  if (last.tasks.empty())
    unseen.push_back("no thread of /proc/*/task/*/stat readable: no thread sources");
  else if (!last.schedstat)
    unseen.push_back(
        "no schedstat (kernel without CONFIG_SCHED_INFO?): thread time from stat ticks, "
        "10 ms resolution");
  if (last.unreadableTasks > 0)
    unseen.push_back(fmt::format("{} task(s) unreadable (permissions or gone while read)",
                                 last.unreadableTasks));
  return unseen;
}

// The threads (not in `exclude`) that ran on `cpu` over `seconds`, as a share of its time.
std::vector<NoiseSource> threadSources(const std::map<int, TaskDelta>& tasks, int cpu,
                                       const std::set<int>& exclude, double seconds) {
  std::vector<NoiseSource> out;
  for (const auto& [tid, d] : tasks) {
    if (d.processor != cpu || exclude.count(d.pid) || d.ns == 0) continue;
    NoiseSource s;
    s.kind = "thread";
    s.name = d.comm;
    s.cpu = cpu;
    s.pid = d.pid;
    s.pct = 100.0 * static_cast<double>(d.ns) / (seconds * 1e9);
    s.text = d.tid == d.pid
                 ? fmt::format("{} (pid {}): {} of cpu {}", d.comm, d.pid, pct(s.pct), cpu)
                 : fmt::format("{} (pid {}, tid {}): {} of cpu {}", d.comm, d.pid, d.tid,
                               pct(s.pct), cpu);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

AttributionResult attribute(const Snapshot& first, const Snapshot& last,
                            const std::map<int, TaskDelta>& tasks, int samples,
                            const std::vector<int>& cpus, const std::set<int>& exclude,
                            long ticksPerSecond, size_t maxTime, size_t maxRate) {
  AttributionResult r;
  r.samples = samples;
  const double seconds = static_cast<double>(last.monoNs - first.monoNs) / 1e9;
  r.seconds = seconds;
  r.unseen = unseenSources(last);
  if (seconds <= 0) return r;
  const double hz = static_cast<double>(std::max(1L, ticksPerSecond));
  for (int cpu : cpus) {
    CpuSources cs;
    cs.cpu = cpu;
    std::vector<NoiseSource> time = threadSources(tasks, cpu, exclude, seconds), irq, soft;
    const CpuTimes* a = findCpu(first.cpus, cpu);
    const CpuTimes* b = findCpu(last.cpus, cpu);
    if (a && b) {
      auto add = [&](const char* kind, const char* label, uint64_t x, uint64_t y) {
        if (y <= x) return;
        NoiseSource s;
        s.kind = kind;
        s.name = label;
        s.cpu = cpu;
        s.pct = 100.0 * static_cast<double>(y - x) / hz / seconds;
        s.text = fmt::format("{} {} of cpu {}", label, pct(s.pct), cpu);
        time.push_back(std::move(s));
      };
      add("steal", "steal", a->steal, b->steal);
      add("irq-time", "irq time", a->irq, b->irq);
      add("softirq-time", "softirq time", a->softirq, b->softirq);
    }
    for (const auto& row : last.interrupts) {
      const uint64_t n = counterDelta(first.interrupts, row, cpu);
      if (n == 0) continue;
      NoiseSource s;
      s.kind = "irq";
      const std::string label = interruptLabel(row);
      s.name = label.empty() ? row.id : row.id + " " + label;
      s.cpu = cpu;
      s.perSecond = static_cast<double>(n) / seconds;
      s.text = fmt::format("irq {}: {} on cpu {}", s.name, formatRate(s.perSecond), cpu);
      irq.push_back(std::move(s));
    }
    for (const auto& row : last.softirqs) {
      const uint64_t n = counterDelta(first.softirqs, row, cpu);
      if (n == 0) continue;
      NoiseSource s;
      s.kind = "softirq";
      s.name = row.id;
      s.cpu = cpu;
      s.perSecond = static_cast<double>(n) / seconds;
      s.text = fmt::format("softirq {}: {} on cpu {}", s.name, formatRate(s.perSecond), cpu);
      soft.push_back(std::move(s));
    }
    auto byPct = [](const NoiseSource& x, const NoiseSource& y) {
      return x.pct != y.pct ? x.pct > y.pct : x.text < y.text;
    };
    auto byRate = [](const NoiseSource& x, const NoiseSource& y) {
      return x.perSecond != y.perSecond ? x.perSecond > y.perSecond : x.text < y.text;
    };
    std::sort(time.begin(), time.end(), byPct);
    std::sort(irq.begin(), irq.end(), byRate);
    std::sort(soft.begin(), soft.end(), byRate);
    size_t k = 0;
    for (auto& s : time)
      if (k < maxTime && s.pct >= 0.01) {
        cs.top.push_back(std::move(s));
        ++k;
      }
    for (size_t i = 0; i < irq.size() && i < maxRate; ++i)
      cs.top.push_back(std::move(irq[i]));
    for (size_t i = 0; i < soft.size() && i < maxRate; ++i)
      cs.top.push_back(std::move(soft[i]));
    r.cpus.push_back(std::move(cs));
  }
  return r;
}

AttributionReader::AttributionReader(std::string procRoot) : root_(std::move(procRoot)) {}

void AttributionReader::sample() {
  Snapshot s = readSnapshot(root_);
  tracker_.add(s);
  if (!started_) {
    started_ = true;
    first_ = std::move(s);
  } else {
    last_ = std::move(s);
  }
}

AttributionResult AttributionReader::finish(const std::vector<int>& cpus,
                                            const std::set<int>& exclude) {
  sample();
  return attribute(first_, last_, tracker_.deltas(), tracker_.samples(), cpus, exclude,
                   sysconf(_SC_CLK_TCK));
}

}  // namespace rdmabench::noise
