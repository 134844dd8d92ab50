// The TCP rendezvous store's protocol and state (store.h: TcpStoreServer; docs/rendezvous.md):
// hello, join, set/get/add/bye, waiting gets, lost ranks, quotas and the collection of finished
// runs. Sockets, buffers and timers are in tcp_store_server.cc.

#include <malloc.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <climits>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/json_read.h"
#include "common/log.h"
#include "common/token.h"
#include "common/version.h"
#include "rendezvous/protocol.h"
#include "rendezvous/store.h"
#include "rendezvous/store_protocol.h"
#include "rendezvous/tcp_store_server_state.h"

namespace rdmabench::rendezvous {

using nlohmann::json;

namespace {
// A finished run that held at least this much returns the freed memory to the system.
constexpr size_t kTrimAfterBytes = size_t{1} << 20;
}  // namespace

void TcpStoreServer::handleFrame(Conn& c, uint16_t type, const std::string& payload) {
  if (c.closing) return;
  if (c.stage == 0) {
    if (type != kHello) throw ProtocolError("expected a hello");
    Frame f{type, std::vector<uint8_t>(payload.begin(), payload.end())};
    Hello h = decodeHello(f, c.peer);
    if (h.protocolVersion != kProtocolVersion)
      throw ProtocolError(
          fmt::format("rendezvous server speaks protocol version {} (rdmabench {}), the client {} "
                      "(rdmabench {})",
                      kProtocolVersion, version::release(), h.protocolVersion,
                      escapeForLog(h.toolVersion, 64)));
    if (std::string refusal = tokenRefusal(token_, h.token); !refusal.empty())
      throw ProtocolError(refusal);
    sendFrame(c, kHelloAck, encodeHello({kProtocolVersion, version::release(), {}}));
    c.stage = 1;
    return;
  }
  if (c.stage == 1) {
    if (type != kStoreJoin) throw ProtocolError("expected a join message");
    join(c, payload);
    return;
  }
  Run& run = *c.run;
  std::string key, rest;
  switch (type) {
    case kStoreSet:
      decodeKeyRecord(payload, key, rest);
      if (store(c, key, std::move(rest))) sendFrame(c, kStoreOk, "");
      return;
    case kStoreGet: {
      if (payload.size() < 4) throw ProtocolError("truncated get");
      const uint32_t t = ByteReader(payload).u32();
      decodeKeyRecord(std::string_view(payload).substr(4), key, rest);
      auto it = run.data.find(key);
      if (it != run.data.end()) {
        sendFrame(c, kStoreValue, it->second.value);
        return;
      }
      if (c.waits.size() >= limits_.maxPendingGets) {
        sendFrame(c, kError,
                  fmt::format("get '{}' refused: {} gets of this connection are already waiting "
                              "(the rendezvous' limit)",
                              escapeForLog(key), c.waits.size()));
        return;
      }
      // UINT32_MAX = "forever" from the client; the server bounds every wait.
      const int64_t waitMs = std::min<int64_t>(t, limits_.maxGetWaitMs);
      const int64_t now = nowNs();
      c.waitBytes += key.size();
      run.waiting[key].push_back(c.fd);
      c.waits.push_back(Waiter{std::move(key), now, now + waitMs * 1'000'000});
      ++pendingGets_;
      return;
    }
    case kStoreAdd: {
      decodeKeyRecord(payload, key, rest);
      int64_t delta = static_cast<int64_t>(decodeU64(rest));
      auto it = run.data.find(key);
      // The one add of every store (store_protocol.h): wraps, never a signed overflow.
      const uint64_t v = static_cast<uint64_t>(
          addCounter(it == run.data.end() ? nullptr : &it->second.value, delta));
      if (store(c, key, encodeU64(v))) sendFrame(c, kStoreValue, encodeU64(v));
      return;
    }
    case kStoreBye: {
      json j = parseUntrustedJson(payload, "store bye message");
      if (!j.is_object()) throw ProtocolError("malformed bye message");
      bool ok = jsonBool(j, "ok", "store bye message", false);
      std::string reason = jsonString(j, "reason", "store bye message", "", kDefaultMaxFrameBytes);
      if (reason.size() > 4096) reason = reason.substr(0, 4096) + "...";
      closeConn(c.fd, ok ? "" : "failed: " + reason, true);
      return;
    }
    default:
      throw ProtocolError(fmt::format("unexpected store message type {}", type));
  }
}

void TcpStoreServer::join(Conn& c, const std::string& payload) {
  constexpr std::string_view what = "store join message";
  json j = parseUntrustedJson(payload, what);
  if (!j.is_object()) throw ProtocolError("malformed join message");
  std::string runId = jsonString(j, "run_id", what, "", 1024);
  int world = static_cast<int>(jsonInt(j, "world_size", what, 0, 1, INT_MAX));
  int rank = static_cast<int>(jsonInt(j, "rank", what, -1, 0, INT_MAX));
  std::string host = jsonString(j, "host", what, "", 256);
  const std::string description = jsonString(j, "description", what, "", 4096);
  if (!runId_.empty() && runId != runId_) {
    // The ranks of this run would otherwise wait for this rank until their timeout.
    auto own = runs_.find(runId_);
    const std::string ours = own != runs_.end() && !own->second->description.empty()
                                 ? own->second->description
                                 : runDescription_;
    const std::string why =
        !description.empty() && !ours.empty()
            ? fmt::format("different test description ('{}'; this run: '{}')",
                          escapeForLog(description), escapeForLog(ours))
            : fmt::format("different run id ('{}'; this run: '{}'; two jobs on one port?)",
                          escapeForLog(runId), runId_);
    if (rank >= 0) noteRefusal(rank, host, why);
    throw ProtocolError(
        fmt::format("rank {} from {} was refused: {}", rank, escapeForLog(host), why));
  }
  if (world < 1 || rank < 0 || rank >= world)
    throw ProtocolError(fmt::format("rank {} outside world size {}", rank, world));
  auto& run = runs_[runId];
  if (!run) {
    run = std::make_unique<Run>();
    run->id = runId;
    run->worldSize = world;
    run->description = description;
  }
  if (run->worldSize != world) {
    std::string msg =
        fmt::format("rank {} from {} says world size {}, run '{}' has world size {}", rank,
                    escapeForLog(host), world, escapeForLog(runId), run->worldSize);
    if (!runId_.empty())
      noteRefusal(rank, host, fmt::format("world size {}, this run has {}", world, run->worldSize));
    if (run->live == 0) runs_.erase(runId);  // created just now: nothing to keep
    throw ProtocolError(msg);
  }
  auto m = run->members.find(rank);
  if (m != run->members.end())
    throw ProtocolError(fmt::format("rank {} joined twice (first from {}, now from {})", rank,
                                    escapeForLog(m->second.host), escapeForLog(host)));
  run->members[rank] = Run::Member{host, "joined", c.fd};
  ++run->live;
  ++liveRanks_;
  ++joinedEver_;
  c.run = run.get();
  c.rank = rank;
  c.stage = 2;
  if (!runId_.empty()) {
    servedWorld_ = world;
    servedJoined_.insert(rank);
  }
  sendFrame(c, kStoreJoinAck, json{{"world_size", world}}.dump());
  if (!runId_.empty())  // refusals before this rank joined: it fails now, naming them
    for (const std::string& note : refusalNotes_)
      if (conns_.count(c.fd) && !c.closing) sendFrame(c, kStoreRankLost, note);
}

void TcpStoreServer::noteRefusal(int rank, const std::string& host, const std::string& reason) {
  const std::string note = json{
      {"rank", rank},
      {"host", host},
      {"reason", "was refused by the store: " + reason},
      {"clean", false}}.dump();
  if (refusalNotes_.size() < 16) refusalNotes_.push_back(note);
  if (servedJoined_.size() < 4096) servedJoined_.insert(rank);  // it came, and was told why
  auto run = runs_.find(runId_);
  if (run == runs_.end()) return;
  for (auto& [r, m] : run->second->members) {
    if (m.fd < 0) continue;
    auto o = conns_.find(m.fd);
    if (o != conns_.end() && !o->second->closing) sendFrame(*o->second, kStoreRankLost, note);
  }
}

bool TcpStoreServer::store(Conn& c, const std::string& key, std::string value) {
  Run& run = *c.run;
  auto deny = [&](const std::string& why) {
    sendFrame(c, kError, why);
    if (verbose_ && !c.refusalLogged)  // once per connection: a flood of sets is one line
      log::write(
          fmt::format("rdmabench rendezvous: refused a set by rank {} of run '{}' from {}: {}\n",
                      c.rank, escapeForLog(run.id), c.peer, why));
    c.refusalLogged = true;
    return false;
  };
  if (key.size() > limits_.maxKeyBytes)
    return deny(fmt::format("key of {} bytes refused: the rendezvous store's limit is {} bytes",
                            key.size(), limits_.maxKeyBytes));
  if (value.size() > limits_.maxValueBytes)
    return deny(fmt::format(
        "value of {} bytes for key '{}' refused: the rendezvous store's limit is {} bytes",
        value.size(), escapeForLog(key), limits_.maxValueBytes));
  const size_t bytes = entryBytes(key, value);
  auto it = run.data.find(key);
  const size_t old = it == run.data.end() ? 0 : entryBytes(key, it->second.value);
  const bool mine =
      it != run.data.end() && it->second.ownerFd == c.fd && it->second.ownerSerial == c.serial;
  const size_t connAfter = c.heldBytes - (mine ? old : 0) + bytes + c.buffered();
  if (connAfter > limits_.connQuotaBytes)
    return deny(fmt::format(
        "store quota exceeded: rank {} holds {} bytes in the rendezvous (keys, values, buffers); "
        "storing '{}' ({} bytes) would exceed the per-connection limit of {} bytes",
        c.rank, c.heldBytes + c.buffered(), escapeForLog(key), bytes, limits_.connQuotaBytes));
  const size_t totalAfter = dataBytes_ - old + bytes + bufferedBytes_;
  if (totalAfter > limits_.totalQuotaBytes)
    return deny(fmt::format(
        "store quota exceeded: the rendezvous holds {} bytes for all runs; storing '{}' ({} "
        "bytes) would exceed its total limit of {} bytes",
        dataBytes_ + bufferedBytes_, escapeForLog(key), bytes, limits_.totalQuotaBytes));
  if (it != run.data.end()) {
    // The previous owner (if still connected) is no longer charged for it.
    auto owner = conns_.find(it->second.ownerFd);
    if (owner != conns_.end() && owner->second->serial == it->second.ownerSerial)
      owner->second->heldBytes -= old;
    run.bytes -= old;
    dataBytes_ -= old;
  }
  Run::Entry& e = run.data[key];
  e.value = std::move(value);
  e.ownerFd = c.fd;
  e.ownerSerial = c.serial;
  c.heldBytes += bytes;
  run.bytes += bytes;
  dataBytes_ += bytes;
  wake(run, key);
  return true;
}

void TcpStoreServer::wake(Run& run, const std::string& key) {
  auto waiting = run.waiting.find(key);
  if (waiting == run.waiting.end()) return;
  std::vector<int> fds = std::move(waiting->second);
  run.waiting.erase(waiting);
  const std::string& value = run.data[key].value;
  for (int fd : fds) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) continue;
    Conn& c = *it->second;
    if (c.closing || c.run != &run) continue;  // a stale entry: fd reused by another run's
    for (size_t i = 0; i < c.waits.size();) {
      if (c.waits[i].key == key) {
        c.waitBytes -= c.waits[i].key.size();
        c.waits.erase(c.waits.begin() + static_cast<long>(i));
        --pendingGets_;
        sendFrame(c, kStoreValue, value);  // bounded: at most maxPendingGets per connection
      } else {
        ++i;
      }
    }
  }
}

void TcpStoreServer::sendTimeout(Conn& c, const Waiter& w) {
  json missing = json::array();
  int joined = 0;
  for (int r = 0; r < c.run->worldSize; ++r) {
    auto m = c.run->members.find(r);
    if (m == c.run->members.end()) {
      missing.push_back(json{{"rank", r}, {"state", "never arrived"}});
      if (missing.size() >= 64) break;  // enough to name the culprits; bounded for huge worlds
    } else if (m->second.state != "joined" && m->second.state != "left") {
      missing.push_back(json{{"rank", r}, {"host", m->second.host}, {"state", m->second.state}});
    } else {
      ++joined;
    }
  }
  sendFrame(c, kStoreTimeout,
            json{{"key", w.key},
                 {"missing", missing},
                 {"joined", joined},
                 {"waited_ms", (nowNs() - w.startNs) / 1'000'000}}
                .dump());
}

void TcpStoreServer::expireWaiters() {
  int64_t now = nowNs();
  std::vector<int> due;
  for (auto& [fd, cp] : conns_)
    for (const auto& w : cp->waits)
      if (w.deadlineNs <= now && !cp->closing) {
        due.push_back(fd);
        break;
      }
  for (int fd : due) {
    auto found = conns_.find(fd);
    if (found == conns_.end()) continue;
    Conn& c = *found->second;
    for (size_t i = 0; i < c.waits.size();) {
      if (c.waits[i].deadlineNs > now) {
        ++i;
        continue;
      }
      Waiter w = std::move(c.waits[i]);
      c.waits.erase(c.waits.begin() + static_cast<long>(i));
      c.waitBytes -= w.key.size();
      --pendingGets_;
      sendTimeout(c, w);
      if (!conns_.count(fd)) break;
    }
  }
}

void TcpStoreServer::closeConn(int fd, const std::string& reason, bool clean) {
  auto it = conns_.find(fd);
  if (it == conns_.end()) return;
  std::unique_ptr<Conn> c = std::move(it->second);
  conns_.erase(it);
  epoll_ctl(epollFd_, EPOLL_CTL_DEL, fd, nullptr);
  ::close(fd);
  bufferedBytes_ -= c->accounted;
  pendingGets_ -= c->waits.size();
  if (c->stage != 2 || !c->run) return;
  Run& run = *c->run;
  auto& m = run.members[c->rank];
  m.fd = -1;
  --run.live;
  --liveRanks_;
  if (reason.empty()) {
    m.state = "left";
  } else {
    m.state = clean ? "failed" : "lost";
    if (verbose_)
      log::write(fmt::format("rdmabench rendezvous: rank {} on {} {}\n", c->rank,
                             escapeForLog(m.host), escapeForLog(reason)));
    std::string note =
        json{{"rank", c->rank}, {"host", m.host}, {"reason", reason}, {"clean", clean}}.dump();
    // Ranks of this run that join later are told too (join() sends these notes).
    if (tellLateRanksOfFailures_ && !runId_.empty() && run.id == runId_ &&
        refusalNotes_.size() < 16)
      refusalNotes_.push_back(note);
    for (auto& [rank, other] : run.members) {
      if (other.fd < 0) continue;
      auto o = conns_.find(other.fd);
      // A closing connection is not told (its flush could close it, and the run with it).
      if (o != conns_.end() && !o->second->closing) sendFrame(*o->second, kStoreRankLost, note);
    }
  }
  if (run.live == 0) {
    // Every rank that joined has left (or was lost): the run is over. Its keys go, and its
    // run id can be used again (a second run of the same job on a standalone rendezvous).
    if (verbose_)
      log::write(fmt::format(
          "rdmabench rendezvous: run '{}' finished ({} of {} ranks joined): freed {} keys "
          "({} bytes)\n",
          escapeForLog(run.id), run.members.size(), run.worldSize, run.data.size(), run.bytes));
    const size_t freed = run.bytes;
    dataBytes_ -= freed;
    runs_.erase(run.id);
    // Give the pages back: free() keeps them in the process (a stranger that filled the 1 GiB
    // quota and left kept ~1 GB resident), malloc_trim returns every whole free page of every
    // arena to the kernel. A few ms per GiB, and only after a large run.
    if (freed >= kTrimAfterBytes) malloc_trim(0);
  }
}

}  // namespace rdmabench::rendezvous
