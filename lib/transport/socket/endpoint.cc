// SocketEndpoint: posting, completion harvesting, failure handling. The byte movers live in
// endpoint_io.cc.
#include "transport/socket/endpoint.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "common/bytes.h"
#include "common/error.h"
#include "transport/socket/device.h"

namespace rdmabench::transport::socket {

SocketEndpoint::SocketEndpoint(SocketDevice& device, Fd fd, std::string peer, std::string role)
    : device_(device),
      fd_(std::move(fd)),
      peer_(std::move(peer)),
      role_(std::move(role)),
      sq_(device.txDepth()),
      rq_(device.rxDepth()),
      wire_(device.txDepth() + kResponseDepth),
      pendingReads_(device.txDepth()),
      inline_(static_cast<size_t>(device.txDepth()) * (kHeaderBytes + device.inlineBytes())),
      stage_(new uint8_t[kStageBytes]) {
  if (const char* e = std::getenv("RDMABENCH_TEST_CORRUPT_EVERY"))  // test-only fault hook
    corruptEvery_ = std::strtoull(e, nullptr, 10);
  makeFastSocket(fd_.get(), peer_);
  SockAddr local;
  local.len = sizeof(local.ss);
  if (getsockname(fd_.get(), local.sa(), &local.len) == 0) local_ = formatSockaddr(local.sa());
  for (size_t i = 0; i < sq_.capacity(); ++i)
    sq_.rawSlot(i).inlineBuf = inline_.data() + i * (kHeaderBytes + device.inlineBytes());
  interest_ = EPOLLIN;
  device_.watch(fd_.get(), interest_, true);
  device_.attach(this);
}

SocketEndpoint::~SocketEndpoint() {
  device_.detach(this);
  if (fd_) device_.unwatch(fd_.get());
}

void SocketEndpoint::checkLocal(const char* call, const MemoryRegion& mr, uint64_t offset,
                                uint32_t length) const {
  if (length > kMaxMessageBytes)
    throw UsageError(fmt::format("socket {} to peer {}: length {} exceeds maxMessageBytes {}", call,
                                 peer_, length, kMaxMessageBytes));
  if (offset > mr.size() || length > mr.size() - offset)
    throw UsageError(fmt::format(
        "socket {} to peer {}: range [{}, {}) outside the registered region of {} bytes", call,
        peer_, offset, offset + length, mr.size()));
}

uint64_t SocketEndpoint::checkRemote(const char* call, const RemoteRegion& remote,
                                     uint64_t remoteOffset, uint32_t length) const {
  if (remote.key.size() != 8)
    throw UsageError(fmt::format(
        "socket {} to peer {}: remote key of {} bytes is not a socket region key (8 bytes)", call,
        peer_, remote.key.size()));
  if (remoteOffset > remote.length || length > remote.length - remoteOffset)
    throw UsageError(fmt::format(
        "socket {} to peer {}: remote range [{}, {}) outside the remote region of {} bytes", call,
        peer_, remoteOffset, remoteOffset + length, remote.length));
  return getLe(remote.key.data(), 8);
}

PostResult SocketEndpoint::postOp(OpKind op, uint8_t* data, uint32_t length, const uint8_t* header,
                                  uint64_t context, bool signaled) {
  if (sq_.full() || wire_.full()) return PostResult::kRetry;
  SqEntry& e = sq_.pushBack();
  e.op = op;
  e.signaled = signaled;
  e.done = false;
  e.status = 0;
  e.flushed = false;
  e.bytes = length;
  e.context = context;
  e.readDest = nullptr;
  e.errorId = 0;
  if (closed_) {
    e.done = true;
    e.status = closedStatus_;
    e.errorId = closedErrorId_;
    return PostResult::kOk;
  }
  TxItem& t = wire_.pushBack();
  t.sent = 0;
  t.frame = t.header;
  t.contiguous = false;
  t.response = false;
  if (op == OpKind::kRead) {
    t.payload = nullptr;
    t.payloadLen = 0;
    t.sq = nullptr;  // completes when the response lands
    e.readDest = data;
    pendingReads_.pushBack() = &e;
  } else {
    t.sq = &e;
    t.payloadLen = length;
    if (length <= device_.inlineBytes()) {
      if (length) std::memcpy(e.inlineBuf + kHeaderBytes, data, length);
      t.frame = e.inlineBuf;
      t.contiguous = true;
      t.payload = e.inlineBuf + kHeaderBytes;
    } else {
      t.payload = data;
    }
  }
  std::memcpy(const_cast<uint8_t*>(t.frame), header, kHeaderBytes);
  return PostResult::kOk;
}

PostResult SocketEndpoint::postSend(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                                    uint64_t context, bool signaled) {
  checkLocal("postSend", mr, offset, length);
  WireHeader h;
  h.op = WireOp::kMsg;
  h.length = length;
  return postOp(OpKind::kSend, mr.data() + offset, length, h, context, signaled);
}

PostResult SocketEndpoint::postWrite(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                                     const RemoteRegion& remote, uint64_t remoteOffset,
                                     uint64_t context, bool signaled) {
  checkLocal("postWrite", mr, offset, length);
  WireHeader h;
  h.op = WireOp::kWrite;
  h.length = length;
  h.key = checkRemote("postWrite", remote, remoteOffset, length);
  h.offset = remote.addr + remoteOffset;
  return postOp(OpKind::kWrite, mr.data() + offset, length, h, context, signaled);
}

PostResult SocketEndpoint::postRead(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                                    const RemoteRegion& remote, uint64_t remoteOffset,
                                    uint64_t context) {
  checkLocal("postRead", mr, offset, length);
  WireHeader h;
  h.op = WireOp::kReadReq;
  h.length = length;
  h.key = checkRemote("postRead", remote, remoteOffset, length);
  h.offset = remote.addr + remoteOffset;
  return postOp(OpKind::kRead, mr.data() + offset, length, h, context, true);
}

PostResult SocketEndpoint::postRecv(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                                    uint64_t context) {
  checkLocal("postRecv", mr, offset, length);
  return queueRecv(mr.data() + offset, length, context);
}

PostResult SocketEndpoint::queueRecv(uint8_t* data, uint32_t length, uint64_t context) {
  if (rq_.full()) return PostResult::kRetry;
  RqEntry& r = rq_.pushBack();
  r.data = data;
  r.length = length;
  r.bytes = 0;
  r.context = context;
  r.done = false;
  r.status = 0;
  r.flushed = false;
  r.errorId = 0;
  if (closed_) {
    r.done = true;
    r.status = closedStatus_;
    r.errorId = closedErrorId_;
    ++rqMatched_;
  }
  return PostResult::kOk;
}

PreparedOp SocketEndpoint::prepare(OpKind op, const MemoryRegion& mr, uint64_t offset,
                                   uint32_t length, const RemoteRegion* remote,
                                   uint64_t remoteOffset) {
  const bool rma = op == OpKind::kWrite || op == OpKind::kRead;
  const std::string call = fmt::format("prepare {}", toString(op));
  checkLocal(call.c_str(), mr, offset, length);
  if (rma && remote == nullptr)
    throw UsageError(fmt::format("socket {} to peer {}: no remote region", call, peer_));
  PreparedOp p = PreparedOp::local(op, mr, offset, length);
  if (rma) {
    p.remoteKey = checkRemote(call.c_str(), *remote, remoteOffset, length);
    p.setRemote(*remote, remoteOffset);
  }
  return p;
}

uint32_t SocketEndpoint::postBatch(const PreparedOp& op, const BatchPost* posts, uint32_t count) {
  auto* data = reinterpret_cast<uint8_t*>(op.localAddr);
  uint32_t i = 0;
  if (op.op == OpKind::kRecv) {
    while (i < count && queueRecv(data, op.length, posts[i].context) == PostResult::kOk)
      ++i;
    return i;
  }
  WireHeader h;  // one header for the whole batch: the posts differ only in their context
  h.op = op.op == OpKind::kSend    ? WireOp::kMsg
         : op.op == OpKind::kWrite ? WireOp::kWrite
                                   : WireOp::kReadReq;
  h.length = op.length;
  h.key = op.remoteKey;
  h.offset = op.remoteAddr;
  uint8_t header[kHeaderBytes];
  encodeHeader(h, header);
  const bool read = op.op == OpKind::kRead;
  while (i < count && postOp(op.op, data, op.length, header, posts[i].context,
                             read || posts[i].signaled) == PostResult::kOk)
    ++i;
  if (i > 1 && !closed_ && !txBlocked_) progressTx(kMaxIov);  // one sendmsg() for the batch
  return i;
}

size_t SocketEndpoint::harvest(Completion* out, size_t max) {
  size_t n = 0;
  if (unsolicited_ && n < max) {
    Completion& c = out[n++];
    c.context = 0;
    c.op = OpKind::kRecv;
    c.bytes = 0;
    setStatus(c, closedStatus_, closedErrorId_);
    unsolicited_ = false;
  }
  // After a failure on the send side its ops come first: the first error completion is the
  // operation that failed, not a receive flushed with it.
  if (closedOnTx_) n = harvestSq(out, n, max);
  while (n < max && !rq_.empty() && rq_.front().done) {
    RqEntry& r = rq_.front();
    Completion& c = out[n++];
    c.context = r.context;
    c.op = OpKind::kRecv;
    c.bytes = r.bytes;
    setStatus(c, r.status, r.errorId, r.flushed);
    rq_.popFront();
    --rqMatched_;
  }
  return harvestSq(out, n, max);
}

size_t SocketEndpoint::harvestSq(Completion* out, size_t n, size_t max) {
  while (!sq_.empty() && sq_.front().done) {
    SqEntry& e = sq_.front();
    if (e.signaled || e.status != 0) {
      if (n >= max) break;
      Completion& c = out[n++];
      c.context = e.context;
      c.op = e.op;
      c.bytes = e.bytes;
      setStatus(c, e.status, e.errorId, e.flushed);
    }
    sq_.popFront();
  }
  return n;
}

void SocketEndpoint::setStatus(Completion& c, int status, uint32_t errorId, bool flushed) {
  c.status = status == 0          ? CompletionStatus::kSuccess
             : flushed            ? CompletionStatus::kFlushed
             : status == EMSGSIZE ? CompletionStatus::kTruncated
                                  : CompletionStatus::kError;
  c.code = status;
  c.errorId = errorId;
}

bool SocketEndpoint::hasWork() const {
  if (unsolicited_) return true;
  if (!rq_.empty() && rq_.front().done) return true;
  if (!sq_.empty() && sq_.front().done) return true;
  if (closed_) return false;
  if (rxStall_ == RxStall::kNeedRecv && rqMatched_ < rq_.size()) return true;
  if (rxStall_ == RxStall::kNeedResponseSlot && responses_ < kResponseDepth) return true;
  if (cur_.active && stageEnd_ > stageBegin_) return true;
  return false;
}

void SocketEndpoint::updateInterest() {
  if (closed_) return;
  uint32_t want = (rxStall_ == RxStall::kNeedBytes ? EPOLLIN : 0u) |
                  (wire_.empty() ? 0u : static_cast<uint32_t>(EPOLLOUT));
  if (want != interest_) {
    device_.watch(fd_.get(), want, false);
    interest_ = want;
  }
}

void SocketEndpoint::forgetRegion(const uint8_t* data, uint64_t size) {
  if (cur_.active && cur_.dest != nullptr && cur_.rq == nullptr && cur_.read == nullptr &&
      cur_.dest >= data && cur_.dest < data + size)
    cur_.dest = nullptr;
}

void SocketEndpoint::fail(int err, const std::string& text, bool reportEvenIfIdle, bool onTx) {
  if (closed_) return;
  closed_ = true;
  closedOnTx_ = onTx;
  closedStatus_ = err;
  closedErrorId_ = device_.keepError(text);
  if (fd_) {
    device_.unwatch(fd_.get());
    fd_.reset();
  }
  bool reported = false;
  for (size_t i = 0; i < sq_.size(); ++i) {
    SqEntry& e = sq_[i];
    if (e.done) continue;
    e.done = true;
    e.status = err;
    e.flushed = !onTx;
    e.errorId = closedErrorId_;
    reported = true;
  }
  for (size_t i = 0; i < rq_.size(); ++i) {
    RqEntry& r = rq_[i];
    if (r.done) continue;
    r.done = true;
    r.status = err;
    r.flushed = onTx;
    r.errorId = closedErrorId_;
    reported = true;
  }
  rqMatched_ = rq_.size();
  wire_.clear();
  pendingReads_.clear();
  responses_ = 0;
  cur_ = Incoming{};
  stageBegin_ = stageEnd_ = 0;
  if (reportEvenIfIdle && !reported) unsolicited_ = true;
}

void SocketEndpoint::protocolError(const std::string& what) {
  fail(EPROTO,
       fmt::format("socket: protocol error from peer {}: {} ({}); connection closed", peer_, what,
                   std::strerror(EPROTO)),
       true, false);
}

std::optional<uint64_t> SocketEndpoint::retransmits() const {
  if (!fd_) return std::nullopt;
  tcp_info t{};
  socklen_t len = sizeof t;
  if (getsockopt(fd_.get(), IPPROTO_TCP, TCP_INFO, &t, &len) != 0 ||
      len < offsetof(tcp_info, tcpi_total_retrans) + sizeof t.tcpi_total_retrans)
    return std::nullopt;
  return t.tcpi_total_retrans;
}

ConnectionInfo SocketEndpoint::info() const {
  ConnectionInfo i;
  i.peer = peer_;
  i.peerAddress = true;
  Facts& f = i.facts;
  addFact(f, "local_address", local_);
  addFact(f, "role", role_);
  addFact(f, "tcp_nodelay", true);
  if (fd_) {
    int v = 0;
    socklen_t len = sizeof(v);
    if (getsockopt(fd_.get(), SOL_SOCKET, SO_SNDBUF, &v, &len) == 0) addFact(f, "so_sndbuf", v);
    len = sizeof(v);
    if (getsockopt(fd_.get(), SOL_SOCKET, SO_RCVBUF, &v, &len) == 0) addFact(f, "so_rcvbuf", v);
  }
  return i;
}

}  // namespace rdmabench::transport::socket
