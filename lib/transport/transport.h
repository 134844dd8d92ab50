#pragma once
// The whole transport boundary of rdmabench (see docs/transport.md for the full contract).
//
// A transport moves bytes between registered buffers. It knows nothing of rendezvous, size
// sweeps or reports; its addresses are opaque bytes (<= kMaxAddressBytes) that the control
// channel carries to the peer. Shapes follow gloo's Device/Pair, NCCL's net plugin (opaque
// handle, posts never block) and UCX uct (OK / retry-on-no-resource).
//
// Threading: a Device and everything created from it belong to one thread at a time (the
// benchmark thread). No backend starts threads of its own on the data path; progress happens
// only inside Device::poll() (and Device::waitForEvent()).
//
// Ordering and completion rules (all backends):
//  - An Endpoint is reliable, connected and ordered (RC semantics).
//  - Receives are matched to incoming sends in the order they were posted.
//  - Send/write/read completions of one endpoint are reported in post order.
//  - A post returns kRetry when its queue is full: call Device::poll() and post again.
//  - Buffers passed to a post must stay registered and untouched until its completion
//    (or, for unsignaled posts, until a later signaled post on that endpoint completes).
//  - One-sided writes produce no completion at the target. Where Caps::rmaNeedsTargetProgress
//    is set, written data lands only while the target calls Device::poll().

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "transport/info.h"

namespace rdmabench::transport {

// Largest opaque address a Connector may produce (gloo uses 192, NCCL 128; verbs with a GID
// and rdma_cm data fits easily).
inline constexpr size_t kMaxAddressBytes = 256;
// Largest remote key (verbs rkey: 4 bytes; libfabric keys: 8 bytes; raw keys up to 32).
inline constexpr size_t kMaxKeyBytes = 32;

// Result of a post. kRetry: the queue is full; poll() for completions, then post again.
enum class [[nodiscard]] PostResult{kOk, kRetry};

// Work request kinds, as they appear in completions.
enum class OpKind : uint8_t { kSend, kRecv, kWrite, kRead };

const char* toString(OpKind op);

// Caps (what a device can do) is defined in transport/info.h.

// Outcome of one work request. Anything but kSuccess is a failure; Device::errorText() tells
// why (the library's own text plus QP/peer detail).
enum class CompletionStatus : uint8_t {
  kSuccess = 0,
  kError,      // failed (transport error, peer gone, protocol error, ...)
  kTruncated,  // a receive shorter than the incoming message (verbs LOC_LEN, FI_ETRUNC, EMSGSIZE)
  kFlushed,    // flushed after an earlier failure of its connection (verbs WR_FLUSH, FI_ECANCELED)
};

const char* toString(CompletionStatus status);

// One completed work request: plain data (24 bytes), no text. On failure `code` is the
// library's own status (ibv_wc_status, the positive libfabric/errno error number) and
// `errorId` names the failure for Device::errorText(), which is the only place its text is
// formatted or kept.
struct Completion {
  uint64_t context = 0;  // the value given at post time
  uint32_t bytes = 0;    // receives: bytes that arrived; others: bytes posted (0 on failure)
  OpKind op = OpKind::kSend;
  CompletionStatus status = CompletionStatus::kSuccess;
  int32_t code = 0;      // the library's status; 0 on success
  uint32_t errorId = 0;  // key for Device::errorText(); 0 on success

  bool ok() const { return status == CompletionStatus::kSuccess; }
};

// What a peer needs to write into / read from a region: address (virtual address or offset,
// as the backend decides), length in bytes and the backend's key bytes.
struct RemoteRegion {
  uint64_t addr = 0;
  uint64_t length = 0;
  std::vector<uint8_t> key;  // <= kMaxKeyBytes

  // Flat little-endian encoding for the control channel; decode() throws ProtocolError on
  // malformed input (wrong length, key too long).
  std::vector<uint8_t> encode() const;
  static RemoteRegion decode(const std::vector<uint8_t>& bytes);
};

// A registered buffer. Deregisters in its destructor; must not outlive its Device.
class MemoryRegion {
 public:
  virtual ~MemoryRegion() = default;
  virtual uint8_t* data() const = 0;
  virtual size_t size() const = 0;  // bytes
  virtual RemoteRegion exportRegion() const = 0;
};

// A work request validated once and posted many times (Endpoint::prepare / postBatch): the
// op, the local range and, for write/read, the remote range. The backend resolves what it can
// at prepare time (addresses, keys) into the `resolved` fields, so a post costs no range check
// and no lookups. `remote` is copied by value; `mr` must outlive the op.
struct PreparedOp {
  OpKind op = OpKind::kSend;
  const MemoryRegion* mr = nullptr;
  uint64_t offset = 0;  // bytes within mr
  uint32_t length = 0;  // bytes
  RemoteRegion remote;  // write/read: the peer's region
  uint64_t remoteOffset = 0;
  // Backend-resolved (prepare): local address, local key, remote address, remote key.
  uint64_t localAddr = 0, localKey = 0, remoteAddr = 0, remoteKey = 0;
  // Backend-set (prepare), 0 = none: names the prepare() call, so a backend that keeps state
  // per prepared op (verbs: its work request chain) recognises the op by one compare. Copies
  // keep it; an op whose fields were changed after prepare() must have it reset to 0.
  uint64_t token = 0;

  // The part every backend fills alike: op, region, local range and local address (no check;
  // prepare() checks the range first). Keys are the backend's.
  static PreparedOp local(OpKind op, const MemoryRegion& mr, uint64_t offset, uint32_t length) {
    PreparedOp p;
    p.op = op;
    p.mr = &mr;
    p.offset = offset;
    p.length = length;
    p.localAddr = reinterpret_cast<uint64_t>(mr.data() + offset);
    return p;
  }
  // Write/read: the peer's region (copied), the offset within it and the remote address.
  void setRemote(const RemoteRegion& r, uint64_t offsetInRemote) {
    remote = r;
    remoteOffset = offsetInRemote;
    remoteAddr = r.addr + offsetInRemote;
  }
};

// Posts per chunk of the default Endpoint::postRun (one postBatch each): callers with longer
// batches use postBatch.
inline constexpr uint32_t kMaxRunPosts = 64;

// One post of a batch: its completion context and whether it asks for a completion (receives
// and reads always complete).
struct BatchPost {
  uint64_t context = 0;
  bool signaled = true;
};

// A connected, reliable, ordered peer (an RC QP, a libfabric endpoint+peer address, a TCP
// connection). Posting never blocks. Offsets and lengths are in bytes within the region;
// a range outside the region throws UsageError (checked outside timed loops by engines).
class Endpoint {
 public:
  virtual ~Endpoint() = default;

  // Two-sided send. `signaled` false asks for no completion (CQ moderation); the backend may
  // still report one. Sends <= Caps::inlineBytes are posted inline/injected.
  virtual PostResult postSend(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                              uint64_t context, bool signaled) = 0;
  PostResult postSend(const MemoryRegion& mr, uint64_t offset, uint32_t length, uint64_t context) {
    return postSend(mr, offset, length, context, true);
  }
  // Posts a receive buffer of `length` bytes; an incoming message longer than it completes
  // with an error status.
  virtual PostResult postRecv(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                              uint64_t context) = 0;
  // One-sided write of local [offset, offset+length) to remote.addr + remoteOffset.
  // Throws TransportError if !Caps::rmaWrite.
  virtual PostResult postWrite(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                               const RemoteRegion& remote, uint64_t remoteOffset, uint64_t context,
                               bool signaled) = 0;
  PostResult postWrite(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                       const RemoteRegion& remote, uint64_t remoteOffset, uint64_t context) {
    return postWrite(mr, offset, length, remote, remoteOffset, context, true);
  }
  // One-sided read of remote.addr + remoteOffset into local [offset, offset+length).
  // Throws TransportError if !Caps::rmaRead.
  virtual PostResult postRead(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                              const RemoteRegion& remote, uint64_t remoteOffset,
                              uint64_t context) = 0;

  // Validates `op` on [offset, +length) of `mr` (and, for write/read, remoteOffset of
  // `remote`) once, as the single posts would (UsageError for a range outside a region,
  // TransportError for an op the backend lacks), and resolves the backend's fields. The
  // default checks the ranges and the caps it is given nothing about (backends add theirs).
  virtual PreparedOp prepare(OpKind op, const MemoryRegion& mr, uint64_t offset, uint32_t length,
                             const RemoteRegion* remote = nullptr, uint64_t remoteOffset = 0);
  // Posts posts[0..count) of the prepared `op` in order, as one batch (verbs: chained work
  // requests in one ibv_post_send, perftest's post list; socket: one sendmsg() of a batch of
  // two or more, made inside this call; ofi: FI_MORE on all but the last; the default: one post
  // each). Returns how many were accepted, in order: fewer than `count` means the queue is full or
  // the provider said -FI_EAGAIN (poll, then post the rest). Same delivery, ordering and completion
  // rules as single posts. No range check per post: prepare() did it.
  virtual uint32_t postBatch(const PreparedOp& op, const BatchPost* posts, uint32_t count);
  // A run: `count` posts of the prepared send/write `op` as one batch that completes as one
  // (perftest's post list of identical work requests): only the last may ask for a completion
  // (`signaled`), and every post of the run carries `context` (a failure of any of them is
  // reported with it; the backend may report a failure of an earlier post with the context of
  // the oldest run it has not seen complete). The caller pays per run, not per post: the backend
  // keeps no per-post state (verbs: one prepared chain, one record per run). Returns how many
  // were accepted, in order; fewer than `count` (queue full, -FI_EAGAIN): none of the accepted
  // asked for a completion; poll, then post the rest as a run again. Reads and receives are not
  // runs (each completes). The default: postBatch in chunks of kMaxRunPosts.
  virtual uint32_t postRun(const PreparedOp& op, uint64_t context, uint32_t count, bool signaled);

  // Human-readable peer name for errors ("10.0.0.2:40123", "QPN 0x1234 @ node2").
  virtual std::string peerName() const = 0;
  // Negotiated per-connection facts for the run header (MTU, GIDs, inline, ...); typed
  // (transport/info.h), written as JSON by toJson() (transport/info_json.h). Default: none.
  virtual ConnectionInfo info() const { return {}; }
  // Segments the kernel retransmitted on this connection so far (socket: TCP_INFO
  // tcpi_total_retrans); read outside timed loops (a system call). Default: unknown (nullopt).
  virtual std::optional<uint64_t> retransmits() const { return std::nullopt; }
};

// Two-phase connect: localAddress() travels to the peer out of band, then both sides call
// connect() with the other's bytes. Symmetric: either side may call first.
class Connector {
 public:
  virtual ~Connector() = default;
  // Opaque bytes (<= kMaxAddressBytes) describing this side's endpoint.
  virtual std::vector<uint8_t> localAddress() const = 0;
  // Completes the connection or throws (TimeoutError when `deadline` passes, naming the peer;
  // TransportError otherwise). Callable once.
  virtual std::unique_ptr<Endpoint> connect(const std::vector<uint8_t>& remoteAddress,
                                            const Deadline& deadline) = 0;
};

// How the caller waits for completions (-e / --use-event; docs/metrics.md "Progress modes").
// Backends tell only kEvent (a completion channel / wait object, so that waitForEvent() sleeps)
// from the rest; to a device kYield is busy polling, and the caller (engine::Progress) calls
// sched_yield() after every empty poll: Open MPI's mpi_yield_when_idle, for more ranks than
// cores on one host.
enum class ProgressMode : uint8_t { kBusyPoll, kYield, kEvent };
// "busy-poll", "yield", "event" (the run header's and the wire's names).
const char* toString(ProgressMode mode);

// Options for opening a device; each backend reads the fields that concern it and ignores the
// rest. Zero / empty / -1 mean "backend default".
struct DeviceOptions {
  std::string device;        // verbs: device name (mlx5_0); ofi: domain; socket: unused
  int ibPort = 1;            // verbs: port number
  int gidIndex = -1;         // verbs: -1 = auto
  std::string provider;      // ofi: provider string, e.g. "tcp;ofi_rxm"
  std::string endpointType;  // ofi: "rdm" (default) or "msg"
  int64_t inlineBytes = -1;  // verbs/ofi: -1 = auto
  uint32_t txDepth = 0;      // send queue depth
  uint32_t rxDepth = 0;      // receive queue depth
  uint32_t mtu = 0;          // verbs: requested path MTU in bytes (256..4096), 0 = active
  ProgressMode progress = ProgressMode::kBusyPoll;  // how the caller waits for completions
  bool rdmaCm = false;                              // verbs: connect QPs with librdmacm
  std::string localHost;  // our address as the peer reaches it (listen/bind address)
  std::string peerHost;   // the peer's address (GID/interface selection)
  // A server session: never initiate a data-path connection to an address the (untrusted) peer
  // names. socket and ofi FI_EP_MSG take the accepting role (device id 0) and refuse a peer
  // address that would make this side connect (TransportError); ofi FI_EP_RDM refuses an IP
  // peer address other than peerHost (the control connection's peer).
  bool acceptOnly = false;
  // Event mode: open the device so that waitForEvent() sleeps until a completion may be there.
  bool useEvent() const { return progress == ProgressMode::kEvent; }
};

// An opened device / domain / socket context. Owns the protection domain and one completion
// queue shared by all its endpoints.
class Device {
 public:
  virtual ~Device() = default;
  virtual std::string backend() const = 0;  // "socket", "verbs", "ofi"
  virtual std::string name() const = 0;     // device / domain / interface name
  virtual Caps caps() const = 0;
  // Facts for the run header and the peer: device, port, link layer, GID, provider,
  // thresholds... (transport/info.h; toJson() in transport/info_json.h). Default: none.
  virtual DeviceInfo info() const { return {}; }

  // Registers [ptr, ptr+bytes). Throws TransportError with the library's text on failure.
  virtual std::unique_ptr<MemoryRegion> registerMemory(void* ptr, size_t bytes) = 0;
  // Creates the local half of a new connection (allocates the QP / endpoint / listen socket).
  virtual std::unique_ptr<Connector> createConnector() = 0;

  // Non-blocking: drives progress and writes up to `max` completions, returns how many.
  virtual size_t poll(Completion* out, size_t max) = 0;
  // The text of a failed completion this device returned: the library's own words
  // (ibv_wc_status_str, fi_cq_strerror, strerror) plus QP / peer detail. Formatted when the
  // failure happened; the last 1024 failures are kept (an older id gets a short note).
  // The default (test doubles) names the status and code only.
  virtual std::string errorText(const Completion& c) const;
  // Blocks up to `timeoutMs` until poll() may return something (event mode). Returns early
  // on a signal. Backends without events return at once (the caller then busy-polls).
  virtual void waitForEvent(int timeoutMs) { (void)timeoutMs; }
  // How Endpoint::postBatch realises a batch (a post list, `bw --post-list`) of `op` on this
  // device when it is not one call into the device: "" when it is (verbs: chained work
  // requests, one doorbell, as perftest -l); otherwise one line for the run header's
  // `post_list_note` (socket: one sendmsg per batch; ofi: FI_MORE, injects one by one). The
  // default: the backend has no batch path, each post is a single post.
  virtual std::string postListNote(OpKind op) const;
};

// Names of all backends, in preference order for loopback defaults: verbs, ofi, socket.
const std::vector<std::string>& backendNames();

// Opens `backend` ("socket", "verbs", "ofi"). Throws UsageError for an unknown name (listing
// the valid ones), TransportError when the backend is not built or cannot open the device.
std::unique_ptr<Device> openDevice(std::string_view backend, const DeviceOptions& options);

}  // namespace rdmabench::transport
