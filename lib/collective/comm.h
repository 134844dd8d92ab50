#pragma once
// A communicator: this rank's transport device, one endpoint per peer its algorithms need
// (O(log n), never all n-1), one registered buffer, and the store for out-of-band facts.
//
// Wire-up: every rank creates a connector per peer and publishes its address under
// "addr/<from>/<to>"; then it connects to its peers in wireupOrder() (topology.h): one global
// order of pairs makes the transports' blocking accept sides deadlock-free, and its chains of
// waits are O(log n) long, where ascending rank order chained all n ranks one after another.
//
// Buffer: [0, dataBytes) data area for the algorithms, then a control area of 64-byte slots
// (barrier tokens). Posts take offsets into the data area; a message larger than the
// transport's maxMessageBytes is split the same way on both sides.
//
// Failure: waits run through engine::Progress with the no-progress timeout; its watchdog asks
// the store whether a rank died once a wait stalls. While completions flow (a victim measuring
// with its ring neighbours while an aggressor died) poll() and waitAll() ask too: a counter per
// device poll, a clock read every kBusyCheckPolls polls and the store's non-blocking check at
// most every kBusyCheckEveryNs; so every rank exits within the timeout naming the dead rank and
// its host, busy or not. Thread-safety: one thread.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collective/topology.h"
#include "engine/buffers.h"
#include "engine/link.h"
#include "engine/progress.h"
#include "rendezvous/store.h"
#include "transport/transport.h"

namespace rdmabench::collective {

struct CommOptions {
  std::string transport = "socket";
  transport::DeviceOptions device;
  int64_t timeoutMs = 10'000;  // no-progress timeout and rendezvous waits
  std::vector<int> peers;      // ranks to connect to (see topology.h peersFor)
  uint64_t dataBytes = 4096;   // size of the data area
  // What the data area holds, for errors: "allreduce of up to 64M per rank: input, result and
  // scratch". "" = not said.
  std::string bufferFor;
  // Publish this rank's region (store key "region/<rank>") so that link() can give the peers'
  // regions to one-sided operations (pairs --op write|read).
  bool exportRegion = false;
};

class Communicator {
 public:
  // Busy peer check (above): device polls between clock reads, and the check's cadence (ns).
  static constexpr uint32_t kBusyCheckPolls = 32;
  static constexpr int64_t kBusyCheckEveryNs = 100'000'000;

  // Opens the device, registers the buffer, publishes this rank's host and connects to
  // `options.peers`. Errors: TransportError, TimeoutError / ProtocolError naming the rank;
  // SystemError (allocation) or TransportError (registration) naming the buffer's size in bytes
  // and `options.bufferFor`.
  Communicator(rendezvous::Store& store, int rank, int size, std::string host,
               const CommOptions& options);
  ~Communicator();

  int rank() const { return rank_; }
  int size() const { return size_; }
  uint8_t* data() { return region_->data(); }
  uint64_t dataBytes() const { return dataBytes_; }
  transport::Device& device() { return *device_; }
  rendezvous::Store& store() { return store_; }
  const std::vector<int>& peers() const { return peers_; }
  double wireupSeconds() const { return wireupSeconds_; }

  // Non-blocking posts. While the queue is full a post makes progress itself: completions it
  // sees are queued and delivered by the next poll() (or discarded by waitAll()), never lost,
  // so posting from inside poll()'s callback is allowed. `tag` comes back in poll().
  // Zero-length posts are skipped. UsageError for a rank that is not a peer.
  void postSend(int peer, uint64_t offset, uint64_t bytes, uint32_t tag = 0);
  void postRecv(int peer, uint64_t offset, uint64_t bytes, uint32_t tag = 0);
  // Waits until every posted operation completed. `what` names the phase in errors.
  void waitAll(const std::string& what);
  // Same, the phase named by a step formatted only if an error names it (engine::Step): what
  // timed loops call, so that a wait neither allocates nor formats.
  void waitAll(const engine::Step& step);
  // Polls once; calls `fn(peer, isRecv, tag, bytes)` per completion (all chunks of a split
  // message complete separately), first those queued by posts. Returns the completions
  // delivered. `fn` may post but not call poll() or waitAll() (std::logic_error).
  size_t poll(const std::function<void(int, bool, uint32_t, uint32_t)>& fn);
  uint64_t outstanding() const { return outstanding_; }
  // Completions one post of `bytes` delivers (a message above maxMessageBytes is split).
  uint64_t chunksOf(uint64_t bytes) const;

  // Where the benchmark is, named by every wait's errors before the step (engine::Progress):
  // the stage ("size 4096", "teardown") and whether its iterations are warmup or measured.
  void setStage(std::string stage) { progress_->setStage(std::move(stage)); }
  void setWarmup(bool warmup) { progress_->setWarmup(warmup); }
  // The step named by errors of the waits that follow (poll() included), formatted only if an
  // error names it (engine::Step: no allocation; what timed loops that poll() set).
  void setStep(const engine::Step& step) { progress_->setStep(step); }

  // The point-to-point engines' view of the connection to `peer` (engine/link.h), for
  // engine::runPingPong / runBandwidth: this rank's endpoint to it, the registered buffer laid
  // out as `layout` from the start of the data area, and the peer's region (laid out alike)
  // when CommOptions::exportRegion, else empty. The engines poll progress() and use the
  // engine's contexts: call with no Communicator post outstanding (outstanding() == 0) and
  // leave none of the engine's behind (the engines drain their own). Errors: UsageError for a
  // rank that is not a peer; std::logic_error when the data area is smaller than
  // layout.total(); TimeoutError / ProtocolError for the peer's region (not published in time,
  // malformed, or smaller than layout.total()). Blocks on the store the first time a peer's
  // region is asked for.
  engine::Link link(int peer, const engine::BufferLayout& layout);
  // The progress engine of every wait (the engines' poll loop), with the store's dead-rank
  // watchdog.
  engine::Progress& progress() { return *progress_; }

  // The two ranks of a pair meet (both call it): a token each way over the control slots, both
  // its completions awaited, so no post of either side is outstanding afterwards and each knows
  // the other reached this point (the engines' "caller has synchronised both sides"). Errors
  // name `step` (argument: the peer), as waitAll's.
  void pairSync(int peer, const engine::Step& step);

  // Dissemination barrier over the control slots (ceil(log2 n) rounds, planned at
  // construction: no allocation or formatting per call).
  void barrier();

  // Host name and data-plane address of `rank` (published at construction), cached.
  std::string hostOf(int rank);
  std::string addressOf(int rank);
  // Number of distinct host names among all ranks (reads every rank's entry once).
  int nodeCount();

  // Converts an error seen in a wait into the root cause when the store knows a rank died:
  // waits up to 1.5 s for the news, then rethrows `original`.
  [[noreturn]] void rethrowWithCause(const std::exception& original);

 private:
  uint64_t ctrlOffset() const { return dataBytes_; }
  transport::Endpoint& endpoint(int peer);
  void waitOutstanding();
  void post(bool recv, int peer, uint64_t offset, uint64_t bytes, uint32_t tag);
  void fetchHost(int rank);
  // One device poll's share of the busy peer check (cheap: a counter; see kBusyCheckPolls).
  void busyTick() {
    if (++busyPolls_ % kBusyCheckPolls == 0) busyCheck();
  }
  void busyCheck();

  rendezvous::Store& store_;
  int rank_, size_;
  std::string host_;
  int64_t timeoutMs_;
  uint64_t dataBytes_;
  uint64_t maxMessage_ = 0;
  std::unique_ptr<transport::Device> device_;
  std::unique_ptr<engine::AlignedBuffer> buffer_;
  std::unique_ptr<transport::MemoryRegion> region_;
  std::map<int, std::unique_ptr<transport::Connector>> connectors_;
  std::map<int, std::unique_ptr<transport::Endpoint>> endpoints_;
  std::vector<int> peers_;
  // endpoints_ by rank (null: not a peer): what posts use, no map lookup per post.
  std::vector<transport::Endpoint*> byRank_;
  std::vector<BarrierRound> barrierRounds_;
  std::unique_ptr<engine::Progress> progress_;
  uint64_t outstanding_ = 0;                    // posted, not yet delivered by poll() or waited for
  std::vector<transport::Completion> pending_;  // seen by a post's progress, not delivered
  std::vector<transport::Completion> delivering_;  // being handed to poll()'s callback
  bool inPoll_ = false;
  std::map<int, std::pair<std::string, std::string>> hosts_;
  bool exportRegion_ = false;                       // CommOptions::exportRegion
  std::map<int, transport::RemoteRegion> regions_;  // peers' regions fetched by link()
  double wireupSeconds_ = 0;
  uint32_t busyPolls_ = 0;
  int64_t nextBusyCheckNs_ = 0;
};

}  // namespace rdmabench::collective
