// `rdmabench noise` attribution: the /proc parsers over fixed text (captured on the 2-CPU CI VM,
// kernel 6.18, and edited where a case needs it), and attribute() over two synthetic snapshots.
#include <gtest/gtest.h>

#include "noise/attribution.h"
#include "noise/proc_parse.h"

namespace rdmabench::noise {
namespace {

constexpr const char* kInterrupts =
    "           CPU0       CPU1       \n"
    " 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n"
    " 36:          0     371944 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"
    " 45:         12       1200  IR-PCI-MSI 524288-edge      mlx5_comp3@pci:0000:3b:00.0\n"
    "NMI:          0          0   Non-maskable interrupts\n"
    "LOC:    8897256    5206732   Local timer interrupts\n"
    "ERR:          0\n"
    "MIS:          0\n";

constexpr const char* kSoftirqs =
    "                    CPU0       CPU1       \n"
    "          HI:          0          0\n"
    "       TIMER:     609504     492862\n"
    "      NET_RX:   29269037   23324408\n"
    "         RCU:    1710654    1395800\n";

constexpr const char* kStat =
    "cpu  845267 953169 410775 561973 1909 0 21480 18311 0 0\n"
    "cpu0 426683 482816 200568 272127 415 0 11565 10082 0 0\n"
    "cpu1 418583 470353 210207 289845 1493 3 9914 8229 0 0\n"
    "intr 19658220 0 0 0\n"
    "ctxt 123\n";

TEST(NoiseProc, ProcStatPerCpuLinesOnly) {
  auto cpus = parseProcStat(kStat);
  ASSERT_EQ(cpus.size(), 2u);
  EXPECT_EQ(cpus[0].cpu, 0);
  EXPECT_EQ(cpus[0].user, 426683u);
  EXPECT_EQ(cpus[0].softirq, 11565u);
  EXPECT_EQ(cpus[0].steal, 10082u);
  EXPECT_EQ(cpus[1].cpu, 1);
  EXPECT_EQ(cpus[1].irq, 3u);
  EXPECT_EQ(cpus[1].steal, 8229u);
  EXPECT_TRUE(parseProcStat("garbage\ncpuX 1 2 3 4 5\n").empty());
}

TEST(NoiseProc, InterruptsRowsNamesAndShortRows) {
  auto rows = parseInterrupts(kInterrupts);
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[1].id, "36");
  EXPECT_EQ(rows[1].perCpu, (std::vector<uint64_t>{0, 371944}));
  EXPECT_EQ(interruptLabel(rows[1]), "virtio1-req.0");
  EXPECT_EQ(rows[2].id, "45");
  EXPECT_EQ(interruptLabel(rows[2]), "mlx5_comp3@pci:0000:3b:00.0");
  EXPECT_EQ(rows[4].id, "LOC");
  EXPECT_EQ(rows[4].perCpu[0], 8897256u);
  EXPECT_EQ(interruptLabel(rows[4]), "Local timer interrupts");
  EXPECT_EQ(rows[5].id, "ERR");  // one count for the whole machine
  EXPECT_EQ(rows[5].perCpu.size(), 2u);
}

TEST(NoiseProc, InterruptsWithOfflineCpuIndexByNumber) {
  auto rows = parseInterrupts("  CPU0  CPU3\nLOC: 10 30 Local timer interrupts\n");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].perCpu, (std::vector<uint64_t>{10, 0, 0, 30}));
}

TEST(NoiseProc, Softirqs) {
  auto rows = parseSoftirqs(kSoftirqs);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2].id, "NET_RX");
  EXPECT_EQ(rows[2].perCpu, (std::vector<uint64_t>{29269037, 23324408}));
  EXPECT_TRUE(rows[2].name.empty());
}

TEST(NoiseProc, TaskStatCommWithSpacesAndParens) {
  // Captured `cat /proc/self/stat`, then comm replaced by one with a space and a ')'.
  const char* text =
      "10353 (my (evil) cmd) R 10347 10347 21806 0 -1 4194304 100 0 0 0 57 31 0 0 20 0 1 0 "
      "1413484 3133440 408 18446744073709551615 94738400563200 94738400583081 140721500241008 0 "
      "0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94738400599088 94738400600704 94739272536064 "
      "140721500244607 140721500244627 140721500244627 140721500245995 0\n";
  auto t = parseTaskStat(text);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->tid, 10353);
  EXPECT_EQ(t->comm, "my (evil) cmd");
  EXPECT_EQ(t->state, 'R');
  EXPECT_EQ(t->utime, 57u);
  EXPECT_EQ(t->stime, 31u);
  EXPECT_EQ(t->processor, 1);
  EXPECT_FALSE(parseTaskStat("12 (x) R 1 2 3").has_value());
  EXPECT_FALSE(parseTaskStat("").has_value());
}

TEST(NoiseProc, SchedstatAndCpuLists) {
  auto s = parseSchedstat("1234567 11444438 17\n");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->runNs, 1234567u);
  EXPECT_EQ(s->waitNs, 11444438u);
  EXPECT_EQ(s->slices, 17u);
  EXPECT_FALSE(parseSchedstat("1 2").has_value());
  EXPECT_EQ(parseCpuList("0-3,8"), (std::vector<int>{0, 1, 2, 3, 8}));
  EXPECT_TRUE(parseCpuList("3-1").empty());
  EXPECT_EQ(parseCpusAllowedList("Name:\tx\nCpus_allowed_list:\t1\n"), (std::vector<int>{1}));
}

Snapshot snap(int64_t ns, const std::string& stat, const std::string& irq,
              const std::string& soft) {
  Snapshot s;
  s.monoNs = ns;
  s.statOk = s.interruptsOk = s.softirqsOk = s.pid1Visible = s.schedstat = true;
  s.cpus = parseProcStat(stat);
  s.interrupts = parseInterrupts(irq);
  s.softirqs = parseSoftirqs(soft);
  return s;
}

TaskSample task(int pid, int tid, const char* comm, int cpu, uint64_t ns) {
  TaskSample t;
  t.pid = pid;
  t.tid = tid;
  t.comm = comm;
  t.processor = cpu;
  t.cpuNs = ns;
  return t;
}

// Two seconds between the samples: the injector used 40 ms of cpu 1 (2%), rdmabench's rank
// 2 s (left out), a thread born in between 10 ms (0.5%), and cpu 1 took 2400 interrupts of irq 45
// (1.2k/s) and 4 ticks of steal (USER_HZ 100: 40 ms = 2%).
TEST(NoiseAttribution, TopSourcesPerCpuKnownAnswer) {
  Snapshot a = snap(1'000'000'000, "cpu1 0 0 0 0 0 0 0 100 0 0\n",
                    "  CPU0 CPU1\n45: 0 100 IR-PCI-MSI 1-edge mlx5_comp3\nLOC: 0 0 Local timer\n",
                    "  CPU0 CPU1\nTIMER: 0 5\n");
  Snapshot b = snap(3'000'000'000, "cpu1 0 0 0 0 0 0 0 104 0 0\n",
                    "  CPU0 CPU1\n45: 0 2500 IR-PCI-MSI 1-edge mlx5_comp3\nLOC: 0 500 Local "
                    "timer\n",
                    "  CPU0 CPU1\nTIMER: 0 505\n");
  a.tasks[812] = task(812, 812, "injector", 1, 1'000'000);
  a.tasks[900] = task(900, 900, "rdmabench", 1, 0);
  b.tasks[812] = task(812, 812, "injector", 1, 41'000'000);
  b.tasks[900] = task(900, 900, "rdmabench", 1, 2'000'000'000);
  b.tasks[951] = task(950, 951, "kworker/1:2", 1, 10'000'000);
  b.tasks[960] = task(960, 960, "elsewhere", 0, 500'000'000);
  TaskTracker tr;
  tr.add(a);
  tr.add(b);
  AttributionResult r = attribute(a, b, tr.deltas(), 2, {1}, {900}, 100);
  EXPECT_DOUBLE_EQ(r.seconds, 2.0);
  EXPECT_TRUE(r.unseen.empty());
  ASSERT_EQ(r.cpus.size(), 1u);
  const auto& top = r.cpus[0].top;
  ASSERT_EQ(top.size(), 6u);  // injector, steal, kworker; irq 45, LOC; TIMER
  EXPECT_EQ(top[0].text, "injector (pid 812): 2.00% of cpu 1");
  EXPECT_EQ(top[0].pid, 812);
  EXPECT_EQ(top[1].text, "steal 2.00% of cpu 1");
  EXPECT_EQ(top[2].text, "kworker/1:2 (pid 950, tid 951): 0.50% of cpu 1");
  EXPECT_EQ(top[3].text, "irq 45 mlx5_comp3: 1.2k/s on cpu 1");
  EXPECT_EQ(top[4].text, "irq LOC Local timer: 250/s on cpu 1");
  EXPECT_EQ(top[5].text, "softirq TIMER: 250/s on cpu 1");
  for (const auto& s : top)
    EXPECT_EQ(s.text.find("rdmabench"), std::string::npos);
}

// Intermediate samples (--sample): a thread born after the start counts whole, one gone before
// the end keeps what the last sample that saw it had.
TEST(NoiseAttribution, TrackerAcrossSamples) {
  Snapshot s1, s2, s3;
  s1.tasks[10] = task(10, 10, "old", 0, 1000);
  s1.tasks[20] = task(20, 20, "shortlived", 0, 500);
  s2.tasks[10] = task(10, 10, "old", 0, 4000);
  s2.tasks[20] = task(20, 20, "shortlived", 0, 2500);
  s2.tasks[30] = task(30, 30, "born", 1, 7000);
  s3.tasks[10] = task(10, 10, "old", 1, 9000);
  s3.tasks[30] = task(30, 30, "born", 1, 8000);
  TaskTracker tr;
  tr.add(s1);
  tr.add(s2);
  tr.add(s3);
  EXPECT_EQ(tr.samples(), 3);
  const auto& d = tr.deltas();
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d.at(10).ns, 8000u);
  EXPECT_EQ(d.at(10).processor, 1);  // where it last ran
  EXPECT_EQ(d.at(20).ns, 2000u);
  EXPECT_EQ(d.at(30).ns, 8000u);
}

TEST(NoiseAttribution, RestrictedProcSaysWhatItCouldNotSee) {
  Snapshot a, b;
  a.monoNs = 0;
  b.monoNs = 1'000'000'000;
  TaskTracker tr;
  tr.add(a);
  tr.add(b);
  AttributionResult r = attribute(a, b, tr.deltas(), 2, {0}, {}, 100);
  ASSERT_EQ(r.cpus.size(), 1u);
  EXPECT_TRUE(r.cpus[0].top.empty());
  ASSERT_EQ(r.unseen.size(), 5u);
  EXPECT_NE(r.unseen[0].find("/proc/stat"), std::string::npos);
  EXPECT_NE(r.unseen[3].find("hidepid"), std::string::npos);
}

TEST(NoiseAttribution, ReaderOnAMissingRootStillAnswers) {
  AttributionReader reader("/nonexistent-proc-root");
  reader.sample();
  AttributionResult r = reader.finish({0}, {});
  EXPECT_EQ(r.samples, 2);
  EXPECT_GE(r.unseen.size(), 4u);
}

}  // namespace
}  // namespace rdmabench::noise
