// `rdmabench check`: the baseline rule, --expect, counter classes, the sysfs reader on a fake
// tree, the history file (corrupt, other node, concurrent appends) and the options. Known answers.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "check/child.h"
#include "check/counters.h"
#include "check/expect.h"
#include "check/history.h"
#include "check/inventory.h"
#include "check/judge.h"
#include "check/measure.h"
#include "check/noise_step.h"
#include "check/options.h"
#include "check/rule.h"
#include "common/error.h"

namespace rdmabench::check {
namespace {

namespace fs = std::filesystem;

class TempTree {
 public:
  TempTree() {
    char dir[] = "/tmp/rdmabench-check-test.XXXXXX";
    if (mkdtemp(dir) != nullptr) root_ = dir;
  }
  ~TempTree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  void write(const std::string& rel, const std::string& text) const {
    const fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string read(const std::string& rel) const {
    std::ifstream in(fs::path(root_) / rel);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

TEST(CheckRule, MedianAndScaledMad) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  // |x - 3| = 2, 1, 0, 1, 97 -> median 1 -> 1.4826: one wild value does not move it.
  EXPECT_DOUBLE_EQ(scaledMad({1, 2, 3, 4, 100}), kMadScale);
}

TEST(CheckRule, MarginDominatesWhenTheHistoryHasNoSpread) {
  const std::vector<double> h = {10, 10, 11, 9, 10};  // median 10, MAD 0
  const RuleParams p;                                 // k 3, margin 10 %, 5 runs
  Judgement j = judge(11.0, h, false, p);
  ASSERT_TRUE(j.judged);
  EXPECT_DOUBLE_EQ(j.median, 10);
  EXPECT_DOUBLE_EQ(j.mad, 0);
  EXPECT_DOUBLE_EQ(j.allowance, 1);
  EXPECT_DOUBLE_EQ(j.limit, 11);
  EXPECT_FALSE(j.worse);
  EXPECT_TRUE(judge(11.01, h, false, p).worse);
  EXPECT_FALSE(judge(1.0, h, false, p).worse);  // better is never worse
}

TEST(CheckRule, MadDominatesWhenTheHistorySpreads) {
  // median 10; |x - 10| = 0,2,2,0,4,4,0 -> median 2 -> MAD 2.9652; 3 x MAD = 8.8956 > 1.
  const std::vector<double> h = {10, 12, 8, 10, 14, 6, 10};
  Judgement j = judge(18.8, h, false, RuleParams{});
  EXPECT_NEAR(j.allowance, 3 * 2 * kMadScale, 1e-12);
  EXPECT_NEAR(j.limit, 18.8956, 1e-9);
  EXPECT_FALSE(j.worse);
  EXPECT_TRUE(judge(18.9, h, false, RuleParams{}).worse);
}

TEST(CheckRule, HigherIsBetterForBandwidth) {
  const std::vector<double> h = {1000, 1010, 990, 1000, 1005};  // MAD 7.41, margin 100
  EXPECT_NEAR(judge(0, h, true, RuleParams{}).limit, 900, 1e-9);
  EXPECT_TRUE(judge(899, h, true, RuleParams{}).worse);
  EXPECT_FALSE(judge(901, h, true, RuleParams{}).worse);
  EXPECT_FALSE(judge(5000, h, true, RuleParams{}).worse);
}

TEST(CheckRule, TooFewRunsJudgeNothing) {
  Judgement j = judge(1e9, {1, 1, 1, 1}, false, RuleParams{});
  EXPECT_FALSE(j.judged);
  EXPECT_FALSE(j.worse);
  EXPECT_EQ(j.reason, "4 of 5 runs needed");
}

TEST(CheckRule, DrainReasonOfTheIssue) {
  CheckResult r;
  r.rule = RuleParams{};
  r.window = 30;
  r.figures = {{"mlx5_0/1", "lat_p99_us", 7.9, false}};
  History h;
  h.path = "/d/n1.json";
  for (int i = 0; i < 5; ++i)
    h.runs.push_back({"", true, {{"mlx5_0/1 lat_p99_us", 2.1}}});
  judgeBaseline(r, h);
  orderFindings(r);
  EXPECT_EQ(r.reasonLine(),
            "rdmabench check: mlx5_0/1: p99 latency 7.9 us, baseline 2.1 us [+276%]");
  EXPECT_FALSE(r.healthy());
}

TEST(CheckRule, UnhealthyRunsAreNotBaseline) {
  History h;
  h.runs.push_back({"", true, {{"k", 1}}});
  h.runs.push_back({"", false, {{"k", 100}}});
  h.runs.push_back({"", true, {{"k", 2}}});
  EXPECT_EQ(h.values("k", 30), (std::vector<double>{1, 2}));
  EXPECT_EQ(h.values("k", 1), (std::vector<double>{2}));  // the newest
}

TEST(CheckExpect, Parses) {
  Expectation e = parseExpectation("lat_p99<=3us");
  EXPECT_EQ(e.figure, "lat_p99");
  EXPECT_EQ(e.op, "<=");
  EXPECT_DOUBLE_EQ(e.value, 3);
  EXPECT_DOUBLE_EQ(parseExpectation("lat_p50 < 2500ns").value, 2.5);
  EXPECT_DOUBLE_EQ(parseExpectation("lat_p50<2").value, 2);
  EXPECT_DOUBLE_EQ(parseExpectation("bw>=40Gb/s").value, 5000);
  EXPECT_DOUBLE_EQ(parseExpectation("bw>3GB/s").value, 3000);
  Expectation link = parseExpectation("bw>=90%link");
  EXPECT_TRUE(link.ofLink);
  EXPECT_DOUBLE_EQ(expectationLimit(link, 100), 11250);  // 90 % of 100 Gb/s in MB/s
  EXPECT_LT(expectationLimit(link, 0), 0);               // unknown rate: not judged
  EXPECT_TRUE(meets(e, 3, 3));
  EXPECT_FALSE(meets(e, 3.01, 3));
  EXPECT_FALSE(meets(parseExpectation("bw>1MB/s"), 1, 1));
}

std::string expectError(const std::string& text) {
  try {
    parseExpectation(text);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CheckExpect, RefusesWithOneLine) {
  EXPECT_NE(expectError("lat_p99=3us").find("--expect 'lat_p99=3us': no operator"),
            std::string::npos);
  EXPECT_NE(expectError("bw>=3us").find("unit 'us' unknown for bw"), std::string::npos);
  EXPECT_NE(expectError("lat_p99<=3MB/s").find("unit 'MB/s' unknown for lat_p99"),
            std::string::npos);
  EXPECT_NE(expectError("foo<=1").find("unknown figure 'foo'"), std::string::npos);
  EXPECT_NE(expectError("bw>=150%link").find("0..100 %"), std::string::npos);
  EXPECT_NE(expectError("lat_p99<=").find("no valid number"), std::string::npos);
}

TEST(CheckCounters, ClassesByName) {
  for (const char* n :
       {"symbol_error", "link_downed", "link_error_recovery", "port_rcv_errors",
        "local_link_integrity_errors", "excessive_buffer_overrun_errors", "rcvd_seq_err",
        "completer_retry_err", "retry_rnr_exceeded_err", "out_of_sequence", "duplicate_request",
        "rx_dropped", "rx_crc_errors", "local_ack_timeout_err", "rnr_nak_retry_err"})
    EXPECT_EQ(classifyCounter(n), CounterClass::kError) << n;
  for (const char* n : {"port_xmit_wait", "np_cnp_sent", "rp_cnp_handled",
                        "np_ecn_marked_roce_packets", "rcvd_rnr_err", "rx_pause", "out_of_buffer"})
    EXPECT_EQ(classifyCounter(n), CounterClass::kCongestion) << n;
  for (const char* n : {"port_xmit_data", "port_rcv_packets", "sent_pkts", "rcvd_pkts",
                        "ack_deferred", "rdma_sends", "rx_bytes"})
    EXPECT_EQ(classifyCounter(n), CounterClass::kTraffic) << n;
}

void fakeRocePort(const TempTree& t, const std::string& state) {
  const std::string d = "class/infiniband/mlx5_0/";
  t.write(d + "fw_ver", "22.31.1014\n");
  t.write(d + "node_type", "1: CA\n");
  t.write(d + "device/numa_node", "1\n");
  t.write(d + "ports/1/state", state + "\n");
  t.write(d + "ports/1/phys_state", "5: LinkUp\n");
  t.write(d + "ports/1/rate", "100 Gb/sec (4X EDR)\n");
  t.write(d + "ports/1/link_layer", "Ethernet\n");
  t.write(d + "ports/1/gids/0", "fe80:0000:0000:0000:0a00:27ff:fe00:0001\n");
  t.write(d + "ports/1/gids/1", "0000:0000:0000:0000:0000:ffff:0a63:0001\n");
  t.write(d + "ports/1/gids/2", "0000:0000:0000:0000:0000:0000:0000:0000\n");
  t.write(d + "ports/1/gid_attrs/types/0", "IB/RoCE v1\n");
  t.write(d + "ports/1/gid_attrs/types/1", "RoCE v2\n");
  t.write(d + "ports/1/gid_attrs/ndevs/0", "eth0\n");
  t.write(d + "ports/1/gid_attrs/ndevs/1", "eth0\n");
  t.write(d + "ports/1/counters/symbol_error", "0\n");
  t.write(d + "ports/1/counters/port_xmit_data", "1000\n");
  t.write(d + "ports/1/hw_counters/np_cnp_sent", "5\n");
  t.write(d + "ports/1/hw_counters/lifespan", "10\n");
  t.write("class/net/eth0/operstate", "up\n");
  t.write("class/net/eth0/speed", "100000\n");
  t.write("class/net/eth0/mtu", "9000\n");
  t.write("class/net/eth0/statistics/rx_errors", "3\n");
}

TEST(CheckInventory, ReadsAFakeSysfsTree) {
  TempTree t;
  fakeRocePort(t, "4: ACTIVE");
  Inventory inv = readInventory(t.root());
  ASSERT_EQ(inv.devices.size(), 1u);
  const DeviceState& d = inv.devices[0];
  EXPECT_EQ(d.name, "mlx5_0");
  EXPECT_EQ(d.fwVer, "22.31.1014");
  EXPECT_EQ(d.numaNode, 1);
  ASSERT_EQ(d.ports.size(), 1u);
  const PortState& p = d.ports[0];
  EXPECT_EQ(p.name(), "mlx5_0/1");
  EXPECT_EQ(p.state, "ACTIVE");
  EXPECT_EQ(p.physState, "LinkUp");
  EXPECT_DOUBLE_EQ(p.rateGbps, 100);
  ASSERT_EQ(p.gids.size(), 2u);  // the all-zero entry is empty
  EXPECT_EQ(p.gids[0].type, "RoCE v1");
  EXPECT_EQ(p.gids[1].type, "RoCE v2");
  EXPECT_EQ(p.netdev.name, "eth0");
  EXPECT_EQ(p.netdev.operstate, "up");
  EXPECT_EQ(p.netdev.speedMbps, 100000);
  EXPECT_EQ(p.netdev.mtu, 9000);
  EXPECT_TRUE(readInventory(t.root(), {"mlx5_1"}).devices.empty());
  EXPECT_TRUE(readInventory(t.root() + "/nothing").devices.empty());
}

TEST(CheckInventory, CountersOverTheWindowAndTheirVerdict) {
  TempTree t;
  fakeRocePort(t, "4: ACTIVE");
  Inventory inv = readInventory(t.root());
  const PortState& p = inv.devices[0].ports[0];
  CounterSnapshot before = readCounters(t.root(), p);
  EXPECT_EQ(before.values.size(), 5u);
  EXPECT_EQ(before.values.at("netdev/rx_errors"), 3u);
  t.write("class/infiniband/mlx5_0/ports/1/counters/symbol_error", "2\n");
  t.write("class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent", "25\n");
  CounterSnapshot after = readCounters(t.root(), p);
  after.monoNs = before.monoNs + 2'000'000'000;  // a 2 s window
  CheckResult r;
  r.inventory = inv;
  r.counters.push_back({p.name(), 2, counterDeltas(before, after)});
  judgeCounters(r);
  ASSERT_EQ(r.findings.size(), 1u);  // the congestion rise alone does not fail
  EXPECT_EQ(r.findings[0].line(),
            "mlx5_0/1: error counter rose in 2.0 s: counters/symbol_error +2");
  // A limit lets a counter rise that far, and no further.
  CheckResult limited = r;
  limited.findings.clear();
  judgeCounters(limited, {{"counters/symbol_error", 2}});
  EXPECT_TRUE(limited.findings.empty());
  judgeCounters(limited, {{"counters/symbol_error", 1}});
  ASSERT_EQ(limited.findings.size(), 1u);
  EXPECT_EQ(limited.findings[0].text,
            "error counter rose in 2.0 s: counters/symbol_error +2 (limit 1)");
  const std::vector<Figure> figures = collectFigures(r);
  ASSERT_EQ(figures.size(), 1u);
  EXPECT_EQ(figures[0].key(), "mlx5_0/1 rate hw_counters/np_cnp_sent");
  EXPECT_DOUBLE_EQ(figures[0].value, 10);
}

TEST(CheckInventory, DownPortFails) {
  TempTree t;
  fakeRocePort(t, "1: DOWN");
  t.write("class/infiniband/mlx5_0/ports/1/phys_state", "3: Disabled\n");
  t.write("class/net/eth0/operstate", "down\n");
  CheckResult r;
  r.inventory = readInventory(t.root());
  judgeInventory(r, {}, false);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].line(),
            "mlx5_0/1: port state DOWN (physical state Disabled), netdev eth0 down");
}

TEST(CheckInventory, NoDeviceIsTheOperatorsChoice) {
  CheckResult r;
  judgeInventory(r, {}, false);
  EXPECT_TRUE(r.healthy());
  EXPECT_EQ(r.notes.size(), 1u);
  judgeInventory(r, {}, true);
  EXPECT_EQ(r.reasonLine(), "rdmabench check: node: no RDMA device (--require-rdma)");
}

std::string historyError(const std::string& dir, const std::string& node) {
  try {
    readHistory(dir, node);
  } catch (const HistoryError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CheckHistory, AppendsAndRefusesWhatItCannotUse) {
  TempTree t;
  EXPECT_FALSE(readHistory(t.root(), "n1").exists);
  appendRun(t.root(), "n1", {"2026-01-01T00:00:00Z", true, {{"rxe0/1 lat_p99_us", 2.5}}}, 1000);
  appendRun(t.root(), "n1", {"2026-01-02T00:00:00Z", false, {{"rxe0/1 lat_p99_us", 9}}}, 1000);
  History h = readHistory(t.root(), "n1");
  ASSERT_EQ(h.runs.size(), 2u);
  EXPECT_DOUBLE_EQ(h.runs[0].figures.at("rxe0/1 lat_p99_us"), 2.5);
  EXPECT_FALSE(h.runs[1].healthy);
  // Another node's file under this node's name.
  EXPECT_NE(historyError(t.root(), "n2").find("(no error)"), std::string::npos);
  fs::copy_file(t.root() + "/n1.json", t.root() + "/n2.json");
  EXPECT_NE(historyError(t.root(), "n2").find("the history of node 'n1', not of this node 'n2'"),
            std::string::npos);
  // Another version, and corrupt JSON: refused, and an append leaves the file as it was.
  t.write("n3.json", R"({"schema": "rdmabench-check-history", "version": 2, "node": "n3"})");
  EXPECT_NE(historyError(t.root(), "n3").find("schema version 2"), std::string::npos);
  t.write("n4.json", "{\"schema\": \"rdmabench-check-his");
  EXPECT_NE(historyError(t.root(), "n4").find("n4.json"), std::string::npos);
  EXPECT_THROW(appendRun(t.root(), "n4", {}, 1000), HistoryError);
  EXPECT_EQ(t.read("n4.json"), "{\"schema\": \"rdmabench-check-his");
}

TEST(CheckHistory, ConcurrentAppendsAllLand) {
  TempTree t;
  constexpr int kProcs = 4, kRuns = 10;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int rc = 0;
      for (int i = 0; i < kRuns; ++i) {
        try {
          appendRun(t.root(), "n1", {"", true, {{"k", p * 100.0 + i}}}, 20'000);
        } catch (...) {
          rc = 1;
        }
      }
      _exit(rc);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(readHistory(t.root(), "n1").runs.size(), static_cast<size_t>(kProcs * kRuns));
}

std::string optionError(const std::vector<std::string>& args) {
  try {
    parseCheckCommand(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CheckOptions, PeerAndLoops) {
  CheckCommand c = parseCheckCommand({"--peer", "node7:19000", "--token", "t0k", "--skip", "bw"});
  EXPECT_EQ(c.peer, "node7");
  EXPECT_EQ(c.peerPort, 19000);
  EXPECT_EQ(c.token, "t0k");
  EXPECT_TRUE(c.skips("bw"));
  EXPECT_FALSE(c.skips("measure"));
  c = parseCheckCommand({"--peer", "node7", "-p", "19001"});
  EXPECT_EQ(c.peerPort, 19001);
  EXPECT_EQ(parseCheckCommand({"--peer", "node7"}).peerPort, 18515);
  // Both loops left out is the measure step left out.
  EXPECT_TRUE(parseCheckCommand({"--skip", "lat", "--skip", "bw"}).skips("measure"));
  EXPECT_NE(optionError({"--port", "19000"}).find("--port: only with --peer"), std::string::npos);
  EXPECT_NE(optionError({"--token", "x"}).find("--token: only with --peer"), std::string::npos);
  EXPECT_NE(optionError({"--peer", ""}).find("--peer '': empty host name"), std::string::npos);
  EXPECT_NE(optionError({"--peer", "n", "-p", "0"}).find("--port 0"), std::string::npos);
  EXPECT_NE(optionError({"--peer", "n:1", "-p", "2"}).find("-p"), std::string::npos);
}

TEST(CheckMeasure, PeerSubjectAndConnection) {
  MeasureRequest q;
  q.clientDevice = "mlx5_0";
  q.clientPort = 1;
  q.serverDevice = "mlx5_0";
  EXPECT_EQ(measureSubject(q), "mlx5_0/1");
  q.peer = "10.0.0.7";
  q.peerPort = 19000;
  EXPECT_EQ(measureSubject(q), "mlx5_0/1->10.0.0.7");
  EXPECT_EQ(subjectPort(measureSubject(q)), "mlx5_0/1");
  EXPECT_EQ(subjectPort("node"), "node");
  EXPECT_EQ(connectionText(q).rfind("mlx5_0/1 -> 10.0.0.7:19000 (verbs RC, `rdmabench server` on "
                                    "the peer",
                                    0),
            0u);
  q.peer = "fe80::1";
  EXPECT_NE(connectionText(q).find("-> [fe80::1]:19000"), std::string::npos);
  // libfabric runs are a series of their own, on the same port.
  q.peer.clear();
  q.transport = "ofi";
  q.provider = "verbs;ofi_rxm";
  EXPECT_EQ(measureSubject(q), "mlx5_0/1 ofi:verbs;ofi_rxm");
  EXPECT_EQ(subjectPort(measureSubject(q)), "mlx5_0/1");
  EXPECT_EQ(connectionText(q),
            "mlx5_0/1 -> mlx5_0/1 (one port to itself, ofi verbs;ofi_rxm, loopback server on "
            "127.0.0.1)");
  q.peer = "ref1";
  EXPECT_EQ(measureSubject(q), "mlx5_0/1->ref1 ofi:verbs;ofi_rxm");
  EXPECT_EQ(subjectPort(measureSubject(q)), "mlx5_0/1");
}

TEST(CheckOptions, Providers) {
  EXPECT_EQ(parseCheckCommand({}).providers, std::vector<std::string>{"verbs;ofi_rxm"});
  EXPECT_EQ(parseCheckCommand({"--provider", "verbs", "--provider", "tcp;ofi_rxm"}).providers,
            (std::vector<std::string>{"verbs", "tcp;ofi_rxm"}));
  EXPECT_TRUE(parseCheckCommand({"--skip", "ofi"}).skips("ofi"));
  EXPECT_NE(optionError({"--provider", "a,b"}).find("--provider 'a,b': expected one libfabric"),
            std::string::npos);
}

TEST(CheckChild, MergesLinesAndKillsAtTheDeadline) {
  ChildOutput ok = runInChild("test child", 30'000, [](int fd) {
    writeJsonLine(fd, {{"phase", "a"}, {"x", 1}});
    writeJsonLine(fd, {{"phase", "done"}});
  });
  EXPECT_TRUE(ok.finished);
  EXPECT_EQ(ok.merged.value("phase", ""), "done");
  EXPECT_EQ(ok.merged.value("x", 0), 1);
  // A child that overruns is killed with everything it forked: the grandchild's line never comes.
  const auto t0 = std::chrono::steady_clock::now();
  ChildOutput cut = runInChild("test child", 300, [](int fd) {
    writeJsonLine(fd, {{"phase", "sleeping"}});
    if (::fork() == 0) {
      ::sleep(30);
      writeJsonLine(fd, {{"late", true}});
      ::_exit(0);
    }
    ::sleep(30);
  });
  EXPECT_FALSE(cut.finished);
  EXPECT_FALSE(cut.interrupted);
  EXPECT_EQ(cut.merged.value("phase", ""), "sleeping");
  EXPECT_FALSE(cut.merged.contains("late"));
  // Not a timing assertion: 30 s is what a failure to kill would cost.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  ChildOutput thrown = runInChild("test child", 30'000, [](int) { throw Error("boom"); });
  EXPECT_TRUE(thrown.finished);
  EXPECT_EQ(thrown.merged.value("error", ""), "boom");
}

TEST(CheckNoise, JsonRoundTripAndBadDocuments) {
  NoiseStep n;
  n.seconds = 3;
  n.meanStolenPct = 12.5;
  n.cores.push_back({1, 25, 300, 812.5, {"hog (pid 7): 24% of cpu 1"}});
  n.findings = {"cpu 1 stolen"};
  n.report = {{"tool", "rdmabench"}};
  const NoiseStep back = noiseStepFromJson(toJson(n));
  EXPECT_EQ(toJson(back), toJson(n));
  EXPECT_THROW(noiseStepFromJson(nlohmann::json::array()), ProtocolError);
  nlohmann::json bad = toJson(n);
  bad["cores"][0]["stolen_pct"] = 250;
  EXPECT_THROW(noiseStepFromJson(bad), ProtocolError);
}

TEST(CheckOptions, DefaultsAndRanges) {
  CheckCommand c = parseCheckCommand({});
  EXPECT_EQ(c.format, "table");
  // -o FILE.json without -f writes JSON, not a table into a .json file (issue 35 item 5).
  EXPECT_EQ(parseCheckCommand({"-o", "node.json"}).format, "json");
  EXPECT_DOUBLE_EQ(c.budgetSec, 45);
  EXPECT_DOUBLE_EQ(c.rule.k, 3);
  EXPECT_DOUBLE_EQ(c.rule.marginPct, 10);
  EXPECT_EQ(c.rule.minRuns, 5u);
  c = parseCheckCommand({"--budget", "30", "--expect", "lat_p99<=3us", "--expect", "bw>=90%link",
                         "--skip", "noise", "-d", "rxe0", "--mad-k", "2.5", "--margin", "20"});
  EXPECT_DOUBLE_EQ(c.budgetSec, 30);
  EXPECT_EQ(c.expects.size(), 2u);
  EXPECT_TRUE(c.skips("noise"));
  EXPECT_FALSE(c.skips("measure"));
  EXPECT_EQ(c.devices, std::vector<std::string>{"rxe0"});
  EXPECT_NE(optionError({"--budget", "2"}).find("--budget 2: out of range 5..3600"),
            std::string::npos);
  EXPECT_NE(optionError({"--skip", "x"}).find("--skip x: no such step"), std::string::npos);
  EXPECT_NE(optionError({"--min-runs", "1"}).find("--min-runs 1: out of range 2..1000"),
            std::string::npos);
  EXPECT_NE(optionError({"--min-runs", "40"}).find("--window 30: smaller than --min-runs 40"),
            std::string::npos);
  EXPECT_NE(optionError({"-f", "csv"}).find("--format csv"), std::string::npos);
  EXPECT_NE(optionError({"--counter-limit", "x=1"}).find("--counter-limit x=1: expected NAME=N"),
            std::string::npos);
  EXPECT_NE(
      optionError({"--counter-limit", "hw_counters/a=-1"}).find("--counter-limit hw_counters/a"),
      std::string::npos);
  EXPECT_EQ(
      parseCheckCommand({"--counter-limit", "hw_counters/a=7"}).counterLimits.at("hw_counters/a"),
      7u);
}

}  // namespace
}  // namespace rdmabench::check
