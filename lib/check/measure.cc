#include "check/measure.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <functional>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "check/child.h"
#include "common/desched.h"
#include "common/error.h"
#include "common/json_read.h"
#include "engine/pair.h"
#include "report/ab_report.h"
#include "transport/info_json.h"
#include "transport/probe.h"

namespace rdmabench::check {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

engine::ClientOptions clientOptions(const MeasureRequest& r, bool latency, int64_t timeoutMs) {
  engine::ClientOptions o;
  engine::TestSpec& s = o.spec;
  s.transport = r.transport;
  s.test = latency ? engine::TestKind::kLatency : engine::TestKind::kBandwidth;
  // perftest's ib_send_lat, ib_write_bw; over libfabric, send/receive both (what MPI's
  // eager path uses: fi_pingpong, osu_bw over ofi_rxm).
  s.op = latency || r.transport == "ofi" ? engine::Op::kSend : engine::Op::kWrite;
  s.sizes = {latency ? r.latBytes : r.bwBytes};
  s.durationSec = latency ? r.latSec : r.bwSec;
  // A short latency warmup (OSU's is 100 iterations; -D takes at least 10 as its calibration):
  // the timed loop, not the warmup, gets the budget's time; on a slow link (a TCG VM pair: 50 ms
  // a round trip) OSU's warmup alone would take most of a step's share. The bandwidth loop keeps
  // the engine's (10 windows under -D).
  if (latency) s.warmup = 20;
  s.check = true;
  s.timeoutMs = timeoutMs;
  o.localDevice.device = r.clientDevice;
  o.localDevice.ibPort = r.clientPort;
  o.localDevice.provider = s.serverDevice.provider = r.provider;
  o.connectTimeoutMs = timeoutMs;
  if (!r.peer.empty()) {
    o.host = r.peer;
    o.port = r.peerPort;
    o.token = r.token;
  } else {
    s.serverDevice.device = r.serverDevice;
    s.serverDevice.ibPort = r.serverPort;
  }
  // The loopback client and its server both busy-poll: on one allowed CPU each would time the
  // other's spinning (as `rdmabench lat` decides it). Against a peer, a lone CPU busy-polling
  // would keep the kernel's own work for the device (soft-RoCE's) off it until a timer tick.
  if (allowedCpuCount() < 2) {
    o.localDevice.progress = transport::ProgressMode::kEvent;
    if (r.peer.empty()) s.serverDevice.progress = transport::ProgressMode::kEvent;
  }
  s.validate();
  return o;
}

// Why libfabric cannot measure this device here ("" = it can): not loadable, or `provider`
// lists no domain named like the device. Runs in the child (it loads libfabric).
std::string ofiAbsent(const MeasureRequest& r) {
  const transport::BackendStatus st = transport::probeBackend("ofi");
  if (!st.built || !st.usable) return "libfabric: " + st.reason;
  std::vector<std::string> seen;
  for (const json& p : st.details.value("providers", json::array())) {
    if (p.value("provider", std::string()) != r.provider) continue;
    for (const json& d : p.value("domains", json::array())) {
      seen.push_back(d.value("domain", std::string()));
      if (seen.back() == r.clientDevice) return "";
    }
  }
  return seen.empty() ? fmt::format("libfabric lists no provider {}", r.provider)
                      : fmt::format("libfabric's {} has no domain {} (domains: {})", r.provider,
                                    r.clientDevice, fmt::join(seen, ", "));
}

// One timed loop in the measuring child: its phase line, then its figures or {"error"}; false
// after an error.
bool runPhase(const MeasureRequest& r, bool latency, int64_t timeoutMs, int fd) {
  report::RunCapture cap;
  report::CaptureReporter reporter(cap);
  writeJsonLine(fd, {{"phase", latency ? "latency" : "bandwidth"}});
  try {
    engine::runClient(clientOptions(r, latency, timeoutMs), reporter);
  } catch (const std::exception& e) {
    writeJsonLine(fd,
                  {{"error", fmt::format("{}: {}", latency ? "latency" : "bandwidth", e.what())}});
    return false;
  }
  json out = json::object();
  if (latency) out["local"] = transport::toJson(cap.info.local);
  for (const report::Row& row : cap.rows) {
    if (latency && row.latency) {
      out["lat"] = {{"p50_us", row.latency->p50},
                    {"p99_us", row.latency->p99},
                    {"iterations", row.iterations},
                    {"wrong", row.wrong.value_or(0)}};
    } else if (!latency) {
      out["bw"] = {{"mb_s", row.megabytesPerSec},
                   {"messages", row.messages},
                   {"wrong", row.wrong.value_or(0)}};
    }
  }
  writeJsonLine(fd, out);
  return true;
}

// Runs `body` (which ends with _exit(status)) in a forked child of this process group and
// returns its exit status, or -1 when it died of a signal. The measuring child's deadline kill
// (of the whole group) reaches it. libfabric needs it: initialised in a process that then forks
// the loopback server, it left that server spinning (its providers' state and threads do not
// survive fork), so the probe and each libfabric loop get a process of their own.
int inChild(const std::function<void()>& body) {
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) throw SystemError("check: fork (libfabric run)", errno);
  if (pid == 0) {
    try {
      body();
    } catch (...) {
    }
    ::_exit(1);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// In the measuring child: both loops (or the one not skipped), one JSON line to `fd` as each
// phase starts and ends, then {"phase": "done"}, so a run killed at its deadline still reports
// what finished and which phase it was in. libfabric: a probe first (absent = {"skipped"}).
void runBoth(const MeasureRequest& r, int64_t timeoutMs, int fd) {
  const bool ofi = r.transport == "ofi";
  if (ofi) {
    const int probe = inChild([&] {
      const std::string absent = ofiAbsent(r);
      if (!absent.empty()) writeJsonLine(fd, {{"skipped", absent}, {"phase", "done"}});
      ::_exit(absent.empty() ? 0 : 3);
    });
    if (probe == 3) return;
    if (probe != 0) {
      writeJsonLine(fd, {{"error", "the libfabric probe died"}});
      return;
    }
  }
  for (bool latency : {true, false}) {
    if (!(latency ? r.lat : r.bw)) continue;
    if (!ofi) {
      if (!runPhase(r, latency, timeoutMs, fd)) return;
      continue;
    }
    const int st = inChild([&] { ::_exit(runPhase(r, latency, timeoutMs, fd) ? 0 : 2); });
    if (st == -1 || st == 1)
      writeJsonLine(fd, {{"error", fmt::format("{}: the libfabric run died",
                                               latency ? "latency" : "bandwidth")}});
    if (st != 0) return;
  }
  writeJsonLine(fd, {{"phase", "done"}});
}

void fillFrom(const json& j, Measurement& m) {
  const std::string what = "check measurement";
  m.error = jsonString(j, "error", what, "", 4096);
  m.skipped = jsonString(j, "skipped", what, "", 4096);
  if (const json* l = jsonObject(j, "lat", what)) {
    m.latDone = true;
    m.latP50Us = jsonDouble(*l, "p50_us", what, 0, 0, 1e12);
    m.latP99Us = jsonDouble(*l, "p99_us", what, 0, 0, 1e12);
    m.latIterations = jsonUint(*l, "iterations", what, 0, 0, UINT64_MAX);
    m.latWrong = jsonUint(*l, "wrong", what, 0, 0, UINT64_MAX);
  }
  if (const json* b = jsonObject(j, "bw", what)) {
    m.bwDone = true;
    m.bwMBs = jsonDouble(*b, "mb_s", what, 0, 0, 1e12);
    m.bwMessages = jsonUint(*b, "messages", what, 0, 0, UINT64_MAX);
    m.bwWrong = jsonUint(*b, "wrong", what, 0, 0, UINT64_MAX);
  }
  if (const json* l = jsonObject(j, "local", what)) m.local = *l;
}

}  // namespace

std::string measureSubject(const MeasureRequest& r) {
  std::string s = fmt::format("{}/{}", r.clientDevice, r.clientPort);
  if (!r.peer.empty()) s += "->" + r.peer;
  if (r.transport == "ofi") s += " ofi:" + r.provider;
  return s;
}

std::string subjectPort(const std::string& subject) {
  return subject.substr(0, std::min(subject.find("->"), subject.find(' ')));
}

std::string connectionText(const MeasureRequest& r) {
  const std::string a = fmt::format("{}/{}", r.clientDevice, r.clientPort);
  const std::string how = r.transport == "ofi" ? "ofi " + r.provider : "verbs RC";
  if (!r.peer.empty())
    return fmt::format("{} -> {}:{} ({}, `rdmabench server` on the peer, its own device)", a,
                       r.peer.find(':') != std::string::npos ? "[" + r.peer + "]" : r.peer,
                       r.peerPort, how);
  const std::string b = fmt::format("{}/{}", r.serverDevice, r.serverPort);
  const char* kind = a == b                             ? "one port to itself"
                     : r.clientDevice == r.serverDevice ? "two ports of one device"
                                                        : "two devices";
  return fmt::format("{} -> {} ({}, {}, loopback server on 127.0.0.1)", a, b, kind, how);
}

json Measurement::toJson() const {
  json j = {{"subject", subject},     {"connection", connection}, {"peer", peer},
            {"transport", transport}, {"provider", provider},     {"skipped", skipped},
            {"seconds", seconds},     {"error", error},           {"cut", cut},
            {"local", local}};
  if (latDone)
    j["lat"] = {{"p50_us", latP50Us},
                {"p99_us", latP99Us},
                {"iterations", latIterations},
                {"wrong", latWrong}};
  if (bwDone) j["bw"] = {{"mb_s", bwMBs}, {"messages", bwMessages}, {"wrong", bwWrong}};
  return j;
}

Measurement measure(const MeasureRequest& r) {
  Measurement m;
  m.subject = measureSubject(r);
  m.connection = connectionText(r);
  m.peer = r.peer;
  m.transport = r.transport;
  m.provider = r.provider;
  const auto start = Clock::now();
  // Leave the engine a second to report its own timeout before the child is killed.
  const ChildOutput out = runInChild("check measurement", r.deadlineMs, [&](int fd) {
    runBoth(r, std::max<int64_t>(1000, r.deadlineMs - 1000), fd);
  });
  const json& got = out.merged;
  try {
    fillFrom(got, m);
  } catch (const std::exception& e) {
    m.error = fmt::format("no result from the measuring process ({})", e.what());
  }
  if (!out.parseError.empty() && m.error.empty())
    m.error = fmt::format("no result from the measuring process ({})", out.parseError);
  if (!out.finished) {
    m.cut = !out.interrupted;
    m.error = out.interrupted ? std::string("interrupted")
                              : fmt::format("killed at its deadline of {:.1f} s during the {} run",
                                            static_cast<double>(r.deadlineMs) / 1e3,
                                            got.value("phase", std::string("first")));
  } else if (got.value("phase", std::string()) != "done" && m.error.empty()) {
    m.error = WIFSIGNALED(out.status)
                  ? fmt::format("the measuring process died of signal {} during the {} run",
                                WTERMSIG(out.status), got.value("phase", std::string("first")))
                  : std::string("no result from the measuring process");
  }
  m.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return m;
}

}  // namespace rdmabench::check
