#pragma once
// SocketEndpoint: one connected, non-blocking TCP socket carrying framed messages (see
// framing.h). Posts only enqueue; SocketDevice::poll() calls progress() to move bytes and
// harvest() to report completions. Not thread-safe (one thread per Device).

#include <sys/epoll.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/socket/framing.h"
#include "transport/socket/net_util.h"
#include "transport/socket/ring.h"
#include "transport/transport.h"

namespace rdmabench::transport::socket {

class SocketDevice;
struct RegionSlot;

// Receive staging buffer per endpoint: small messages arrive with one recv() and are copied out.
inline constexpr size_t kStageBytes = 64 * 1024;
// Payload remainders of at least this many bytes are read straight into the target buffer.
// Below it one recv() brings header and payload into the staging buffer and a memcpy moves the
// payload: at 4 KiB that is cheaper than the extra recv() of a header-alone read (loopback
// ping-pong, bench/socket_like_for_like.sh: 4 KiB busy poll 1.46x -> 1.06x the minimal loop).
inline constexpr size_t kDirectReadBytes = 32768;
// iovecs per sendmsg() (two per queued message: header and payload). poll() sends what single
// posts queued with up to kPollIov; postBatch() with up to kMaxIov (Linux's IOV_MAX), so a
// batch of up to 512 non-inline posts leaves in one sendmsg() (a larger one in several).
inline constexpr int kPollIov = 64;
inline constexpr int kMaxIov = 1024;
// recv() calls per endpoint per poll(), so one busy stream cannot starve the others.
inline constexpr int kMaxReadsPerPoll = 16;

class SocketEndpoint : public Endpoint {
 public:
  // Takes over a connected TCP socket `fd` (made non-blocking with TCP_NODELAY here).
  // `peer` is the peer's listening address ("127.0.0.1:40123"), `role` "connect" or "accept".
  SocketEndpoint(SocketDevice& device, Fd fd, std::string peer, std::string role);
  ~SocketEndpoint() override;

  // After the connection failed, posts return kOk and complete with the connection's error
  // status and text (they never throw for that). Ranges outside the region, lengths above
  // Caps::maxMessageBytes and malformed remote keys throw UsageError.
  PostResult postSend(const MemoryRegion& mr, uint64_t offset, uint32_t length, uint64_t context,
                      bool signaled) override;
  PostResult postRecv(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                      uint64_t context) override;
  PostResult postWrite(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                       const RemoteRegion& remote, uint64_t remoteOffset, uint64_t context,
                       bool signaled) override;
  PostResult postRead(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                      const RemoteRegion& remote, uint64_t remoteOffset, uint64_t context) override;
  // Validates the op once (the checks of the single posts: range, maxMessageBytes, remote key
  // and range; UsageError naming the op and the peer) and resolves the local address and, for
  // write/read, the remote key and offset.
  PreparedOp prepare(OpKind op, const MemoryRegion& mr, uint64_t offset, uint32_t length,
                     const RemoteRegion* remote = nullptr, uint64_t remoteOffset = 0) override;
  // Queues what fits of the batch (no range check: prepare did it). A batch of two or more then
  // hands everything queued to the kernel with one sendmsg() of up to kMaxIov iovecs (more
  // when the batch has more; a short write leaves the rest for poll(), as for single posts);
  // a batch of one is left for poll() like a single post, which coalesces consecutive posts.
  // Receives are only queued. Returns how many were accepted: fewer when the queue is full.
  uint32_t postBatch(const PreparedOp& op, const BatchPost* posts, uint32_t count) override;
  std::string peerName() const override { return peer_; }
  std::optional<uint64_t> retransmits() const override;  // TCP_INFO tcpi_total_retrans
  ConnectionInfo info() const override;

  // --- driven by SocketDevice ---
  // Moves bytes in both directions without blocking.
  void progress();
  // Writes up to `max` finished completions to `out`; returns how many.
  size_t harvest(Completion* out, size_t max);
  // Fills `c` from an entry's errno-style status and error id; `flushed`: failed only because
  // the connection failed on its other side (CompletionStatus::kFlushed).
  static void setStatus(Completion& c, int status, uint32_t errorId, bool flushed = false);
  // True when poll() can make progress without new socket events.
  bool hasWork() const;
  // Brings the epoll interest set in line with what the endpoint waits for.
  void updateInterest();
  // The connected socket (-1 once failed): what SocketDevice matches epoll events with.
  int fd() const { return fd_.get(); }
  // Event mode: after a progress() that left the socket empty (the last recv() returned
  // EAGAIN or less than asked) while the endpoint waits for bytes, later progress() calls leave
  // out its recv(), which could only return EAGAIN, until wakeRx(): SocketDevice calls it when
  // epoll_wait (level-triggered, EPOLLIN wanted) reports the socket, and for every endpoint
  // after kQuietPolls polls without an epoll_wait (a loop that never waits still reads).
  // Anything staged or a new receive to match still runs. Busy-poll mode never skips.
  void wakeRx() { rxQuiet_ = false; }
  // True while progress() leaves out this endpoint's recv() (see wakeRx).
  bool rxQuiet() const { return rxQuiet_; }
  // A local region is being deregistered: stop writing into it.
  void forgetRegion(const uint8_t* data, uint64_t size);

 private:
  struct SqEntry {
    OpKind op = OpKind::kSend;
    bool signaled = true;
    bool done = false;
    int status = 0;
    bool flushed = false;  // failed because the connection failed on the receive side
    uint32_t bytes = 0;
    uint64_t context = 0;
    uint8_t* readDest = nullptr;   // kRead: where the response lands
    uint8_t* inlineBuf = nullptr;  // fixed per slot: header + copy of a small send, contiguous
    uint32_t errorId = 0;          // SocketDevice::keepError id when status != 0
  };
  struct RqEntry {
    uint8_t* data = nullptr;
    uint32_t length = 0;
    uint32_t bytes = 0;
    bool done = false;
    int status = 0;
    bool flushed = false;  // failed because the connection failed on the send side
    uint64_t context = 0;
    uint32_t errorId = 0;  // SocketDevice::keepError id when status != 0
  };
  struct TxItem {
    uint8_t header[kHeaderBytes];
    const uint8_t* frame = nullptr;  // the header: `header`, or an inline slot with the payload
    bool contiguous = false;         // payload follows the header at `frame` (one iovec)
    const uint8_t* payload = nullptr;
    uint32_t payloadLen = 0;
    size_t sent = 0;        // header+payload bytes already handed to the kernel
    SqEntry* sq = nullptr;  // completes when sent (send/write); nullptr for read responses
    bool response = false;  // a read response (counts against kResponseDepth)
  };
  struct Incoming {
    bool active = false;
    uint8_t* dest = nullptr;  // nullptr = discard the payload
    uint32_t length = 0;
    uint32_t got = 0;
    RqEntry* rq = nullptr;
    SqEntry* read = nullptr;
  };
  enum class RxStall { kNeedBytes, kNeedRecv, kNeedResponseSlot };

  // Queues one op on [data, +length) with its encoded header `header` (kHeaderBytes).
  PostResult postOp(OpKind op, uint8_t* data, uint32_t length, const uint8_t* header,
                    uint64_t context, bool signaled);
  PostResult postOp(OpKind op, uint8_t* data, uint32_t length, const WireHeader& h,
                    uint64_t context, bool signaled) {
    uint8_t header[kHeaderBytes];
    encodeHeader(h, header);
    return postOp(op, data, length, header, context, signaled);
  }
  PostResult queueRecv(uint8_t* data, uint32_t length, uint64_t context);
  void checkLocal(const char* call, const MemoryRegion& mr, uint64_t offset, uint32_t length) const;
  uint64_t checkRemote(const char* call, const RemoteRegion& remote, uint64_t remoteOffset,
                       uint32_t length) const;
  // Sends what is queued, up to `maxIov` iovecs per sendmsg().
  void progressTx(int maxIov);
  // Appends the finished send-queue entries to out[n, max); returns the new count.
  size_t harvestSq(Completion* out, size_t n, size_t max);
  void progressRx();
  // Returns bytes read, or -1 (would block, or the connection failed: see closed_).
  ssize_t recvSome(uint8_t* dst, size_t cap);
  // Interprets the header at the staging position; false when stalled or failed.
  bool startIncoming();
  // startIncoming() per message kind (endpoint_io.cc).
  bool matchSend(const WireHeader& h, Incoming& in);
  const RegionSlot* targetRegion(const WireHeader& h);
  bool queueReadResponse(const WireHeader& h, const RegionSlot& region);
  bool matchReadResponse(const WireHeader& h, Incoming& in);
  void finishIncoming();
  // Closes the connection after a failure: every outstanding op completes with `err` and the
  // kept `text`. `onTx`: the failure came from sending (its ops are reported first and the
  // receives are flushed), else from receiving (the sends, writes and reads are flushed), so
  // the first error completion names the operation that failed.
  void fail(int err, const std::string& text, bool reportEvenIfIdle, bool onTx);
  void protocolError(const std::string& what);

  SocketDevice& device_;
  Fd fd_;
  std::string peer_, local_, role_;
  Ring<SqEntry> sq_;
  Ring<RqEntry> rq_;
  Ring<TxItem> wire_;
  Ring<SqEntry*> pendingReads_;
  size_t rqMatched_ = 0;  // rq_ entries (from the front) already matched to a message
  uint32_t responses_ = 0;
  std::vector<uint8_t> inline_;
  std::unique_ptr<uint8_t[]> stage_;
  size_t stageBegin_ = 0, stageEnd_ = 0;
  bool drained_ = false;      // the last recv returned less than asked: socket empty
  bool txBlocked_ = false;    // the last send hit a full socket buffer: poll(POLLOUT) first
  bool expectLarge_ = false;  // the last message had >= kDirectReadBytes: read headers alone
  bool rxQuiet_ = false;      // event mode, socket found empty: progress() skips recv()
  Incoming cur_;
  RxStall rxStall_ = RxStall::kNeedBytes;
  uint32_t interest_ = 0;  // epoll events currently registered
  bool closed_ = false;
  int closedStatus_ = 0;
  uint32_t closedErrorId_ = 0;  // the failure's text (SocketDevice::keepError)
  bool closedOnTx_ = false;     // the failure came from sending: harvest reports the sq first
  bool unsolicited_ = false;    // report one error completion (context 0) on the next harvest
  // TEST ONLY (RDMABENCH_TEST_CORRUPT_EVERY=N, docs/transport.md): flip the first byte of every
  // Nth incoming payload longer than 8 bytes, so tests can prove that --check catches bad data.
  uint64_t corruptEvery_ = 0;
  uint64_t corruptCount_ = 0;
};

}  // namespace rdmabench::transport::socket
