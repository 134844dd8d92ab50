// `rdmabench server`: the daemon that accepts clients and runs each session in a child process
// (qperf / sshd style). The parent never opens a device or reads a client's bytes, so
// - handshakes run concurrently, each bounded by its own deadline (an idle connection costs a
//   sleeping child, never the next client's turn);
// - one test runs at a time: a second client is told at once "server busy: running ..." instead
//   of waiting in the backlog;
// - a provider crash or abort ends that session's child; the parent reports it in its log and to
//   the client, and keeps serving;
// - a session whose client has gone but which does not end (stopped with SIGSTOP, stuck) is
//   killed after a grace period, so it cannot hold the test slot for ever.
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "common/json_read.h"
#include "engine/pair.h"
#include "engine/session.h"
#include "rendezvous/channel.h"
#include "rendezvous/protocol.h"

namespace rdmabench::engine {
namespace detail {
namespace {

using rendezvous::Channel;

// Who holds the one test slot; lives in memory shared by the parent and every child.
struct TestSlot {
  std::atomic<int32_t> owner;  // pid of the child running a test, 0 = free
  std::atomic<uint32_t> described;
  char what[256];
};
static_assert(std::atomic<int32_t>::is_always_lock_free);

class SharedSlot {
 public:
  SharedSlot() {
    void* p =
        mmap(nullptr, sizeof(TestSlot), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw SystemError("mmap (server test slot)", errno);
    slot_ = new (p) TestSlot{};
  }
  ~SharedSlot() { munmap(slot_, sizeof(TestSlot)); }
  SharedSlot(const SharedSlot&) = delete;
  SharedSlot& operator=(const SharedSlot&) = delete;

  // In a child: takes the slot or throws "server busy" naming the running test. Waits up to
  // 1.5 s first, so back-to-back runs (A/B variants, scripts) do not collide with the previous
  // session's teardown.
  void take(const std::string& description) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
    for (;;) {
      int32_t expected = 0;
      if (slot_->owner.compare_exchange_strong(expected, static_cast<int32_t>(getpid()))) break;
      if (std::chrono::steady_clock::now() >= until) {
        std::string running = slot_->described.load() ? std::string(slot_->what) : "a test";
        throw Error(fmt::format("server busy: running {}, retry later", running));
      }
      throwIfInterrupted("a running test to end");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::snprintf(slot_->what, sizeof slot_->what, "%s", description.c_str());
    slot_->described.store(1);
  }
  // Frees the slot when `pid` holds it; true when it did.
  bool release(pid_t pid) {
    int32_t expected = static_cast<int32_t>(pid);
    if (slot_->owner.load() != expected) return false;
    slot_->described.store(0);
    return slot_->owner.compare_exchange_strong(expected, 0);
  }

 private:
  TestSlot* slot_ = nullptr;
};

struct Child {
  uint64_t session = 0;
  Channel channel;  // the parent's copy: tells the client when the child died
  std::optional<std::chrono::steady_clock::time_point> clientGoneAt;  // first seen hung up
  bool killed = false;  // killed by the parent as an orphan (endOrphans)
};

// How long a session may outlive its client's hang-up. A healthy session notices a closed
// control connection within ~70 ms (its watchdog) or at its next control read.
constexpr std::chrono::milliseconds kOrphanGrace{3000};

// "stopped (SIGSTOP)" or "running", from /proc/PID/stat, for the log.
std::string processState(pid_t pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  std::getline(stat, line);
  auto paren = line.rfind(')');
  if (paren != std::string::npos && paren + 2 < line.size() &&
      (line[paren + 2] == 'T' || line[paren + 2] == 't'))
    return "stopped (SIGSTOP)";
  return "running";
}

std::string signalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

class Daemon {
 public:
  Daemon(rendezvous::Listener& listener, const ServerOptions& so) : listener_(listener), so_(so) {}

  void run() {
    const auto start = std::chrono::steady_clock::now();
    bool emfileLogged = false;
    try {
      for (;;) {
        reap(false);
        endOrphans();
        if (so_.once && accepted_ > 0) {
          if (children_.empty()) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          throwIfInterrupted("the session to end");
          continue;
        }
        if (so_.once &&
            std::chrono::steady_clock::now() - start > std::chrono::milliseconds(60'000))
          throw TimeoutError(
              fmt::format("no client connected to port {} within 60 s", listener_.port()));
        std::optional<Channel> ch;
        try {
          ch.emplace(listener_.accept(Deadline(100)));
        } catch (const TimeoutError&) {
          continue;
        } catch (const SystemError& e) {
          // Out of descriptors: back off instead of spinning; sessions ending free some.
          if (e.code() != EMFILE && e.code() != ENFILE && e.code() != ENOBUFS && e.code() != ENOMEM)
            throw;
          if (!emfileLogged)
            std::cerr << fmt::format("rdmabench server: {}; refusing clients until sessions end\n",
                                     e.what());
          emfileLogged = true;
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          continue;
        }
        emfileLogged = false;
        admitConnection(std::move(*ch));
      }
    } catch (const InterruptedError&) {
      stopChildren();
      throw;
    }
    if (so_.once && failed_) throw Error("the session failed");
  }

 private:
  void admitConnection(Channel ch) {
    ++accepted_;
    if (children_.size() >= so_.maxConnections) {
      std::string msg =
          fmt::format("server busy: {} connections in progress (--max-connections {}), retry later",
                      children_.size(), so_.maxConnections);
      if (so_.verbose)
        std::cerr << fmt::format("rdmabench server: refused {}: {}\n", ch.peerName(), msg);
      tellPeer(ch, msg);
      return;
    }
    const uint64_t session = ++sessions_;
    std::cout.flush();
    std::cerr.flush();
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
      // The daemon's death ends its sessions (kill -9 of the server is a dead server for its
      // clients, as before sessions were forked); also when it died before this line.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
    }
    if (pid < 0) {
      tellPeer(ch, fmt::format("server cannot start a session: fork: {}", std::strerror(errno)));
      return;
    }
    if (pid == 0) childMain(ch, session);  // never returns
    children_.emplace(pid, Child{session, std::move(ch)});
  }

  [[noreturn]] void childMain(Channel& ch, uint64_t session) {
    // Only this session's connection stays open in the child.
    ::close(listener_.fd());
    for (auto& [pid, c] : children_)
      ::close(c.channel.fd());
    int rc = 0;
    try {
      serveSession(ch, so_, session, [&](const TestSpec& spec) {
        slot_.take(fmt::format("{} over {} for {} (session {})", spec.test,
                               escapeForLog(spec.transport, 64), ch.peerName(), session));
      });
      if (so_.verbose)
        std::cerr << fmt::format("rdmabench server: session {} from {} done\n", session,
                                 ch.peerName());
    } catch (const InterruptedError&) {
      tellPeer(ch, fmt::format("server interrupted ({})", interruptName()));
      rc = 4;
    } catch (const std::exception& e) {
      tellPeer(ch, rendezvous::errorFrameText(e));
      if (so_.verbose)
        std::cerr << fmt::format("rdmabench server: session {} from {} failed: {}\n", session,
                                 ch.peerName(), escapeForLog(e.what(), 400));
      rc = 1;
    }
    slot_.release(getpid());
    std::cerr.flush();
    _exit(rc);
  }

  // Kills each session whose client hung up more than kOrphanGrace ago and which still runs:
  // a stopped or stuck session would otherwise keep the test slot and turn every later client
  // away with "server busy". Only polls the parent's copy of the connection (reads nothing).
  void endOrphans() {
    const auto now = std::chrono::steady_clock::now();
    for (auto& [pid, c] : children_) {
      if (c.killed || c.channel.fd() < 0) continue;
      pollfd pfd{c.channel.fd(), POLLRDHUP, 0};
      if (::poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLRDHUP | POLLHUP | POLLERR))) continue;
      if (!c.clientGoneAt) c.clientGoneAt = now;
      if (now - *c.clientGoneAt < kOrphanGrace) continue;
      std::cerr << fmt::format(
          "rdmabench server: session {} from {}: the client left {} ms ago and the session, {}, "
          "did not end: killed (SIGKILL); still serving\n",
          c.session, c.channel.peerName(), kOrphanGrace.count(), processState(pid));
      kill(pid, SIGKILL);
      c.killed = true;
    }
  }

  // Collects ended children; `block` waits for at least one.
  void reap(bool block) {
    for (;;) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, block ? 0 : WNOHANG);
      if (pid <= 0) return;
      block = false;
      auto it = children_.find(pid);
      if (it == children_.end()) continue;
      bool heldSlot = slot_.release(pid);
      Child& c = it->second;
      if (WIFSIGNALED(status) && c.killed) {
        failed_ = true;  // logged by endOrphans; its client is gone
      } else if (WIFSIGNALED(status)) {
        failed_ = true;
        std::string where = heldSlot ? "in the data path" : "before its test started";
        std::string sig = signalName(WTERMSIG(status));
        std::cerr << fmt::format("rdmabench server: session {} from {} died: {} {}{}\n", c.session,
                                 c.channel.peerName(), sig, where,
                                 so_.once ? "" : "; still serving");
        tellPeer(c.channel, fmt::format("server session {} died: {} {}{}", c.session, sig, where,
                                        so_.once ? "" : " (the server keeps serving)"));
      } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        failed_ = true;
      }
      children_.erase(it);
    }
  }

  // Ctrl-C / SIGTERM on the daemon: every child gets the same signal and tells its client;
  // SIGKILL after 10 s.
  void stopChildren() {
    const int sig = std::string_view(interruptName()) == "SIGTERM" ? SIGTERM : SIGINT;
    for (auto& [pid, c] : children_)
      kill(pid, sig);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!children_.empty() && std::chrono::steady_clock::now() < until) {
      reap(false);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (auto& [pid, c] : children_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    children_.clear();
  }

  rendezvous::Listener& listener_;
  const ServerOptions& so_;
  SharedSlot slot_;
  std::map<pid_t, Child> children_;
  uint64_t sessions_ = 0, accepted_ = 0;
  bool failed_ = false;
};

}  // namespace

void serveListener(rendezvous::Listener& listener, const ServerOptions& so) {
  Daemon(listener, so).run();
}

}  // namespace detail

void runServer(const ServerOptions& options) {
  rendezvous::Listener listener(options.bind, options.port);
  if (options.verbose)
    std::cerr << fmt::format(
        "rdmabench server {} listening on {} (protocol v{}, --max-bytes {}, --max-timeout {} s, "
        "--max-connections {}, token {})\n",
        RDMABENCH_VERSION,
        rendezvous::formatHostPort(options.bind.empty() ? "*" : options.bind, listener.port()),
        rendezvous::kProtocolVersion, options.maxBytes,
        static_cast<double>(options.maxTimeoutMs) / 1000, options.maxConnections,
        options.token.empty() ? "none: anyone who reaches the port may run tests" : "required");
  detail::serveListener(listener, options);
}

}  // namespace rdmabench::engine
