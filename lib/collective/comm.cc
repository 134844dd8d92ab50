#include "collective/comm.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <new>
#include <set>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collective/topology.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "rendezvous/protocol.h"

namespace rdmabench::collective {

using nlohmann::json;

namespace {

constexpr uint64_t kSlotBytes = 64;
constexpr uint64_t kCtrlSlots = 64;  // send slot + one receive slot per barrier round (<= 32)
constexpr uint64_t kPairSlot = kCtrlSlots - 1;  // pairSync's receive slot

inline uint64_t makeContext(bool recv, int peer, uint32_t tag) {
  return (recv ? 1ull << 63 : 0) | static_cast<uint64_t>(peer & 0x7fffff) << 32 | tag;
}

}  // namespace

Communicator::Communicator(rendezvous::Store& store, int rank, int size, std::string host,
                           const CommOptions& o)
    : store_(store),
      rank_(rank),
      size_(size),
      host_(std::move(host)),
      timeoutMs_(o.timeoutMs),
      dataBytes_((std::max<uint64_t>(o.dataBytes, 64) + 63) / 64 * 64) {
  int64_t start = nowNs();
  device_ = transport::openDevice(o.transport, o.device);
  maxMessage_ = device_->caps().maxMessageBytes;
  const uint64_t total = dataBytes_ + kSlotBytes * kCtrlSlots;
  // A failure here is this rank's own (a memory or locked-memory limit): say which buffer and
  // why it is that large, so the user can lower --size or raise the limit.
  const std::string buffer = fmt::format(
      "the message buffer of {} bytes (data area {} bytes{}, control slots {} bytes)", total,
      dataBytes_, o.bufferFor.empty() ? "" : " for " + o.bufferFor, kSlotBytes * kCtrlSlots);
  try {
    buffer_ = std::make_unique<engine::AlignedBuffer>(total);
  } catch (const SystemError& e) {
    throw SystemError(fmt::format("allocating {}: posix_memalign", buffer), e.code());
  } catch (const std::bad_alloc&) {
    throw SystemError(fmt::format("allocating {}", buffer), ENOMEM);
  }
  try {
    region_ = device_->registerMemory(buffer_->data(), total);
  } catch (const TransportError& e) {
    throw TransportError(fmt::format("registering {}: {}", buffer, e.what()));
  }
  std::set<int> ps(o.peers.begin(), o.peers.end());
  ps.erase(rank_);
  peers_.assign(ps.begin(), ps.end());

  exportRegion_ = o.exportRegion;
  if (o.exportRegion)
    store_.set(fmt::format("region/{}", rank_),
               rendezvous::toHex(region_->exportRegion().encode()));
  std::string myAddr = o.device.localHost;
  store_.set(fmt::format("host/{}", rank_), json{{"host", host_}, {"addr", myAddr}}.dump());
  for (int p : peers_) {
    connectors_[p] = device_->createConnector();
    auto a = connectors_[p]->localAddress();
    store_.set(fmt::format("addr/{}/{}", rank_, p), std::string(a.begin(), a.end()));
  }
  // A peer that died before connecting ends our connect at once through the store.
  ScopedConnectCheck deadPeers([this] {
    try {
      store_.checkPeers();
    } catch (const PeerError&) {
      throw;
    } catch (const std::exception& e) {
      throw PeerError(e.what());  // the store's word on a dead rank: reported as it is
    }
  });
  // One global order of pairs, and chains of waits O(log n) long (topology.h wireupOrder).
  for (int p : wireupOrder(rank_, peers_)) {
    std::string a = store_.get(fmt::format("addr/{}/{}", p, rank_), timeoutMs_);
    try {
      endpoints_[p] =
          connectors_[p]->connect(std::vector<uint8_t>(a.begin(), a.end()), Deadline(timeoutMs_));
    } catch (const InterruptedError&) {
      throw;
    } catch (const PeerError&) {
      throw;
    } catch (const std::exception& e) {
      store_.checkPeers();
      throw TransportError(fmt::format("rank {}: connecting to rank {} over {}: {}", rank_, p,
                                       o.transport, e.what()));
    }
  }
  byRank_.assign(static_cast<size_t>(size_), nullptr);
  for (auto& [p, ep] : endpoints_)
    byRank_[static_cast<size_t>(p)] = ep.get();
  barrierRounds_ = disseminationRounds(rank_, size_);
  progress_ = std::make_unique<engine::Progress>(
      *device_, timeoutMs_, [this] { store_.checkPeers(); }, std::string(),  // steps name peers
      o.device.progress);
  wireupSeconds_ = static_cast<double>(nowNs() - start) / 1e9;
}

Communicator::~Communicator() {
  // Endpoints before connectors, region, buffer and finally the device.
  progress_.reset();
  endpoints_.clear();
  connectors_.clear();
  region_.reset();
  buffer_.reset();
  device_.reset();
}

transport::Endpoint& Communicator::endpoint(int peer) {
  if (peer < 0 || peer >= size_ || !byRank_[static_cast<size_t>(peer)])
    throw UsageError(fmt::format("rank {}: rank {} is not a connected peer", rank_, peer));
  return *byRank_[static_cast<size_t>(peer)];
}

engine::Link Communicator::link(int peer, const engine::BufferLayout& layout) {
  transport::Endpoint& ep = endpoint(peer);
  if (layout.total() > dataBytes_)
    throw std::logic_error(
        fmt::format("Communicator::link: a layout of {} bytes in a data area of {}", layout.total(),
                    dataBytes_));
  engine::Link l{&ep, region_.get(), {}, layout};
  if (!exportRegion_) return l;
  auto known = regions_.find(peer);
  if (known == regions_.end()) {
    const std::string what = fmt::format("the region of rank {}", peer);
    // decode() bounds the key; fromHex bounds what is read at the encoding's largest size.
    transport::RemoteRegion r = transport::RemoteRegion::decode(rendezvous::fromHex(
        store_.get(fmt::format("region/{}", peer), timeoutMs_), 64 + transport::kMaxKeyBytes));
    if (r.length < layout.total())
      throw ProtocolError(fmt::format("{}: {} bytes, less than the {} bytes of the layout", what,
                                      r.length, layout.total()));
    known = regions_.emplace(peer, std::move(r)).first;
  }
  l.remote = known->second;
  return l;
}

void Communicator::post(bool recv, int peer, uint64_t offset, uint64_t bytes, uint32_t tag) {
  if (bytes == 0) return;
  transport::Endpoint& ep = endpoint(peer);
  const uint64_t chunk = maxMessage_ ? std::min<uint64_t>(maxMessage_, 1ull << 30) : 1ull << 30;
  for (uint64_t done = 0; done < bytes; done += chunk) {
    uint32_t len = static_cast<uint32_t>(std::min(chunk, bytes - done));
    uint64_t ctx = makeContext(recv, peer, tag);
    for (;;) {
      transport::PostResult r = recv ? ep.postRecv(*region_, offset + done, len, ctx)
                                     : ep.postSend(*region_, offset + done, len, ctx);
      if (r == transport::PostResult::kOk) break;
      // Queue full: make progress. The completions belong to the caller (poll() delivers them
      // next); this may run inside poll()'s callback, which is why poll() hands out copies
      // and is not itself inside Progress::pollOnce any more.
      progress_->pollOnce([this](const transport::Completion& c) { pending_.push_back(c); });
    }
    ++outstanding_;
  }
}

uint64_t Communicator::chunksOf(uint64_t bytes) const {
  const uint64_t chunk = maxMessage_ ? std::min<uint64_t>(maxMessage_, 1ull << 30) : 1ull << 30;
  return (bytes + chunk - 1) / chunk;
}

void Communicator::postSend(int peer, uint64_t offset, uint64_t bytes, uint32_t tag) {
  post(false, peer, offset, bytes, tag);
}

void Communicator::postRecv(int peer, uint64_t offset, uint64_t bytes, uint32_t tag) {
  post(true, peer, offset, bytes, tag);
}

size_t Communicator::poll(const std::function<void(int, bool, uint32_t, uint32_t)>& fn) {
  if (inPoll_) throw std::logic_error("Communicator::poll called from inside its own callback");
  inPoll_ = true;
  struct Reset {
    Communicator& c;
    ~Reset() {
      c.inPoll_ = false;
      c.delivering_.clear();
    }
  } reset{*this};
  if (pending_.empty()) {
    try {
      busyTick();
      progress_->pollOnce([this](const transport::Completion& c) { pending_.push_back(c); });
    } catch (const InterruptedError&) {
      throw;
    } catch (const std::exception& e) {
      rethrowWithCause(e);
    }
  }
  // Deliver from a second vector: posts made by `fn` may append to pending_ meanwhile.
  delivering_.swap(pending_);
  for (const transport::Completion& c : delivering_) {
    --outstanding_;
    fn(static_cast<int>((c.context >> 32) & 0x7fffff), (c.context >> 63) != 0,
       static_cast<uint32_t>(c.context & 0xffffffffu), c.bytes);
  }
  return delivering_.size();
}

void Communicator::waitAll(const std::string& what) {
  if (inPoll_) throw std::logic_error("Communicator::waitAll called from inside poll()");
  // Completions queued by posts are done operations the caller waits for anyway.
  outstanding_ -= pending_.size();
  pending_.clear();
  if (outstanding_ == 0) return;
  progress_->setPhase(what);
  waitOutstanding();
}

void Communicator::waitAll(const engine::Step& step) {
  if (inPoll_) throw std::logic_error("Communicator::waitAll called from inside poll()");
  outstanding_ -= pending_.size();
  pending_.clear();
  if (outstanding_ == 0) return;
  progress_->setStep(step);
  waitOutstanding();
}

void Communicator::waitOutstanding() {
  try {
    while (outstanding_ > 0) {
      busyTick();
      progress_->pollOnce([this](const transport::Completion&) { --outstanding_; });
    }
  } catch (const InterruptedError&) {
    throw;
  } catch (const std::exception& e) {
    rethrowWithCause(e);
  }
}

void Communicator::busyCheck() {
  const int64_t now = nowNs();
  if (now < nextBusyCheckNs_) return;
  nextBusyCheckNs_ = now + kBusyCheckEveryNs;
  try {
    store_.checkPeers();
  } catch (const PeerError&) {
    throw;
  } catch (const ProtocolError& e) {  // the store went away: say where we were, as the watchdog
    throw ProtocolError(fmt::format("{} (during {})", e.what(), progress_->where()));
  }
}

void Communicator::rethrowWithCause(const std::exception& original) {
  // A dead peer shows up in the data path (connection reset, no progress) at about the same
  // time as the store learns of it; prefer the store's answer, which names rank and host.
  if (dynamic_cast<const PeerError*>(&original))  // that answer already: no need to wait
    throw PeerError(fmt::format("rank {}: {}", rank_, original.what()));
  Deadline dl(1500);
  while (!dl.expired()) {
    store_.checkPeers();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (dynamic_cast<const TimeoutError*>(&original))
    throw TimeoutError(fmt::format("rank {}: {}", rank_, original.what()));
  throw TransportError(fmt::format("rank {}: {}", rank_, original.what()));
}

void Communicator::pairSync(int peer, const engine::Step& step) {
  postRecv(peer, ctrlOffset() + kSlotBytes * kPairSlot, 8);
  postSend(peer, ctrlOffset(), 8);
  waitAll(step);
}

void Communicator::barrier() {
  for (size_t k = 0; k < barrierRounds_.size(); ++k) {
    const BarrierRound& r = barrierRounds_[k];
    postRecv(r.recvFrom, ctrlOffset() + kSlotBytes * (k + 1), 8);
    postSend(r.sendTo, ctrlOffset(), 8);
    waitAll(
        engine::Step{"barrier round {}: waiting for rank {}", static_cast<int64_t>(k), r.recvFrom});
  }
}

void Communicator::fetchHost(int r) {
  if (hosts_.count(r)) return;
  json j = json::parse(store_.get(fmt::format("host/{}", r), timeoutMs_), nullptr, false);
  if (!j.is_object()) throw ProtocolError(fmt::format("malformed host entry of rank {}", r));
  hosts_[r] = {j.value("host", std::string()), j.value("addr", std::string())};
}

std::string Communicator::hostOf(int r) {
  fetchHost(r);
  return hosts_[r].first;
}

std::string Communicator::addressOf(int r) {
  fetchHost(r);
  return hosts_[r].second;
}

int Communicator::nodeCount() {
  std::set<std::string> names;
  for (int r = 0; r < size_; ++r)
    names.insert(hostOf(r));
  return static_cast<int>(names.size());
}

}  // namespace rdmabench::collective
