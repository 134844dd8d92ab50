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
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "common/json_read.h"
#include "common/log.h"
#include "common/version.h"
#include "engine/pair.h"
#include "engine/server_hello.h"
#include "engine/server_slot.h"
#include "engine/session.h"
#include "rendezvous/channel.h"
#include "rendezvous/protocol.h"

namespace rdmabench::engine {
namespace detail {
namespace {

using rendezvous::Channel;

struct Child {
  uint64_t session = 0;
  Channel channel;     // the parent's copy: tells the client when the child died
  int admission = -1;  // the parent's end of the child's admission socketpair (-1: closed)
  std::chrono::steady_clock::time_point acceptedAt;
  bool admitted = false;  // passed its hello and counts against --max-connections
  std::optional<std::chrono::steady_clock::time_point> clientGoneAt;  // first seen hung up
  bool killed = false;   // killed by the parent as an orphan (endOrphans)
  bool dropped = false;  // killed by the parent before its hello (budget or deadline): quiet
};

// Connections that have not yet passed their hello (no token checked, nothing known about the
// peer) have budgets of their own, apart from --max-connections (admitted sessions): when one
// is full, its oldest connection is dropped for the new one, so strangers holding connections
// cannot keep a client with the token (or any real client) out. Until its whole hello has
// arrived a connection costs the parent one descriptor (HelloPool, server_hello.h); then it
// gets a child, which checks the hello and the token.
constexpr size_t kPreHelloBudget = 32;
// Connections accepted per turn of the loop before the held ones are looked at again.
constexpr int kAcceptBatch = 64;
// A pre-hello child still running this long after its hello deadline is killed (it ends itself
// at the deadline; this bounds a stopped or stuck one).
constexpr std::chrono::milliseconds kHelloSlack{1000};

// The wait for the test slot before "server busy": 1.5 s for the previous session's teardown,
// but at most half the client's timeout, so a client with a short --timeout hears "server busy"
// rather than timing out itself while waiting for the server to open its device.
constexpr int64_t kBusyGraceMs = 1500;
int64_t busyGraceMs(int64_t clientTimeoutMs) {
  return std::max<int64_t>(0, std::min(kBusyGraceMs, clientTimeoutMs / 2));
}

// How long a session may outlive its client's hang-up. A healthy session notices a closed
// control connection within ~70 ms (its watchdog) or at its next control read.
constexpr std::chrono::milliseconds kOrphanGrace{3000};

class Daemon {
 public:
  Daemon(rendezvous::Listener& listener, const ServerOptions& so)
      : listener_(listener), so_(so), hellos_(helloPoolBudget(), so.helloTimeoutMs, so.verbose) {}

  void run() {
    const auto start = std::chrono::steady_clock::now();
    bool emfileLogged = false;
    try {
      for (;;) {
        reap(false);
        endOrphans();
        endLateHellos();
        // --once: the one test is the first session whose test started (it took the test
        // slot); a connection that ends before that (a port probe, `nc -z`, a stranger's hello
        // and hang-up, a malformed request) is not it.
        const bool accepting = !(so_.once && slot_.firstTaker() != 0);
        if (!accepting && children_.empty() && hellos_.size() == 0) break;
        if (so_.once && accepting &&
            std::chrono::steady_clock::now() - start > std::chrono::milliseconds(60'000))
          throw TimeoutError(
              accepted_ == 0
                  ? fmt::format("no client connected to port {} within 60 s", listener_.port())
                  : fmt::format("no test started on port {} within 60 s ({} connection(s) "
                                "ended before a test)",
                                listener_.port(), accepted_));
        // One wait for new connections, completed hellos and children asking to be admitted.
        // After --once's test started the listener stays polled: a later client is told why at
        // once instead of waiting in the backlog for the test to end and reading a hang-up.
        const bool incoming = waitEvents(accepting ? 100 : 20);
        answerAdmissions();
        startReady();
        throwIfInterrupted(accepting ? "a client" : "the session to end");
        // (After --once's test started, one at a time: each refusal reads the hello first.)
        for (int i = 0; incoming && i < (accepting ? kAcceptBatch : 1); ++i)
          if (!acceptOne(accepting, emfileLogged)) break;
        startReady();
      }
    } catch (const InterruptedError&) {
      stopChildren();
      throw;
    }
    if (so_.once && failed_) throw Error("the session failed");
  }

 private:
  // Accepts one connection (false when none is pending or descriptors ran out) and holds it
  // until its hello is complete; after --once's test started, tells it why it is refused.
  bool acceptOne(bool accepting, bool& emfileLogged) {
    std::optional<Channel> ch;
    try {
      ch.emplace(listener_.accept(Deadline(0)));
    } catch (const TimeoutError&) {
      return false;
    } catch (const SystemError& e) {
      // Out of descriptors: back off instead of spinning; sessions ending free some.
      if (e.code() != EMFILE && e.code() != ENFILE && e.code() != ENOBUFS && e.code() != ENOMEM)
        throw;
      if (!emfileLogged)
        log::write(
            fmt::format("rdmabench server: {}; refusing clients until sessions end\n", e.what()));
      emfileLogged = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return false;
    }
    emfileLogged = false;
    ++accepted_;
    if (!accepting) {
      if (so_.verbose)
        log::write(fmt::format("rdmabench server: refused {}: --once, its one test is running\n",
                               ch->peerName()));
      // Its hello is read (up to 1 s) before the answer: closing with unread bytes resets the
      // connection, and a client under load read that reset instead of the answer.
      pollfd p{ch->fd(), POLLIN, 0};
      char hello[512];
      if (::poll(&p, 1, 1000) > 0) (void)::recv(ch->fd(), hello, sizeof hello, MSG_DONTWAIT);
      tellPeer(*ch, kOnceBusy);
      return true;
    }
    hellos_.add(std::move(*ch), ready_);
    return true;
  }

  // Polls the listener, the connections still in their hello and every child's admission
  // socket for up to `timeoutMs`; true when a connection waits to be accepted. Moves the held
  // connections whose hello is complete to ready_.
  bool waitEvents(int timeoutMs) {
    std::vector<pollfd> fds;
    fds.push_back(pollfd{listener_.fd(), POLLIN, 0});
    hellos_.appendPollFds(fds);
    const size_t held = hellos_.size();
    for (auto& [pid, c] : children_)
      if (c.admission >= 0) fds.push_back(pollfd{c.admission, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), timeoutMs) <= 0) return false;
    if (held > 0) hellos_.collect(fds.data() + 1, ready_);
    return fds[0].revents & POLLIN;
  }

  // Forks the session of each connection whose hello is complete.
  void startReady() {
    // Each child closes the parent's copies of the others (childMain), ready_ included.
    for (size_t i = 0; i < ready_.size(); ++i) {
      if (ready_[i].channel.fd() < 0) continue;
      Channel ch = std::move(ready_[i].channel);
      startSession(std::move(ch), ready_[i].acceptedAt);
    }
    ready_.clear();
  }

  size_t admittedCount() const {
    size_t n = 0;
    for (const auto& [pid, c] : children_)
      n += c.admitted ? 1 : 0;
    return n;
  }

  // Answers the children that passed their hello: admitted while fewer than --max-connections
  // sessions are, refused ("server busy") otherwise. Never blocks.
  void answerAdmissions() {
    for (auto& [pid, c] : children_) {
      if (c.admission < 0) continue;
      char q = 0;
      ssize_t r = ::recv(c.admission, &q, 1, MSG_DONTWAIT);
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      if (r == 1 && q == kAskAdmission) {
        // --once runs one test in all: a hello after it started is told "server busy".
        const bool onceUsed = so_.once && slot_.firstTaker() != 0;
        const bool ok = admittedCount() < so_.maxConnections && !onceUsed;
        const char a = ok ? kAdmitted : onceUsed ? kRefusedOnce : kRefused;
        if (::send(c.admission, &a, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1 && ok) c.admitted = true;
        if (!ok && so_.verbose)
          log::write(onceUsed ? fmt::format("rdmabench server: refused {}: --once, its one test "
                                            "is running\n",
                                            c.channel.peerName())
                              : fmt::format("rdmabench server: refused {}: {} sessions in "
                                            "progress (--max-connections {})\n",
                                            c.channel.peerName(), so_.maxConnections,
                                            so_.maxConnections));
      }
      ::close(c.admission);  // one question per child; EOF or an error: it is gone
      c.admission = -1;
    }
  }

  bool preHello(const Child& c) const { return !c.admitted && !c.killed && !c.dropped; }

  // Kills a child that has not passed its hello, quietly (its peer is told in one line).
  void drop(pid_t pid, Child& c, const std::string& why) {
    kill(pid, SIGKILL);
    c.dropped = true;
    if (so_.verbose)
      log::write(fmt::format("rdmabench server: dropped {} before its hello: {}\n",
                             c.channel.peerName(), why));
    tellPeer(c.channel, "server dropped this connection before its hello: " + why);
  }

  // Drops each held connection past the hello deadline (from accept), and each pre-hello child
  // past it plus kHelloSlack (the child ends itself at its own deadline).
  void endLateHellos() {
    const auto now = std::chrono::steady_clock::now();
    const auto hello = std::chrono::milliseconds(so_.helloTimeoutMs);
    hellos_.dropLate(now);
    for (auto& [pid, c] : children_)
      if (preHello(c) && now - c.acceptedAt > hello + kHelloSlack)
        drop(pid, c, fmt::format("no hello within {} ms", so_.helloTimeoutMs));
  }

  // Forks the session of a connection whose hello is complete. When kPreHelloBudget children
  // are still in their hello, the oldest of them makes room.
  void startSession(Channel ch, std::chrono::steady_clock::time_point acceptedAt) {
    size_t inHello = 0;
    std::map<pid_t, Child>::iterator oldest = children_.end();
    for (auto it = children_.begin(); it != children_.end(); ++it) {
      if (!preHello(it->second)) continue;
      ++inHello;
      if (oldest == children_.end() || it->second.acceptedAt < oldest->second.acceptedAt)
        oldest = it;
    }
    if (inHello >= kPreHelloBudget && oldest != children_.end())
      drop(oldest->first, oldest->second,
           fmt::format("{} connections are in their hello (the limit before a hello); the "
                       "oldest goes first",
                       inHello));
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      tellPeer(ch,
               fmt::format("server cannot start a session: socketpair: {}", std::strerror(errno)));
      return;
    }
    const uint64_t session = ++sessions_;
    std::cout.flush();
    log::flush();
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
      // The daemon's death ends its sessions (kill -9 of the server is a dead server for its
      // clients, as before sessions were forked); also when it died before this line.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
    }
    if (pid < 0) {
      const int err = errno;
      ::close(pair[0]);
      ::close(pair[1]);
      tellPeer(ch, fmt::format("server cannot start a session: fork: {}", std::strerror(err)));
      return;
    }
    if (pid == 0) {
      ::close(pair[0]);
      childMain(ch, session, pair[1]);  // never returns
    }
    ::close(pair[1]);
    Child c{session, std::move(ch)};
    c.admission = pair[0];
    c.acceptedAt = acceptedAt;
    children_.emplace(pid, std::move(c));
  }

  [[noreturn]] void childMain(Channel& ch, uint64_t session, int admission) {
    // Only this session's connection stays open in the child.
    ::close(listener_.fd());
    for (auto& [pid, c] : children_) {
      ::close(c.channel.fd());
      if (c.admission >= 0) ::close(c.admission);
    }
    hellos_.closeInChild();
    for (const HelloReady& r : ready_)
      if (r.channel.fd() >= 0 && r.channel.fd() != ch.fd()) ::close(r.channel.fd());
    // Whatever the client makes this session allocate stays within --max-bytes plus a
    // baseline: an allocation past it fails here, in one line to the client.
    limitSessionMemory(so_.maxBytes);
    int rc = 0;
    try {
      serveSession(
          ch, so_, session,
          [&](const TestSpec& spec) {
            slot_.take(fmt::format("{} over {} for {} (session {})", toString(spec.test),
                                   escapeForLog(spec.transport, 64), ch.peerName(), session),
                       busyGraceMs(spec.timeoutMs), so_.once);
          },
          [&] { askAdmission(admission, so_.maxConnections); });
      if (so_.verbose)
        log::write(
            fmt::format("rdmabench server: session {} from {} done\n", session, ch.peerName()));
    } catch (const InterruptedError&) {
      tellPeer(ch, fmt::format("server interrupted ({})", interruptName()));
      rc = 4;
    } catch (const std::exception& e) {
      const std::string text = sessionErrorText(e);
      tellPeer(ch, text);
      if (so_.verbose)
        log::write(fmt::format("rdmabench server: session {} from {} failed: {}\n", session,
                               ch.peerName(), escapeForLog(text, 400)));
      rc = 1;
    }
    slot_.release(getpid());
    log::flush();
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
      log::write(fmt::format(
          "rdmabench server: session {} from {}: the client left {} ms ago and the session, {}, "
          "did not end: killed (SIGKILL); still serving\n",
          c.session, c.channel.peerName(), kOrphanGrace.count(), processState(pid)));
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
      if (c.admission >= 0) ::close(c.admission);
      // --once's status is its one test's (the session that took the test slot): a connection
      // that ended before its test started was logged (at most one line) and told, and the
      // server waits on for the client.
      const bool theTest = pid == slot_.firstTaker();
      if (WIFSIGNALED(status) && c.dropped) {
        failed_ = failed_ || theTest;  // dropped before its hello: logged and told by drop()
      } else if (WIFSIGNALED(status) && c.killed) {
        failed_ = failed_ || theTest;  // logged by endOrphans; its client is gone
      } else if (WIFSIGNALED(status)) {
        failed_ = failed_ || theTest;
        std::string where = heldSlot ? "in the data path" : "before its test started";
        std::string sig = signalName(WTERMSIG(status));
        // The client hears the same line; a quiet server (--quiet, lat's loopback server on the
        // client's own terminal) leaves it to the client, so it is not shown twice.
        if (so_.verbose)
          log::write(fmt::format("rdmabench server: session {} from {} died: {} {}{}\n", c.session,
                                 c.channel.peerName(), sig, where,
                                 so_.once ? "" : "; still serving"));
        tellPeer(c.channel, fmt::format("server session {} died: {} {}{}", c.session, sig, where,
                                        so_.once ? "" : " (the server keeps serving)"));
      } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        failed_ = failed_ || theTest;
      }
      children_.erase(it);
    }
  }

  // Ctrl-C / SIGTERM on the daemon: every child gets the same signal and tells its client;
  // SIGKILL after 10 s.
  void stopChildren() {
    const int sig = interruptSignal();  // SIGINT, SIGTERM or SIGHUP, as the daemon got
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
      if (c.admission >= 0) ::close(c.admission);
    }
    children_.clear();
  }

  rendezvous::Listener& listener_;
  const ServerOptions& so_;
  SharedSlot slot_;
  std::map<pid_t, Child> children_;
  HelloPool hellos_;               // accepted, hello not complete yet
  std::vector<HelloReady> ready_;  // hello complete: sessions being forked
  uint64_t sessions_ = 0, accepted_ = 0;
  bool failed_ = false;  // --once: the session of its one test failed
};

}  // namespace

void serveListener(rendezvous::Listener& listener, const ServerOptions& so) {
  Daemon(listener, so).run();
}

}  // namespace detail

void runServer(const ServerOptions& options) {
  // The kernel's largest accept queue: a flood of connections must not fill it before the
  // daemon's next accept (a full queue drops a real client's SYN).
  rendezvous::Listener listener(options.bind, options.port, SOMAXCONN);
  if (options.verbose)
    log::write(fmt::format(
        "rdmabench server {} listening on {} (protocol v{}, --max-bytes {}, --max-timeout {} s, "
        "--max-connections {}, token {})\n",
        version::release(),
        rendezvous::formatHostPort(options.bind.empty() ? "*" : options.bind, listener.port()),
        rendezvous::kProtocolVersion, options.maxBytes,
        static_cast<double>(options.maxTimeoutMs) / 1000, options.maxConnections,
        options.token.empty() ? "none: anyone who reaches the port may run tests" : "required"));
  detail::serveListener(listener, options);
}

}  // namespace rdmabench::engine
