#include "check/measure.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "common/desched.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/json_read.h"
#include "engine/pair.h"
#include "report/ab_report.h"
#include "transport/info_json.h"

namespace rdmabench::check {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

engine::ClientOptions clientOptions(const MeasureRequest& r, bool latency, int64_t timeoutMs) {
  engine::ClientOptions o;
  engine::TestSpec& s = o.spec;
  s.transport = "verbs";
  s.test = latency ? engine::TestKind::kLatency : engine::TestKind::kBandwidth;
  s.op = latency ? engine::Op::kSend : engine::Op::kWrite;  // perftest's ib_send_lat, ib_write_bw
  s.sizes = {latency ? r.latBytes : r.bwBytes};
  s.durationSec = latency ? r.latSec : r.bwSec;
  s.check = true;
  s.timeoutMs = timeoutMs;
  s.serverDevice.device = r.serverDevice;
  s.serverDevice.ibPort = r.serverPort;
  o.localDevice.device = r.clientDevice;
  o.localDevice.ibPort = r.clientPort;
  o.connectTimeoutMs = timeoutMs;
  // The loopback client and its server both busy-poll: on one allowed CPU each would time the
  // other's spinning (as `rdmabench lat` decides it).
  if (allowedCpuCount() < 2)
    o.localDevice.progress = s.serverDevice.progress = transport::ProgressMode::kEvent;
  s.validate();
  return o;
}

void writeLine(int fd, const json& j) {
  const std::string text = j.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0 && errno != EINTR) return;
    if (n > 0) done += static_cast<size_t>(n);
  }
}

// In the child: both runs, one JSON line to `fd` as each phase starts and ends, so a run killed
// at its deadline still reports what finished and which phase it was in.
void runBoth(const MeasureRequest& r, int64_t timeoutMs, int fd) {
  for (bool latency : {true, false}) {
    report::RunCapture cap;
    report::CaptureReporter reporter(cap);
    writeLine(fd, {{"phase", latency ? "latency" : "bandwidth"}});
    try {
      engine::runClient(clientOptions(r, latency, timeoutMs), reporter);
    } catch (const std::exception& e) {
      writeLine(fd,
                {{"error", fmt::format("{}: {}", latency ? "latency" : "bandwidth", e.what())}});
      return;
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
    writeLine(fd, out);
  }
}

// The child's lines merged into one object (members of later lines win); ProtocolError for a
// line that is not a JSON object.
json mergeLines(const std::string& text) {
  json all = json::object();
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find('\n', i);
    if (j == std::string::npos) break;  // a line cut by the kill: left out
    const json one = parseUntrustedJson(std::string_view(text).substr(i, j - i),
                                        "check measurement", 8, 1u << 20);
    if (!one.is_object()) throw ProtocolError("check measurement: a line is not an object");
    all.update(one);
    i = j + 1;
  }
  return all;
}

// Reads the child's document until EOF or the deadline; false at the deadline or on Ctrl-C /
// SIGTERM (the caller kills the child either way). Polls in slices of 100 ms so an interrupt is
// seen even where the signal does not interrupt poll().
bool readUntil(int fd, Clock::time_point until, std::string& text) {
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0 || interrupted()) return false;
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 100)));
    if (n == 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return true;  // the document so far decides
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return true;
    if (text.size() < (1u << 20)) text.append(buf, static_cast<size_t>(got));
  }
}

void fillFrom(const json& j, Measurement& m) {
  const std::string what = "check measurement";
  m.error = jsonString(j, "error", what, "", 4096);
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

std::string connectionText(const MeasureRequest& r) {
  const std::string a = fmt::format("{}/{}", r.clientDevice, r.clientPort);
  const std::string b = fmt::format("{}/{}", r.serverDevice, r.serverPort);
  const char* kind = a == b                             ? "one port to itself"
                     : r.clientDevice == r.serverDevice ? "two ports of one device"
                                                        : "two devices";
  return fmt::format("{} -> {} ({}, verbs RC, loopback server on 127.0.0.1)", a, b, kind);
}

json Measurement::toJson() const {
  json j = {{"subject", subject}, {"connection", connection}, {"transport", transport},
            {"seconds", seconds}, {"error", error},           {"cut", cut},
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
  m.subject = fmt::format("{}/{}", r.clientDevice, r.clientPort);
  m.connection = connectionText(r);
  const auto start = Clock::now();
  const auto until = start + std::chrono::milliseconds(r.deadlineMs);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw SystemError("check: pipe", errno);
  std::cout.flush();  // the child must not write out a copy of what the parent buffered
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw SystemError("check: fork (measurement)", err);
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::setpgid(0, 0);  // the loopback server it forks joins this group: one kill ends both
    try {
      // Leave the engine a second to report its own timeout before the parent kills us.
      runBoth(r, std::max<int64_t>(1000, r.deadlineMs - 1000), fds[1]);
    } catch (const std::exception& e) {
      writeLine(fds[1], {{"error", e.what()}});
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  ::setpgid(pid, pid);  // also from here: no race with the child's own call
  std::string text;
  const bool finished = readUntil(fds[0], until, text);
  ::close(fds[0]);
  if (!finished) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  json got;
  try {
    got = mergeLines(text);
    fillFrom(got, m);
  } catch (const std::exception& e) {
    m.error = fmt::format("no result from the measuring process ({})", e.what());
  }
  if (!finished) {
    m.cut = !interrupted();
    m.error = interrupted() ? std::string("interrupted")
                            : fmt::format("killed at its deadline of {:.1f} s during the {} run",
                                          static_cast<double>(r.deadlineMs) / 1e3,
                                          got.value("phase", std::string("first")));
  } else if (!got.contains("bw") && m.error.empty()) {
    m.error = WIFSIGNALED(status)
                  ? fmt::format("the measuring process died of signal {} during the {} run",
                                WTERMSIG(status), got.value("phase", std::string("first")))
                  : std::string("no result from the measuring process");
  }
  m.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return m;
}

}  // namespace rdmabench::check
