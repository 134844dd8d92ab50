// What the TCP rendezvous store server bounds (#12, store_limits.h, docs/rendezvous.md
// "Limits"): quotas, key and value caps, pending-get and idle timeouts, collection of finished
// runs, backpressure on unread answers, EMFILE at accept. Servers on 127.0.0.1 in a thread;
// memory is measured through TcpStoreServer::usage() (the server's own accounting), not RSS.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/error.h"
#include "rendezvous/protocol.h"
#include "rendezvous/store.h"
#include "rendezvous/store_protocol.h"

namespace rdmabench::rendezvous {
namespace {

using nlohmann::json;

// Server on 127.0.0.1 in its thread, with `limits`; `run` "" = standalone (any run id).
struct Served {
  explicit Served(StoreLimits limits = {}, std::string run = "")
      : server("127.0.0.1", 0, std::move(run), limits) {
    server.startThread();
  }
  ~Served() { server.stop(); }
  std::unique_ptr<TcpStoreClient> client(int rank, int world, const std::string& run = "job") {
    return std::make_unique<TcpStoreClient>(
        "127.0.0.1", server.port(), JoinInfo{run, rank, world, "h" + std::to_string(rank)}, 3000);
  }
  TcpStoreServer server;
};

// Polls `cond` (usage() is published after each serve() call) for up to `ms`.
bool eventually(const std::function<bool()>& cond, int ms = 3000) {
  Deadline dl(ms);
  while (!cond()) {
    if (dl.expired()) return false;
    usleep(5000);
  }
  return true;
}

// A hand-made client: hello and join, then frames sent as the test likes (pipelined, unread).
struct RawClient {
  RawClient(uint16_t port, const std::string& run, int rank, int world)
      : ch(Channel::connect("127.0.0.1", port, Deadline(3000))) {
    clientHandshake(ch, Deadline(3000));
    ch.sendJson(kStoreJoin,
                json{{"run_id", run}, {"rank", rank}, {"world_size", world}, {"host", "raw"}},
                Deadline(3000));
    Frame f = ch.receive(Deadline(3000), "join ack");
    EXPECT_EQ(f.type, kStoreJoinAck) << f.text();
  }
  void get(const std::string& key, uint32_t waitMs) {
    std::string head(4, '\0');
    putLe(reinterpret_cast<uint8_t*>(head.data()), waitMs, 4);
    std::string p = head + encodeKeyRecord(key, "");
    ch.send(kStoreGet, p.data(), p.size(), Deadline(3000));
  }
  Frame reply(int ms = 3000) { return ch.receive(Deadline(ms), "store reply"); }
  Channel ch;
};

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// A stranger storing many large keys is refused at its per-connection quota with a message
// naming the limit; nothing beyond the quota is held and its connection stays usable. Before:
// 400 x 1 MiB were kept (418 MB RSS).
TEST(StoreLimits, ConnectionQuotaRefusesAndBoundsMemory) {
  StoreLimits l;
  l.connQuotaBytes = 1 << 20;
  Served s(l);
  auto a = s.client(0, 2);
  const std::string value(64 * 1024, 'v');
  int stored = 0;
  std::string err;
  for (int i = 0; i < 400 && err.empty(); ++i) {
    err = errorOf([&] { a->set("k" + std::to_string(i), value); });
    if (err == "(no error)") {
      err.clear();
      ++stored;
    }
  }
  EXPECT_NE(err.find("store quota exceeded: rank 0 holds"), std::string::npos) << err;
  EXPECT_NE(err.find("per-connection limit of 1048576 bytes"), std::string::npos) << err;
  EXPECT_GE(stored, 14);  // 16 x 64 KiB minus bookkeeping
  EXPECT_LE(stored, 16);
  EXPECT_LE(s.server.usage().dataBytes, l.connQuotaBytes);
  EXPECT_EQ(a->get("k0", 1000), value);  // still usable after the refusal
  // Overwriting one's own key is not charged twice.
  EXPECT_NO_THROW(a->set("k1", value));
}

// The total quota bounds all connections together, and it is named.
TEST(StoreLimits, TotalQuotaRefusesAcrossConnections) {
  StoreLimits l;
  l.connQuotaBytes = 1 << 20;
  l.totalQuotaBytes = 3 << 20;
  Served s(l);
  std::vector<std::unique_ptr<TcpStoreClient>> cs;
  std::string err;
  const std::string value(60 * 1024, 'v');
  for (int r = 0; r < 5 && err.empty(); ++r) {
    cs.push_back(s.client(r, 8));
    for (int i = 0; i < 15 && err.empty(); ++i) {
      std::string e = errorOf([&] { cs.back()->set(fmt::format("k/{}/{}", r, i), value); });
      if (e != "(no error)") err = e;
    }
  }
  EXPECT_NE(err.find("would exceed its total limit of 3145728 bytes"), std::string::npos) << err;
  ASSERT_TRUE(eventually([&] { return s.server.usage().totalBytes > 0; }));
  EXPECT_LE(s.server.usage().totalBytes, l.totalQuotaBytes);
}

// Keys and values above the caps are refused with the cap named; a too-large set frame is
// skipped and the connection goes on.
TEST(StoreLimits, OversizeKeyAndValueRefused) {
  Served s;
  auto a = s.client(0, 1);
  const size_t cap = s.server.limits().maxValueBytes;
  ASSERT_EQ(cap, 64u * 1024);
  std::string e = errorOf([&] { a->set("big", std::string(cap + 1, 'x')); });
  EXPECT_NE(e.find("value of 65537 bytes for key 'big' refused: the rendezvous store's limit is "
                   "65536 bytes"),
            std::string::npos)
      << e;
  e = errorOf([&] { a->set("huge", std::string(900 * 1024, 'x')); });  // above the frame limit
  EXPECT_NE(e.find("refused: the rendezvous store takes values of at most 65536 bytes"),
            std::string::npos)
      << e;
  EXPECT_NO_THROW(a->set("ok", std::string(cap, 'y')));
  EXPECT_EQ(a->get("ok", 1000).size(), cap);
  // Only "ok" is held: neither refused value was stored.
  ASSERT_TRUE(eventually([&] { return s.server.usage().dataBytes > 0; }));
  EXPECT_EQ(s.server.usage().dataBytes, 2 + cap + kStoreEntryOverheadBytes);
  e = errorOf([&] { a->set(std::string(2000, 'k'), "v"); });
  EXPECT_NE(e.find("key of 2000 bytes above the limit of 1024"), std::string::npos) << e;
  // That one broke the wire format's own key cap: refused and closed, so the run is collected.
  ASSERT_TRUE(eventually([&] { return s.server.usage().connections == 0; }));
  EXPECT_EQ(s.server.usage().runs, 0u);
}

// A get for a key that never comes is answered by the server's bound, even when the client asks
// to wait forever. Before: the wait lasted as long as the client asked (forever for UINT32_MAX).
TEST(StoreLimits, PendingGetTimesOutAtServerLimit) {
  StoreLimits l;
  l.maxGetWaitMs = 300;
  Served s(l);
  auto a = s.client(0, 2);
  const int64_t t0 = nowNs();
  std::string e = errorOf([&] { a->get("never", 20'000); });
  const double secs = static_cast<double>(nowNs() - t0) / 1e9;
  EXPECT_LT(secs, 3.0) << e;
  EXPECT_NE(e.find("s for 'never' (the rendezvous server's limit on a wait); missing rank(s): 1 "
                   "(never arrived)"),
            std::string::npos)
      << e;
  RawClient raw(s.server.port(), "job", 1, 2);
  raw.get("forever", UINT32_MAX);
  Frame f = raw.reply(3000);
  ASSERT_EQ(f.type, kStoreTimeout) << f.text();
  json j = json::parse(f.text());
  EXPECT_GE(j.value("waited_ms", 0), 250);
  // usage() is the snapshot the server thread publishes at the end of each serve() turn, after
  // it has sent the timeout: give that turn up to 2 s to end (TSan runs it slowly).
  for (int i = 0; i < 200 && s.server.usage().pendingGets != 0; ++i)
    usleep(10'000);
  EXPECT_EQ(s.server.usage().pendingGets, 0u);
}

// Connections that send nothing are closed: before the join after handshakeMs, after it (when
// configured) after idleMs; the other ranks are told who was closed and why.
TEST(StoreLimits, SilentConnectionsAreClosed) {
  StoreLimits l;
  l.handshakeMs = 300;
  l.idleMs = 400;
  Served s(l);
  Channel silent = Channel::connect("127.0.0.1", s.server.port(), Deadline(3000));
  Frame f = silent.receive(Deadline(3000), "the server's answer to silence");
  EXPECT_EQ(f.type, kError);
  EXPECT_EQ(f.text(), "rendezvous: connection closed: no hello and join within 0.3 s");
  EXPECT_THROW(silent.receive(Deadline(3000), "EOF"), ProtocolError);  // closed

  auto quiet = s.client(0, 2);
  auto waiting = s.client(1, 2);
  // Rank 1 waits (a pending get is not idleness); rank 0 says nothing and is closed.
  std::string e = errorOf([&] { waiting->get("never", 5000); });
  EXPECT_NE(e.find("rank 0 on host h0 was closed by the rendezvous: no message for 0.4 s (the "
                   "rendezvous' idle limit)"),
            std::string::npos)
      << e;
}

// When every rank of a run has left, its keys are freed and its run id can be used again
// (standalone `rdmabench rendezvous`: "rank 0 joined twice" before). Lost ranks count as left.
TEST(StoreLimits, FinishedRunIsCollectedAndIdReusable) {
  Served s;
  {
    auto a = s.client(0, 2), b = s.client(1, 2);
    a->set("addr/0/1", std::string(1000, 'a'));
    b->set("addr/1/0", std::string(1000, 'b'));
    EXPECT_EQ(a->get("addr/1/0", 1000).size(), 1000u);
    ASSERT_TRUE(eventually([&] { return s.server.usage().runs == 1; }));
    EXPECT_GE(s.server.usage().dataBytes, 2000u);
    a->leave(true, "");
    b->leave(true, "");
  }
  ASSERT_TRUE(eventually([&] { return s.server.usage().runs == 0; }))
      << s.server.usage().runs << " runs still held";
  EXPECT_EQ(s.server.usage().dataBytes, 0u);
  auto again = s.client(0, 2);  // same run id, same rank: a new run
  EXPECT_THROW(again->get("addr/1/0", 100), TimeoutError) << "the old run's keys survived";
  again.reset();
  ASSERT_TRUE(eventually([&] { return s.server.usage().runs == 0; }));
}

// 600 gets of a maximal value, never read: the server stops reading that connection once its
// queued answers reach outputPauseBytes (backpressure) and resumes when they are read; nothing is
// dropped. Before: 600 answers were queued (590 MB for 1 MiB values).
TEST(StoreLimits, UnreadGetsDoNotGrowMemory) {
  Served s;
  const StoreLimits& l = s.server.limits();
  auto a = s.client(0, 2);
  const std::string value(l.maxValueBytes, 'v');
  a->set("big", value);
  RawClient raw(s.server.port(), "job", 1, 2);
  constexpr int kGets = 600;
  for (int i = 0; i < kGets; ++i)
    raw.get("big", 1000);
  usleep(300000);  // let the server do what it will
  const size_t bound = l.outputPauseBytes + l.maxValueBytes + 64 * 1024;
  // The peak is recorded as it happens: a serve() call still busy queueing cannot hide it.
  EXPECT_LE(s.server.usage().peakConnBufferedBytes, bound);
  EXPECT_LE(s.server.usage().bufferedBytes, bound + 4 * kStoreConnOverheadBytes);
  int values = 0;
  for (int i = 0; i < kGets; ++i) {
    Frame f = raw.reply(5000);
    ASSERT_EQ(f.type, kStoreValue) << f.text();
    ASSERT_EQ(f.payload.size(), value.size());
    ++values;
  }
  EXPECT_EQ(values, kGets);
  EXPECT_LE(s.server.usage().peakConnBufferedBytes, bound);
}

int openDescriptors() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd"))
    ++n;
  return n;
}

// At EMFILE the server sheds new connections (each told why) instead of spinning on a readable
// listening socket. Before: 100% CPU for as long as connections were pending.
TEST(StoreLimits, EmfileAtAcceptDoesNotSpin) {
  TcpStoreServer server("127.0.0.1", 0, "");
  const uint16_t port = server.port();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Room for two connections, then EMFILE.
    rlimit rl{};
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = static_cast<rlim_t>(openDescriptors() + 2);
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) _exit(3);
    Deadline dl(1500);
    while (!dl.expired())
      server.serve(50);
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    _exit(cpu < 0.5 ? 0 : 1);
  }
  server.closeInChild();  // the child serves; the parent only connects
  usleep(100000);
  std::vector<Channel> cs;
  for (int i = 0; i < 20; ++i)
    cs.push_back(Channel::connect("127.0.0.1", port, Deadline(3000)));
  int told = 0;
  for (auto& c : cs) {
    try {
      Frame f = c.receive(Deadline(1000), "shedding");
      if (f.type == kError &&
          f.text() == "rendezvous server out of file descriptors: connection refused")
        ++told;
    } catch (const std::exception&) {
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the server used >= 0.5 s of CPU in 1.5 s at EMFILE";
  EXPECT_GE(told, 15) << "connections shed at EMFILE were not told why";
}

}  // namespace
}  // namespace rdmabench::rendezvous
