// Client side of the TCP rendezvous store (store.h: TcpStoreClient; docs/rendezvous.md).

#include <poll.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/text_escape.h"
#include "rendezvous/protocol.h"
#include "rendezvous/store.h"
#include "rendezvous/store_protocol.h"

namespace rdmabench::rendezvous {

using nlohmann::json;

namespace {

// The store's connection, retried while refused until the deadline. A refusal to the end names
// who serves a store (rank 0, the --np launcher, `rdmabench rendezvous`), not `rdmabench server`.
Channel connectToStore(const std::string& host, uint16_t port, int64_t timeoutMs) {
  try {
    return Channel::connect(host, port, Deadline(timeoutMs), true);
  } catch (const SystemError& e) {
    if (e.code() != ECONNREFUSED) throw;
    throw SystemError(
        fmt::format("rendezvous store {}: nothing listened there for {:.1f} s (rank 0 serves the "
                    "store: is it running, with the same --rendezvous port? with "
                    "--standalone-rendezvous, `rdmabench rendezvous` does)",
                    formatHostPort(host, port), static_cast<double>(timeoutMs) / 1000),
        ECONNREFUSED);
  }
}

// A string member of an untrusted object, `def` when absent or not a string.
std::string jsonText(const json& j, const char* key, const char* def) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string(def);
}

// The "rank" member of an untrusted object, -1 when absent or not an integer.
long long jsonRank(const json& j) {
  auto it = j.find("rank");
  return it != j.end() && it->is_number_integer() ? it->get<long long>() : -1;
}

// The store connection closed: a forked rank names its dead launcher first (the launcher serves
// the store of `--np`), else `what` alone.
std::string closedBecause(const std::string& what) {
  std::string died = launcherDeath(500);
  return died.empty() ? what : died + ": " + what;
}

// "0-182 (never arrived), 183 on n2 (left)": consecutive ranks in the same state on the same
// host as one range (1000 ranks that never arrived made a line of 16 KB).
std::string describeMissing(const json& j) {
  struct Run {
    long long first, last;
    std::string host, state;
  };
  std::vector<Run> runs;
  for (const auto& m : j.value("missing", json::array())) {
    if (!m.is_object()) continue;
    // Peer-supplied text (a stranger may join a tokenless store): escaped before it is printed.
    std::string state = escapeForLog(jsonText(m, "state", "never arrived"), 64);
    std::string host = escapeForLog(jsonText(m, "host", ""), 256);
    const long long rank = jsonRank(m);
    if (!runs.empty() && rank >= 0 && runs.back().last + 1 == rank && runs.back().host == host &&
        runs.back().state == state)
      runs.back().last = rank;
    else
      runs.push_back({rank, rank, std::move(host), std::move(state)});
  }
  std::string s;
  for (const Run& r : runs)
    s += fmt::format(
        "{}{}{} ({})", s.empty() ? "" : ", ",
        r.first == r.last ? fmt::format("{}", r.first) : fmt::format("{}-{}", r.first, r.last),
        r.host.empty() ? "" : " on " + r.host, r.state);
  return s;
}

}  // namespace

TcpStoreClient::TcpStoreClient(const std::string& host, uint16_t port, const JoinInfo& join,
                               int64_t connectTimeoutMs)
    : channel_(connectToStore(host, port, connectTimeoutMs)),
      join_(join),
      where_(formatHostPort(host, port)),
      replyMs_(std::max<int64_t>(10'000, connectTimeoutMs)) {
  Deadline dl(connectTimeoutMs);
  clientHandshake(channel_, dl, join.token);
  json hello{{"run_id", join.runId},
             {"rank", join.rank},
             {"world_size", join.worldSize},
             {"host", join.host}};
  if (!join.description.empty()) hello["description"] = join.description;
  channel_.sendJson(kStoreJoin, hello, dl);
  Frame f = channel_.receive(dl, "the rendezvous server to accept the join");
  if (f.type == kError)
    throw ProtocolError(fmt::format("rendezvous {} refused rank {}: {}", where_, join.rank,
                                    escapeForLog(f.text(), 1024)));
  if (f.type != kStoreJoinAck)
    throw ProtocolError(
        fmt::format("rendezvous {} answered the join with message type {}", where_, f.type));
}

TcpStoreClient::~TcpStoreClient() {
  if (!left_) leave(true, "");
}

std::string TcpStoreClient::describe() const {
  return via_.empty() ? "tcp " + where_ : fmt::format("{} (tcp {})", via_, where_);
}

void TcpStoreClient::throwLost(const std::string& payload) {
  json j = json::parse(payload, nullptr, false);
  // Several pushes may be queued (a killed rank, then neighbours failing because of it): prefer
  // the first rank that vanished without notice, the root cause. Only notices are read here
  // (peekType): a reply on the way belongs to a request and is left for it.
  json best = j;
  for (int i = 0; i < 20 && best.is_object() && best.value("clean", true); ++i) {
    pollfd p{channel_.fd(), POLLIN, 10};
    if (::poll(&p, 1, 10) <= 0) continue;
    try {
      if (channel_.peekType() != kStoreRankLost) break;
      Frame f = channel_.receive(Deadline(200), "rendezvous notifications");
      json k = json::parse(f.payload.begin(), f.payload.end(), nullptr, false);
      if (k.is_object() && !k.value("clean", true)) best = k;
    } catch (const std::exception&) {
      break;
    }
  }
  if (!best.is_object()) throw ProtocolError("rendezvous: malformed rank-lost notification");
  // Host and reason come from whoever joined as that rank (a stranger, on a store without a
  // token): escaped, so no escape sequence or line break reaches the terminal raw.
  std::string host = escapeForLog(jsonText(best, "host", ""), 256);
  // A PeerError: the root cause a peer's failure reports, preferred over the data path's own
  // symptom (Progress::fail keeps it; a bare ProtocolError there was dropped for "EOF").
  throw PeerError(fmt::format("rank {}{} {}", jsonRank(best),
                              host.empty() ? "" : " on host " + host,
                              escapeForLog(jsonText(best, "reason", "was lost"), 4200)));
}

// A rank-lost notice that arrives while a request waits ends the request with a PeerError, but
// the server still answers the request. Read that answer first, or the next request (the
// salvage of a partial report after the failure) reads it as its own: a set's "ok" taken for a
// get's value, every later reply one request behind (noise --np 4 with a rank killed kept 1 or
// 2 of the 3 results measured). A set and an add are answered at once; a get of a key the
// server holds too, so a get waits a moment for its answer and otherwise is owed: its timeout
// answer (which names the key) is dropped when it comes; its value, if the key is set later,
// cannot be told from a later get's or add's (callers after a PeerError check what they read).
TcpStoreClient::Reply TcpStoreClient::request(uint16_t type, const std::string& payload,
                                              uint16_t want, int64_t waitMs,
                                              const std::string& what) {
  Deadline sendDl(replyMs_);
  channel_.send(type, payload.data(), payload.size(), sendDl);
  // The server answers a get by its own deadline; allow it 5 s more to say so.
  Deadline dl(waitMs < 0 ? -1 : waitMs + 5000);
  std::string lost;  // the first rank-lost notice read while waiting
  std::string getKey;
  if (type == kStoreGet) {
    std::string rest;
    decodeKeyRecord(std::string_view(payload).substr(4), getKey, rest);
  }
  for (;;) {
    Frame f;
    if (!lost.empty() && type == kStoreGet) {
      // The get's answer now only if the server holds the key (it answers such a get at once).
      pollfd p{channel_.fd(), POLLIN, 0};
      int t = -1;
      if (::poll(&p, 1, 200) > 0) {
        try {
          t = channel_.peekType();
        } catch (const std::exception&) {
        }
      }
      if (t != kStoreValue && t != kStoreTimeout) {
        owedGets_.push_back(getKey);
        throwLost(lost);
      }
    }
    try {
      f = channel_.receive(lost.empty() ? dl : Deadline(replyMs_), what);
    } catch (const ProtocolError& e) {
      if (!lost.empty()) throwLost(lost);
      throw ProtocolError(closedBecause(fmt::format(
          "rendezvous server {} closed the connection while waiting for {} (rank 0 or the "
          "launcher died?): {}",
          where_, what, e.what())));
    } catch (const std::exception&) {
      if (!lost.empty()) throwLost(lost);
      throw;
    }
    std::string p = f.text();
    if (f.type == kStoreRankLost) {
      if (lost.empty()) lost = std::move(p);
      continue;
    }
    if (f.type == kStoreTimeout && !owedGets_.empty()) {
      // An owed get's timeout answer (it names its key): not this request's.
      json j = json::parse(p, nullptr, false);
      const std::string key = j.is_object() ? jsonText(j, "key", "") : "";
      auto it = std::find(owedGets_.begin(), owedGets_.end(), key);
      if (it != owedGets_.end() && !(type == kStoreGet && key == getKey)) {
        owedGets_.erase(it);
        continue;
      }
    }
    if (f.type == kStoreValue && want == kStoreOk && !owedGets_.empty()) {
      owedGets_.erase(owedGets_.begin());  // a set is answered "ok": an owed get's value
      continue;
    }
    if (!lost.empty()) throwLost(lost);  // this request's answer is read: the stream stays in step
    if (f.type == kError)
      throw ProtocolError(fmt::format("rendezvous {} reported: {}", where_, escapeForLog(p, 1024)));
    if (f.type == want || f.type == kStoreTimeout) return Reply{f.type, std::move(p)};
    throw ProtocolError(fmt::format("rendezvous {} sent message type {} while waiting for {}",
                                    where_, f.type, what));
  }
}

void TcpStoreClient::set(const std::string& key, const std::string& value) {
  request(kStoreSet, encodeKeyRecord(key, value), kStoreOk, replyMs_, "set '" + key + "'");
}

std::string TcpStoreClient::get(const std::string& key, int64_t timeoutMs) {
  uint32_t t = timeoutMs < 0 ? UINT32_MAX
                             : static_cast<uint32_t>(std::min<int64_t>(timeoutMs, UINT32_MAX - 1));
  std::string head(4, '\0');
  putLe(reinterpret_cast<uint8_t*>(head.data()), t, 4);
  Reply r = request(kStoreGet, head + encodeKeyRecord(key, ""), kStoreValue, timeoutMs,
                    "key '" + key + "'");
  if (r.type == kStoreTimeout) {
    json j = json::parse(r.payload, nullptr, false);
    std::string missing = j.is_object() ? describeMissing(j) : "";
    int joined = j.is_object() ? j.value("joined", 0) : 0;
    // The server bounds every wait (StoreLimits::maxGetWaitMs) and says how long it waited.
    int64_t waited = j.is_object() ? j.value("waited_ms", timeoutMs) : timeoutMs;
    bool capped = timeoutMs < 0 || waited + 1000 < timeoutMs;
    throw TimeoutError(fmt::format(
        "rendezvous {}: rank {} waited {:.1f} s for '{}'{}; {}", where_, join_.rank,
        static_cast<double>(waited) / 1000, key,
        capped ? " (the rendezvous server's limit on a wait)" : "",
        missing.empty()
            ? fmt::format("all {} ranks are connected (one of them is stuck or slow)", joined)
            : "missing rank(s): " + missing));
  }
  return r.payload;
}

int64_t TcpStoreClient::add(const std::string& key, int64_t delta) {
  Reply r = request(kStoreAdd, encodeKeyRecord(key, encodeU64(static_cast<uint64_t>(delta))),
                    kStoreValue, replyMs_, "add '" + key + "'");
  return static_cast<int64_t>(decodeU64(r.payload));
}

void TcpStoreClient::checkPeers() {
  if (left_ || !channel_.readable()) return;
  Frame f;
  try {
    f = channel_.receive(Deadline(2000), "rendezvous notifications");
  } catch (const ProtocolError& e) {
    throw ProtocolError(closedBecause(fmt::format(
        "rendezvous server {} went away (rank 0 or the launcher died): {}", where_, e.what())));
  }
  if (f.type == kStoreRankLost) throwLost(f.text());
  if (f.type == kError)
    throw ProtocolError(
        fmt::format("rendezvous {} reported: {}", where_, escapeForLog(f.text(), 1024)));
  throw ProtocolError(fmt::format("rendezvous {} sent unexpected message type {}", where_, f.type));
}

void TcpStoreClient::leave(bool ok, const std::string& reason) {
  if (left_) return;
  left_ = true;
  try {
    channel_.sendJson(kStoreBye, json{{"ok", ok}, {"reason", reason}}, Deadline(1000));
  } catch (const std::exception&) {
  }
  channel_.close();
}

}  // namespace rdmabench::rendezvous
