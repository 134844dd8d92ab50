// SocketEndpoint byte movers: sendmsg() of queued frames, recv() into the staging buffer or
// straight into posted buffers, and validation of every incoming header.
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "transport/socket/device.h"
#include "transport/socket/endpoint.h"

namespace rdmabench::transport::socket {

static_assert(kMaxIov <= IOV_MAX, "one sendmsg() takes at most IOV_MAX iovecs");

void SocketEndpoint::progress() {
  if (closed_) return;
  if (!wire_.empty()) progressTx(kPollIov);
  if (rxQuiet_ || closed_)
    return;  // event mode: the socket was empty and epoll has not said
             // otherwise since (wakeRx)
  progressRx();
  rxQuiet_ = device_.eventMode() && !closed_ && rxStall_ == RxStall::kNeedBytes && drained_;
}

void SocketEndpoint::progressTx(int maxIov) {
  if (txBlocked_) {
    // The socket buffer was full. Ask tcp_poll (lockless) before retrying: a failing
    // sendmsg() takes the socket lock and delays the ACK processing that frees the space.
    pollfd p{fd_.get(), POLLOUT, 0};
    if (::poll(&p, 1, 0) <= 0 || (p.revents & (POLLOUT | POLLERR | POLLHUP)) == 0) return;
    txBlocked_ = false;
  }
  while (!wire_.empty()) {
    iovec iov[kMaxIov];
    int n = 0;
    size_t total = 0;
    for (size_t i = 0; i < wire_.size() && n + 2 <= maxIov; ++i) {
      const TxItem& t = wire_[i];
      size_t off = t.sent;
      if (t.contiguous) {
        iov[n].iov_base = const_cast<uint8_t*>(t.frame + off);
        iov[n].iov_len = kHeaderBytes + t.payloadLen - off;
        total += iov[n++].iov_len;
        continue;
      }
      if (off < kHeaderBytes) {
        iov[n].iov_base = const_cast<uint8_t*>(t.frame + off);
        iov[n].iov_len = kHeaderBytes - off;
        total += iov[n++].iov_len;
        off = 0;
      } else {
        off -= kHeaderBytes;
      }
      if (t.payloadLen > off) {
        iov[n].iov_base = const_cast<uint8_t*>(t.payload + off);
        iov[n].iov_len = t.payloadLen - off;
        total += iov[n++].iov_len;
      }
    }
    ssize_t r;
    if (n == 1) {  // the common small-message case: plain send(), no iovec import
      r = ::send(fd_.get(), iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL | MSG_DONTWAIT);
    } else {
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = static_cast<size_t>(n);
      r = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        txBlocked_ = true;
        return;
      }
      int err = errno;
      const TxItem& t = wire_.front();
      const char* what = t.response ? "read response" : t.sq ? toString(t.sq->op) : "read request";
      fail(err, fmt::format("socket: sendmsg ({}) to peer {}: {}", what, peer_, std::strerror(err)),
           false, true);
      return;
    }
    size_t left = static_cast<size_t>(r);
    while (left > 0) {
      TxItem& t = wire_.front();
      size_t rest = kHeaderBytes + t.payloadLen - t.sent;
      if (left < rest) {
        t.sent += left;
        break;
      }
      left -= rest;
      if (t.sq != nullptr) t.sq->done = true;
      if (t.response) --responses_;
      wire_.popFront();
    }
    if (static_cast<size_t>(r) < total) {  // socket buffer full
      txBlocked_ = true;
      return;
    }
  }
}

ssize_t SocketEndpoint::recvSome(uint8_t* dst, size_t cap) {
  for (;;) {
    ssize_t r = ::recv(fd_.get(), dst, cap, MSG_DONTWAIT);
    if (r > 0) {
      drained_ = static_cast<size_t>(r) < cap;
      return r;
    }
    if (r == 0) {
      fail(ECONNRESET,
           fmt::format("socket: recv from peer {}: connection closed by the peer (EOF)", peer_),
           false, false);
      return -1;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      drained_ = true;  // the socket is empty
      rxStall_ = RxStall::kNeedBytes;
      return -1;
    }
    int err = errno;
    fail(err, fmt::format("socket: recv from peer {}: {}", peer_, std::strerror(err)), false,
         false);
    return -1;
  }
}

void SocketEndpoint::progressRx() {
  drained_ = false;
  int reads = 0;
  while (!closed_) {
    if (cur_.active) {
      size_t staged = stageEnd_ - stageBegin_;
      size_t need = cur_.length - cur_.got;
      if (staged > 0 && need > 0) {
        size_t n = std::min(staged, need);
        if (cur_.dest != nullptr) std::memcpy(cur_.dest + cur_.got, stage_.get() + stageBegin_, n);
        stageBegin_ += n;
        cur_.got += static_cast<uint32_t>(n);
        need -= n;
      }
      if (need == 0) {
        finishIncoming();
        continue;
      }
      stageBegin_ = stageEnd_ = 0;
      if (drained_ || reads >= kMaxReadsPerPoll) {
        rxStall_ = RxStall::kNeedBytes;
        return;
      }
      ++reads;
      if (cur_.dest != nullptr && need >= kDirectReadBytes) {
        ssize_t r = recvSome(cur_.dest + cur_.got, need);
        if (r < 0) return;
        cur_.got += static_cast<uint32_t>(r);
      } else {
        ssize_t r = recvSome(stage_.get(), kStageBytes);
        if (r < 0) return;
        stageEnd_ = static_cast<size_t>(r);
      }
    } else {
      size_t staged = stageEnd_ - stageBegin_;
      if (staged >= kHeaderBytes) {
        if (!startIncoming()) return;
        continue;
      }
      if (drained_ || reads >= kMaxReadsPerPoll) {
        rxStall_ = RxStall::kNeedBytes;
        return;
      }
      if (stageBegin_ > 0) {  // keep a partial header at the front
        std::memmove(stage_.get(), stage_.get() + stageBegin_, staged);
        stageBegin_ = 0;
        stageEnd_ = staged;
      }
      ++reads;
      // After a large message, expect another: read just the header so that the payload
      // goes straight into its buffer instead of through the staging copy.
      size_t want = expectLarge_ ? kHeaderBytes - staged : kStageBytes - stageEnd_;
      ssize_t r = recvSome(stage_.get() + stageEnd_, want);
      if (r < 0) return;
      stageEnd_ += static_cast<size_t>(r);
      if (expectLarge_) drained_ = false;  // a short header read says nothing about the socket
    }
  }
}

// A send: the next posted receive takes it (or, when shorter, completes with EMSGSIZE and the
// payload is discarded). False when stalled (no receive posted) or failed.
bool SocketEndpoint::matchSend(const WireHeader& h, Incoming& in) {
  if (h.offset != 0 || h.key != 0) {
    protocolError("send header with nonzero offset/key");
    return false;
  }
  if (rqMatched_ == rq_.size()) {  // no receive posted: stop reading (TCP backpressure)
    rxStall_ = RxStall::kNeedRecv;
    return false;
  }
  RqEntry& r = rq_[rqMatched_++];
  if (h.length > r.length) {
    r.done = true;
    r.status = EMSGSIZE;
    r.bytes = h.length;
    r.errorId = device_.keepError(fmt::format(
        "socket: message of {} bytes from peer {} is longer than the posted receive of {} "
        "bytes ({}); message discarded",
        h.length, peer_, r.length, std::strerror(EMSGSIZE)));
  } else {
    in.dest = r.data;
    in.rq = &r;
  }
  return true;
}

// The local region a write or read request names, checked against its size; nullptr (after a
// protocol error) when the key or range is bad.
const RegionSlot* SocketEndpoint::targetRegion(const WireHeader& h) {
  const RegionSlot* region = device_.findRegion(h.key);
  const char* what = h.op == WireOp::kWrite ? "write" : "read";
  if (region == nullptr) {
    protocolError(fmt::format("{} to unknown region key 0x{:x}", what, h.key));
    return nullptr;
  }
  if (h.offset > region->size || h.length > region->size - h.offset) {
    protocolError(fmt::format("{} of {} bytes at offset {} outside region key 0x{:x} of {} bytes",
                              what, h.length, h.offset, h.key, region->size));
    return nullptr;
  }
  return region;
}

// A read request: queues the response (header + the region's bytes) and consumes the header.
// False when no response slot is free (stalled).
bool SocketEndpoint::queueReadResponse(const WireHeader& h, const RegionSlot& region) {
  if (responses_ >= kResponseDepth || wire_.full()) {
    rxStall_ = RxStall::kNeedResponseSlot;
    return false;
  }
  TxItem& t = wire_.pushBack();
  WireHeader resp;
  resp.op = WireOp::kReadResp;
  resp.length = h.length;
  t.frame = t.header;
  t.contiguous = false;
  encodeHeader(resp, t.header);
  t.payload = region.data + h.offset;
  t.payloadLen = h.length;
  t.sent = 0;
  t.sq = nullptr;
  t.response = true;
  ++responses_;
  stageBegin_ += kHeaderBytes;
  rxStall_ = RxStall::kNeedBytes;
  return true;
}

// A read response: lands in the oldest outstanding read. False (after a protocol error) when
// none is outstanding or the length differs.
bool SocketEndpoint::matchReadResponse(const WireHeader& h, Incoming& in) {
  if (pendingReads_.empty()) {
    protocolError("read response without an outstanding read");
    return false;
  }
  SqEntry* e = pendingReads_.front();
  if (h.offset != 0 || h.key != 0 || h.length != e->bytes) {
    protocolError(
        fmt::format("read response of {} bytes for a read of {} bytes", h.length, e->bytes));
    return false;
  }
  in.dest = e->readDest;
  in.read = e;
  return true;
}

bool SocketEndpoint::startIncoming() {
  std::optional<WireHeader> decoded = decodeHeader(stage_.get() + stageBegin_);
  if (!decoded) {
    const uint8_t* p = stage_.get() + stageBegin_;
    protocolError(fmt::format("malformed message header (op byte {}, length field {})", p[0],
                              static_cast<uint32_t>(p[4] | p[5] << 8 | p[6] << 16 | p[7] << 24)));
    return false;
  }
  const WireHeader& h = *decoded;
  Incoming in;
  in.active = true;
  in.length = h.length;
  switch (h.op) {
    case WireOp::kMsg:
      if (!matchSend(h, in)) return false;
      break;
    case WireOp::kWrite:
    case WireOp::kReadReq: {
      const RegionSlot* region = targetRegion(h);
      if (region == nullptr) return false;
      if (h.op == WireOp::kReadReq) return queueReadResponse(h, *region);
      in.dest = region->data + h.offset;
      break;
    }
    case WireOp::kReadResp:
      if (!matchReadResponse(h, in)) return false;
      break;
  }
  stageBegin_ += kHeaderBytes;
  cur_ = in;
  rxStall_ = RxStall::kNeedBytes;
  return true;
}

void SocketEndpoint::finishIncoming() {
  expectLarge_ = cur_.length >= kDirectReadBytes;
  if (corruptEvery_ != 0 && cur_.dest != nullptr && cur_.length > 8 &&
      ++corruptCount_ % corruptEvery_ == 0)
    cur_.dest[0] ^= 0xff;  // test-only fault hook (RDMABENCH_TEST_CORRUPT_EVERY)
  if (cur_.rq != nullptr) {
    cur_.rq->done = true;
    cur_.rq->bytes = cur_.length;
  }
  if (cur_.read != nullptr) {
    cur_.read->done = true;
    pendingReads_.popFront();
  }
  cur_ = Incoming{};
}

}  // namespace rdmabench::transport::socket
