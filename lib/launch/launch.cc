#include "launch/launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/error.h"
#include "common/host_info.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "common/token.h"
#include "launch/fold.h"
#include "launch/ifname.h"
#include "launch/limits.h"

namespace rdmabench::launch {

Env processEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

void parseHostPort(const std::string& text, uint16_t defaultPort, std::string& host,
                   uint16_t& port) {
  std::string portText;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos)
      throw UsageError(fmt::format("--rendezvous {}: missing ']'", text));
    host = text.substr(1, close - 1);
    if (close + 1 < text.size() && text[close + 1] == ':') portText = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon != std::string::npos && text.find(':') == colon) {
      host = text.substr(0, colon);
      portText = text.substr(colon + 1);
    } else {
      host = text;
    }
  }
  port = defaultPort;
  if (!portText.empty()) {
    char* end = nullptr;
    long p = std::strtol(portText.c_str(), &end, 10);
    if (*end != '\0' || p < 1 || p > 65535)
      throw UsageError(fmt::format("--rendezvous {}: port out of range 1..65535", text));
    port = static_cast<uint16_t>(p);
  }
}

std::vector<std::string> expandHostList(std::string_view list) {
  std::vector<std::string> out;
  size_t i = 0;
  auto bad = [&](const char* why) {
    return UsageError(fmt::format("host list '{}': {}", list, why));
  };
  while (i < list.size()) {
    // One item: prefix, optional [ranges], optional suffix, up to a top-level comma.
    std::string prefix;
    while (i < list.size() && list[i] != ',' && list[i] != '[')
      prefix += list[i++];
    if (i < list.size() && list[i] == '[') {
      size_t close = list.find(']', i);
      if (close == std::string::npos) throw bad("missing ']'");
      std::string_view ranges = list.substr(i + 1, close - i - 1);
      i = close + 1;
      std::string suffix;
      while (i < list.size() && list[i] != ',')
        suffix += list[i++];
      size_t start = 0;
      while (start <= ranges.size()) {
        size_t comma = ranges.find(',', start);
        std::string_view r = ranges.substr(
            start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        size_t dash = r.find('-');
        std::string a(r.substr(0, dash)),
            b(dash == std::string_view::npos ? r.substr(0, dash) : r.substr(dash + 1));
        if (a.empty() || b.empty() || a.find_first_not_of("0123456789") != std::string::npos ||
            b.find_first_not_of("0123456789") != std::string::npos)
          throw bad("bad range");
        unsigned long lo = std::stoul(a), hi = std::stoul(b);
        if (hi < lo || hi - lo > 100000) throw bad("bad range");
        for (unsigned long v = lo; v <= hi; ++v)
          out.push_back(prefix + fmt::format("{:0{}}", v, a.size()) + suffix);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
    } else if (!prefix.empty()) {
      out.push_back(prefix);
    }
    if (i < list.size() && list[i] == ',') ++i;
  }
  return out;
}

std::string parseNodeAddr(std::string_view line) {
  size_t p = line.find("NodeAddr=");
  if (p == std::string_view::npos) return "";
  p += 9;
  size_t e = line.find_first_of(" \t\n", p);
  return std::string(line.substr(p, e == std::string_view::npos ? std::string_view::npos : e - p));
}

std::string resolveNodeAddress(const std::string& node) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(node.c_str(), nullptr, &hints, &res) == 0) {
    freeaddrinfo(res);
    return node;
  }
  // Emulated or DNS-less nodes: ask Slurm for the node's NodeAddr.
  std::string cmd = fmt::format("scontrol show node -o '{}' 2>/dev/null", node);
  std::string out;
  if (node.find('\'') == std::string::npos) {
    if (FILE* f = popen(cmd.c_str(), "r")) {
      char buf[4096];
      size_t n;
      while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        out.append(buf, n);
      pclose(f);
    }
  }
  std::string addr = parseNodeAddr(out);
  if (addr.empty() || addr == "(null)")
    throw UsageError(fmt::format(
        "rank 0's node '{}' does not resolve and `scontrol show node` gave no NodeAddr; give "
        "--rendezvous HOST:PORT",
        node));
  return addr;
}

uint16_t portForJob(uint64_t jobId, uint64_t stepId) {
  return static_cast<uint16_t>(20000 + (jobId * 64 + stepId) % 20000);
}

RendezvousSpec parseRendezvous(const std::string& text) {
  RendezvousSpec r;
  if (text.empty() || text == "auto") return r;
  if (text == "pmix") {
    r.kind = RendezvousKind::Pmix;
  } else if (text.rfind("file:", 0) == 0) {
    r.kind = RendezvousKind::File;
    r.path = text.substr(5);
    if (r.path.empty()) throw UsageError("--rendezvous file:PATH: the directory is missing");
  } else {
    r.kind = RendezvousKind::Tcp;
    r.address = text.rfind("tcp://", 0) == 0 ? text.substr(6) : text;
    if (r.address.empty()) throw UsageError("--rendezvous tcp://HOST[:PORT]: the host is missing");
  }
  return r;
}

namespace {

std::string describeStatus(int status) {
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return fmt::format("killed by SIG{}", name ? name : std::to_string(WTERMSIG(status)).c_str());
  }
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  return "stopped";
}

// In a forked rank: the kernel sends SIGTERM when the launcher dies (a kill -9 of the launcher
// left its ranks running with parent 1), which ends the rank's waits naming the launcher
// (common/interrupt.h launcherDeath). A launcher that died between fork() and prctl() is caught
// by the getppid() check right after.
void dieWithLauncher(pid_t launcher, int rank) {
  setLauncherPid(launcher);
  // Failing prctl() (it does not) would leave the store connection's closing as the signal.
  (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != launcher) {
    const std::string line =
        fmt::format("rdmabench: error: rank {}: launcher (pid {}) died before the rank started\n",
                    rank, launcher);
    if (::write(STDERR_FILENO, line.data(), line.size()) < 0) {
      // Nothing left to tell.
    }
    _exit(1);
  }
}

}  // namespace

namespace {

// The local ranks of runLocal after the fork: reaps them, signals them when the run fails, is
// interrupted or overruns its limits, and reports what it signalled.
class LocalSupervisor {
 public:
  LocalSupervisor(const std::map<pid_t, int>& children, const LocalRunLimits& limits)
      : limits_(limits), start_(nowNs()) {
    for (auto& [p, rank] : children)
      live_.emplace(p, Child{rank});
  }

  bool done() const { return live_.empty(); }

  // Reaps every rank that exited or stopped since the last call.
  void reap() {
    for (;;) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG | WUNTRACED | WCONTINUED);
      if (pid <= 0) break;
      auto it = live_.find(pid);
      if (it == live_.end()) continue;
      if (WIFSTOPPED(status) || WIFCONTINUED(status)) {
        it->second.stopped = WIFSTOPPED(status);
        continue;
      }
      const int rank = it->second.rank;
      const bool signalledByUs = it->second.termSentNs != 0;
      live_.erase(it);
      int code = WIFEXITED(status) ? WEXITSTATUS(status)
                                   : (WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1);
      if (!firstExitNs_) firstExitNs_ = nowNs();
      if (code != 0 && result_ == 0) result_ = code;
      // A usage error (2) is always its own rank's cause; the peers that learn of it through the
      // store exit 1 and, on a loaded host, may be reaped first (test_coll_np.sh saw exit 1 for
      // `--cpu 0,0,99,0`). The run's status is the cause's.
      if (code == 2 && result_ == 1 && !killedRank_) result_ = code;
      // A rank killed by a signal the launcher did not send is the cause whenever it happens:
      // its peers learn of it through the store within milliseconds and exit 1, and waitpid()
      // may reap them before it. It cannot print its own error, so the launcher does, and the
      // run's status is its 128 + signal (docs/rendezvous.md "Failure").
      if (WIFSIGNALED(status) && !signalledByUs && !killedRank_) {
        killedRank_ = true;
        result_ = code;
        log::write(fmt::format("rdmabench: launcher: rank {} (pid {}) failed first: {}\n", rank,
                               pid, describeStatus(status)));
      }
    }
  }

  // SIGTERM to the ranks a failure, the deadline or the first exit's limit ends; SIGKILL to
  // those still alive limits.graceMs after their SIGTERM.
  void enforce() {
    const int64_t now = nowNs();
    // A stopped rank cannot notice its peers failing: after a failure it is ended at once.
    if (result_ != 0)
      for (auto& [p, c] : live_)
        if (c.stopped)
          terminate(p, c,
                    fmt::format("rank {} (pid {}) is stopped (SIGSTOP) while the run has failed",
                                c.rank, p));
    if (limits_.deadlineMs > 0 && now - start_ > limits_.deadlineMs * 1'000'000)
      terminateAll(fmt::format("the run's deadline of {:.1f} s passed",
                               static_cast<double>(limits_.deadlineMs) / 1000));
    if (limits_.afterFirstExitMs > 0 && firstExitNs_ &&
        now - firstExitNs_ > limits_.afterFirstExitMs * 1'000'000)
      terminateAll(fmt::format("rank(s) still running {:.1f} s after the first one exited",
                               static_cast<double>(limits_.afterFirstExitMs) / 1000));
    for (auto& [p, c] : live_)
      if (c.termSentNs && !c.killSent && now - c.termSentNs > limits_.graceMs * 1'000'000) {
        c.killSent = true;
        killed_.push_back(fmt::format("{}", c.rank));
        kill(p, SIGKILL);
      }
  }

  void terminateAll(const std::string& why) {
    for (auto& [p, c] : live_)
      terminate(p, c, why);
  }

  // The run's status; logs which ranks were signalled and why (then at least 1).
  int finish() {
    if (!termed_.empty()) {
      auto join = [](const std::vector<std::string>& v) {
        std::string out;
        for (const auto& x : v)
          out += (out.empty() ? "" : ", ") + x;
        return out;
      };
      log::write(fmt::format(
          "rdmabench: error: launcher: {}: sent SIGTERM to rank(s) {}{}\n", reason_, join(termed_),
          killed_.empty()
              ? ""
              : fmt::format(", then SIGKILL to rank(s) {} still alive after {:.1f} s",
                            join(killed_), static_cast<double>(limits_.graceMs) / 1000)));
      if (result_ == 0) result_ = 1;
    }
    return result_;
  }

 private:
  struct Child {
    int rank;
    bool stopped = false;    // reported stopped by waitpid(WUNTRACED)
    int64_t termSentNs = 0;  // 0 = not signalled yet
    bool killSent = false;
  };

  void terminate(pid_t p, Child& c, const std::string& why) {
    if (c.termSentNs) return;
    if (reason_.empty()) reason_ = why;
    c.termSentNs = nowNs();
    termed_.push_back(fmt::format("{}", c.rank));
    kill(p, SIGTERM);
    kill(p, SIGCONT);  // a stopped rank acts on SIGTERM only once continued
  }

  const LocalRunLimits& limits_;
  const int64_t start_;
  std::map<pid_t, Child> live_;
  int result_ = 0;
  std::string reason_;       // why ranks were signalled (the first cause only)
  int64_t firstExitNs_ = 0;  // 0 = no rank exited yet
  bool killedRank_ = false;  // a rank died of a signal the launcher did not send
  std::vector<std::string> termed_, killed_;
};

// Forks local rank r..np-1 of runLocal, serving the store between forks; returns pid -> rank.
// SystemError (after killing the ranks forked so far) when a fork fails.
std::map<pid_t, int> forkRanks(int np, const RankInfo& base,
                               const std::function<int(const RankInfo&)>& body,
                               rendezvous::TcpStoreServer& server, StderrFolder& folder,
                               const std::string& token) {
  std::map<pid_t, int> children;
  const pid_t launcher = getpid();
  for (int r = 0; r < np; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      int e = errno;
      for (auto& [p, rank] : children)
        kill(p, SIGKILL);
      for (auto& [p, rank] : children)
        waitpid(p, nullptr, 0);
      throw SystemError(fmt::format("--np {}: fork of local rank {}{}", np, r,
                                    e == EAGAIN ? " (process limit? check `ulimit -u`)" : ""),
                        e);
    }
    if (pid == 0) {
      dieWithLauncher(launcher, r);
      // The rank's own stderr, for its last line should the launcher (the folding pipe's reader)
      // die first (common/interrupt.h setLauncherStderr).
      setLauncherStderr(::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3));
      folder.redirectChild(r);
      server.closeInChild();
      RankInfo info = base;
      info.rank = r;
      info.worldSize = np;
      info.localRank = r;
      info.localRanks = np;  // the caller may have chosen np after detect()
      info.rendezvousHost = "127.0.0.1";
      info.rendezvousPort = server.port();
      info.hostsServer = false;
      info.token = token;
      info.slurmSecret = false;  // the launcher's own token, not the Slurm job's
      int rc = 1;
      try {
        rc = body(info);
      } catch (...) {
        rc = 1;
      }
      std::cout.flush();
      log::flush();
      _exit(rc);
    }
    children[pid] = r;
    // Serve while forking: the ranks forked first join and publish meanwhile instead of all
    // queuing at once after the last fork (~10 ms per fork here: 10 s for 1024 ranks).
    server.serve(0);
  }
  return children;
}

}  // namespace

int runLocal(int np, const RankInfo& base, const std::function<int(const RankInfo&)>& body,
             const LocalRunLimits& limits) {
  // Strangers on this host cannot join the local ranks' store: without a token of the user's, a
  // random one goes to the forked ranks only.
  const std::string token = base.token.empty() ? randomToken() : base.token;
  ensureDescriptors(storeServerDescriptors(static_cast<uint64_t>(np)), fmt::format("--np {}", np));
  // Only forked ranks holding the token reach this loopback server; with many more ranks than
  // cores a rank may need longer than the default 10 s between connecting and joining.
  rendezvous::StoreLimits storeLimits;
  storeLimits.handshakeMs = std::max(storeLimits.handshakeMs, limits.handshakeMs);
  rendezvous::TcpStoreServer server("127.0.0.1", 0, base.runId, storeLimits, token);
  std::cout.flush();
  log::flush();
  StderrFolder folder(np);  // the ranks' identical stderr lines, printed once (launch/fold.h)
  LocalSupervisor ranks(forkRanks(np, base, body, server, folder, token), limits);
  folder.start();
  while (!ranks.done()) {
    server.serve(20);
    if (interrupted()) ranks.terminateAll(fmt::format("{} received", interruptName()));
    ranks.reap();
    if (ranks.done()) break;
    ranks.enforce();
  }
  // Drain whatever the children sent last (byes) so nothing is left half-read.
  server.serve(0);
  folder.finish();
  int result = ranks.finish();
  // Ctrl-C / SIGTERM to the launcher: the run's status is "interrupted" (4, docs/cli.md),
  // whichever rank's status was reaped first.
  if (interrupted()) result = exitCodeFor(InterruptedError("interrupted"));
  return result;
}

}  // namespace rdmabench::launch
