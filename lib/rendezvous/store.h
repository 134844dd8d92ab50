#pragma once
// The rendezvous store: how N ranks find each other (gloo's Store, torch's TCPStore). Keys are
// opaque strings, values opaque bytes. Three implementations:
//  - MemoryStore: in-process (ranks as threads in tests);
//  - TcpStoreClient + TcpStoreServer: one persistent TCP connection per rank to an epoll server
//    (embedded in rank 0, in the `--np` launcher, or standalone `rdmabench rendezvous`);
//    docs/rendezvous.md and store_protocol.h describe the protocol;
//  - FileStore: a directory on a shared file system (one file per key, atomic rename).
// Under a PMIx server (launch::connectStore, rendezvous/pmix.h) PMIx carries the identity and
// rank 0's TcpStoreServer address; the keys then go through that server.
// Every wait is bounded; errors name the rank(s) and host(s) that did not arrive or died.
// Thread-safety: MemoryStore is thread-safe; the others are used by one thread at a time.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "rendezvous/channel.h"
#include "rendezvous/store_limits.h"

namespace rdmabench::rendezvous {

class Store {
 public:
  virtual ~Store() = default;
  // Stores `value` under `key` (overwrites). Wakes every get() waiting for it.
  virtual void set(const std::string& key, const std::string& value) = 0;
  // Waits up to `timeoutMs` for `key` to exist and returns its value. TimeoutError names the key
  // and, where the store knows them, the ranks (and hosts) that never joined or were lost.
  // ProtocolError when a rank is reported lost/failed while waiting.
  virtual std::string get(const std::string& key, int64_t timeoutMs) = 0;
  // Atomically adds `delta` to the integer under `key` (absent = 0) and returns the new value.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // Liveness check for watchdogs in data-plane waits: throws ProtocolError naming the rank and
  // host when the store learnt that a rank died or failed (or the store server is gone).
  // Non-blocking; default: nothing known.
  virtual void checkPeers() {}
  // Tells the store this rank is leaving; `ok` false with the reason when it failed (other ranks
  // then fail at once naming it). Never throws.
  virtual void leave(bool ok, const std::string& reason) {
    (void)ok;
    (void)reason;
  }
  // "tcp 10.0.0.1:29500", "file /shared/rdv", "memory".
  virtual std::string describe() const = 0;
};

// In-process store for ranks that are threads. Thread-safe.
class MemoryStore : public Store {
 public:
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key, int64_t timeoutMs) override;
  int64_t add(const std::string& key, int64_t delta) override;
  std::string describe() const override { return "memory"; }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::string> data_;
};

// Who a TCP store client is, sent in its join message.
struct JoinInfo {
  std::string runId;  // ranks of one job share it; another job's ranks are refused
  int rank = 0;
  int worldSize = 1;
  std::string host;   // this rank's host name, for other ranks' error messages
  std::string token;  // access token sent in the hello (common/token.h); "" = none
  // What the derived run id hashes (launch::RankInfo::runDescription); "" = not sent. A server
  // refusing a rank of another run names both descriptions.
  std::string description;
};

// One rank's connection to a TcpStoreServer.
class TcpStoreClient : public Store {
 public:
  // Connects (retrying refused connections: the server may still be starting) and joins.
  // Errors: TimeoutError (server never answered, naming host:port), ProtocolError (refused:
  // other run id, world size mismatch, duplicate rank; version mismatch).
  TcpStoreClient(const std::string& host, uint16_t port, const JoinInfo& join,
                 int64_t connectTimeoutMs);
  ~TcpStoreClient() override;

  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key, int64_t timeoutMs) override;
  int64_t add(const std::string& key, int64_t delta) override;
  void checkPeers() override;
  void leave(bool ok, const std::string& reason) override;
  // "tcp HOST:PORT", or "VIA (tcp HOST:PORT)" after setVia().
  std::string describe() const override;
  // Names how the server's address was found ("pmix NAMESPACE"), for describe().
  void setVia(std::string via) { via_ = std::move(via); }

  // Numeric local address of the store connection: the address other hosts reach this rank at
  // (used as the transports' bind address).
  std::string localAddress() const { return channel_.localAddress(); }

 private:
  // Receives frames until one of `type` (or kError / kStoreTimeout) arrives; a push message
  // (kStoreRankLost) on the way throws PeerError once the request's own answer is read (a get
  // still waiting is then owed, see owedGets_).
  struct Reply {
    uint16_t type;
    std::string payload;
  };
  Reply request(uint16_t type, const std::string& payload, uint16_t want, int64_t waitMs,
                const std::string& what);
  [[noreturn]] void throwLost(const std::string& payload);

  Channel channel_;
  JoinInfo join_;
  std::string where_;
  std::string via_;
  // How long a set/add may wait for its answer (ms): the connect timeout (--timeout), at least
  // 10 s. 1024 ranks on 2 cores kept the one-threaded server busy for longer than 10 s.
  int64_t replyMs_ = 10'000;
  bool left_ = false;
  // Keys of gets a rank-lost notice ended before their answer: the server still answers them
  // (a timeout naming the key, or the value once set), and that answer is not a later request's.
  std::vector<std::string> owedGets_;
};

// Event-driven (epoll) store server. One thread drives it through serve(); connections never
// block each other. A server started with a run id accepts only that run; one started without
// keeps each run id's keys apart (standalone `rdmabench rendezvous`). Everything a client can make
// it hold is bounded by StoreLimits (store_limits.h): key and value sizes, per-connection and
// total memory quotas, backpressure on unread output, pending gets, handshake and idle times. A
// run whose ranks have all left (bye or lost) is collected: its keys are freed and its run id can
// be used again. Running out of descriptors at accept is handled without spinning.
class TcpStoreServer {
 public:
  // The name of startThread()'s thread (/proc/self/task/TID/comm; at most 15 characters).
  static constexpr const char* kStoreThreadName = "rdmabench-store";
  // Listens on bindAddress:port (port 0 = ephemeral; "" = all addresses). SystemError on failure,
  // UsageError for an unknown bind address. A non-empty `token` (common/token.h) must be in every
  // hello: any other hello is answered "access refused: ..." and closed before it can join.
  TcpStoreServer(const std::string& bindAddress, uint16_t port, std::string runId = "",
                 StoreLimits limits = {}, std::string token = {});
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  uint16_t port() const { return port_; }
  // The limits it enforces (fixed at construction; any thread).
  const StoreLimits& limits() const { return limits_; }
  // Handles events for up to `timeoutMs` (0 = only what is ready, -1 = until an event or an
  // internal deadline). Never throws for a client's misbehaviour (that client gets kError and is
  // closed, or its request is refused); SystemError for epoll failures.
  void serve(int timeoutMs);
  // True once every rank that joined (any run) has left (bye or lost) and at least one rank
  // joined. Not synchronized with serve(): call it from the thread that serves, or after
  // stop() (serveUntilAllLeft below does both); reading while startThread()'s thread serves
  // is a data race.
  bool allLeft() const;
  // Ranks that joined so far (all runs, collected ones included). Same thread rule as allLeft().
  size_t joinedCount() const;
  // Server with a run id (rank 0's embedded store): true once every rank of the run's world has
  // joined at least once (or was refused) and none is connected any more. Without a run id:
  // allLeft(). Same thread rule as allLeft(). A failing rank 0 serves until this holds, so ranks
  // that start late still learn why the run failed instead of finding no store (Connection
  // refused).
  bool runComplete() const;
  // What the server holds, as of the end of the last serve() call (peakConnBufferedBytes: as it
  // happens). Thread-safe (any thread).
  StoreUsage usage() const;
  // Log lines (one per lost rank / refused client / closed connection) go to stderr when verbose.
  void setVerbose(bool verbose) { verbose_ = verbose; }
  // Rank 0's embedded store (it goes away soon after rank 0 fails): failures of the run's ranks
  // are also told to ranks that join later, as refusals always are. The `--np` launcher's store
  // outlives its ranks and leaves it off: a late rank fails on its own check, and identical
  // lines fold (launch/fold.h). Call before serving.
  void setTellLateRanksOfFailures(bool on) { tellLateRanksOfFailures_ = on; }
  // The served run's JoinInfo::description, named when a rank of another run is refused before
  // any rank of this one joined. Call before serving.
  void setRunDescription(std::string description) { runDescription_ = std::move(description); }

  // In a forked child: closes the inherited listening and epoll descriptors without touching
  // the parent's connections (the child never serves).
  void closeInChild();

  // Runs serve() on a background thread until stop() (rank 0's embedded server). The thread
  // sleeps in epoll_wait on its sockets and an eventfd that stop() signals: no periodic
  // wake-up while ranks run their timed loops (only a deadline wakes it).
  void startThread();
  void stop();

 private:
  struct Conn;
  struct Run;
  struct Waiter;
  // I/O and timers (tcp_store_server.cc).
  void acceptAll();
  bool onAcceptError(int err);  // true: a connection was shed, accept the next one
  void onReadable(Conn& c);
  void processInput(Conn& c);
  void sendFrame(Conn& c, uint16_t type, const std::string& payload);
  void flush(Conn& c);
  void account(Conn& c);
  void refuse(Conn& c, const std::string& message);
  void expireConnections();
  int nextTimeoutMs(int cap) const;
  void publishUsage();
  // Protocol and state (tcp_store_session.cc).
  void handleFrame(Conn& c, uint16_t type, const std::string& payload);
  void join(Conn& c, const std::string& payload);
  bool store(Conn& c, const std::string& key, std::string value);  // false: refused
  void closeConn(int fd, const std::string& reason, bool clean);
  void expireWaiters();
  void wake(Run& run, const std::string& key);
  void sendTimeout(Conn& c, const Waiter& w);

  int listenFd_ = -1;
  int epollFd_ = -1;
  int wakeFd_ = -1;     // eventfd: stop() wakes the serving thread
  int reserveFd_ = -1;  // spare descriptor: closed to accept-and-shed a connection at EMFILE
  int64_t acceptPausedUntilNs_ = 0;  // 0 = accepting
  bool acceptTroubleLogged_ = false;
  uint16_t port_ = 0;
  std::string runId_;
  StoreLimits limits_;
  std::string token_;  // "" = no access control
  bool verbose_ = false;
  std::map<int, std::unique_ptr<Conn>> conns_;
  std::map<std::string, std::unique_ptr<Run>> runs_;
  // Server with a run id: rank-lost notes of ranks refused for another run id or world size
  // (and, with setTellLateRanksOfFailures, of members of the run that failed or were lost), sent
  // to every member of the run, also to those joining later (at most 16 kept): a rank that
  // starts after the run failed learns why at once instead of waiting for its --timeout.
  std::vector<std::string> refusalNotes_;
  bool tellLateRanksOfFailures_ = false;
  // Server with a run id: its world size (0 until a rank of it joined) and the ranks of it that
  // joined at least once or were refused (runComplete()).
  int servedWorld_ = 0;
  std::set<int> servedJoined_;
  std::string runDescription_;
  void noteRefusal(int rank, const std::string& host, const std::string& reason);
  size_t dataBytes_ = 0;      // StoreUsage::dataBytes
  size_t bufferedBytes_ = 0;  // StoreUsage::bufferedBytes
  size_t pendingGets_ = 0;
  size_t joinedEver_ = 0;
  size_t liveRanks_ = 0;
  uint64_t nextSerial_ = 0;
  struct Published {
    std::atomic<size_t> dataBytes{0}, bufferedBytes{0}, maxConnBufferedBytes{0},
        peakConnBufferedBytes{0}, connections{0}, runs{0}, pendingGets{0};
  } published_;
  std::unique_ptr<std::thread> thread_;
  std::atomic<bool> stop_{false};
};

// Rank 0's end of a run: stops the server's background thread, then serves from the calling
// thread until every rank that joined has left (bye or lost) or `timeoutMs` passed, so the
// server's state is only ever touched by one thread. Returns allLeft(). SystemError as serve().
inline bool serveUntilAllLeft(TcpStoreServer& server, int64_t timeoutMs) {
  server.stop();
  Deadline deadline(timeoutMs);
  while (!server.allLeft() && !deadline.expired())
    server.serve(20);
  return server.allLeft();
}

// A failing rank 0's end of a run: as serveUntilAllLeft, but until runComplete() (every rank of
// the world joined once, learnt of the failure and left) or `timeoutMs`. Returns runComplete().
inline bool serveUntilRunComplete(TcpStoreServer& server, int64_t timeoutMs) {
  server.stop();
  Deadline deadline(timeoutMs);
  while (!server.runComplete() && !deadline.expired())
    server.serve(20);
  return server.runComplete();
}

// A directory on a shared file system: one file per key, written to a temporary name and
// renamed (atomic on POSIX); add() holds flock() on the counter's file. Waits poll every 2 ms.
// A rank that fails says so in leave(false, reason): the first one writes the file "failed"
// (link(): never overwritten) with its rank, host and reason, which checkPeers() and every
// get() (each 20 ms) turn into a PeerError naming it. A rank that dies without leave() is not
// known: it shows up as a timeout naming the key it never wrote. Use a fresh run id (or
// directory) per run: keys and the failure file of an earlier run with the same id are read.
class FileStore : public Store {
 public:
  // Creates `directory`/`runId` if needed. SystemError when it cannot. `rank` and `host` name
  // this rank in its failure file (-1 / "": unknown).
  FileStore(const std::string& directory, const std::string& runId, int rank = -1,
            std::string host = {});
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key, int64_t timeoutMs) override;
  int64_t add(const std::string& key, int64_t delta) override;
  // PeerError "rank R on host H failed: REASON" once another rank wrote the failure file.
  void checkPeers() override;
  void leave(bool ok, const std::string& reason) override;
  std::string describe() const override { return "file " + dir_; }

 private:
  std::string pathFor(const std::string& key) const;
  std::string dir_;
  int rank_;
  std::string host_;
};

}  // namespace rdmabench::rendezvous
