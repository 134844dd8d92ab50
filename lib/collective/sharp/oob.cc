#include "collective/sharp/oob.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "collective/topology.h"
#include "common/error.h"

namespace rdmabench::collective::sharp {

OobColls::OobColls(Communicator& comm, uint64_t stageOffset, uint64_t stageBytes)
    : comm_(comm), stageOffset_(stageOffset), stageBytes_(stageBytes) {
  if (stageBytes_ < 64 || stageOffset_ + stageBytes_ > comm_.dataBytes())
    throw UsageError(fmt::format("SHARP out-of-band staging [{}, +{}) outside the data area ({})",
                                 stageOffset_, stageBytes_, comm_.dataBytes()));
}

// Binomial tree rooted at 0: rank r > 0 owns ranks [r, r + lowbit(r)) (capped at n).
int OobColls::subtreeEnd(int rank) const {
  const int n = comm_.size();
  if (rank == 0) return n;
  return std::min(n, rank + (rank & -rank));
}

void OobColls::down(uint64_t len, const std::string& what) {
  const int me = comm_.rank(), n = comm_.size();
  if (me != 0) {
    comm_.postRecv(treeParent(me, n), stageOffset_, len);
    comm_.waitAll(fmt::format("{}: waiting for rank {}", what, treeParent(me, n)));
  }
  for (int c : treeChildren(me, n))
    comm_.postSend(c, stageOffset_, len);
  comm_.waitAll(what + ": sending down the tree");
}

void OobColls::bcast(void* buf, uint64_t len, int root) {
  const int me = comm_.rank(), n = comm_.size();
  if (root < 0 || root >= n)
    throw UsageError(fmt::format("SHARP out-of-band bcast: root {} outside 0..{}", root, n - 1));
  auto* p = static_cast<uint8_t*>(buf);
  for (uint64_t off = 0; off < len; off += stageBytes_) {
    const uint64_t l = std::min(stageBytes_, len - off);
    const std::string what = fmt::format("SHARP out-of-band bcast from rank {}", root);
    if (me == root) std::memcpy(stage(), p + off, l);
    if (root != 0) {
      // Up the path root -> 0: every ancestor of root forwards the chunk to its parent.
      if (me != root && me < root && root < subtreeEnd(me)) {
        int from = -1;
        for (int c : treeChildren(me, n))
          if (c <= root && root < subtreeEnd(c)) from = c;
        comm_.postRecv(from, stageOffset_, l);
        comm_.waitAll(fmt::format("{}: waiting for rank {}", what, from));
      }
      if (me != 0 && me <= root && root < subtreeEnd(me)) {
        comm_.postSend(treeParent(me, n), stageOffset_, l);
        comm_.waitAll(what + ": sending up the tree");
      }
    }
    down(l, what);
    if (me != root) std::memcpy(p + off, stage(), l);
  }
}

void OobColls::barrier() {
  comm_.barrier();
}

void OobColls::gather(int root, const void* sbuf, void* rbuf, uint64_t len) {
  const int me = comm_.rank(), n = comm_.size();
  if (root < 0 || root >= n)
    throw UsageError(fmt::format("SHARP out-of-band gather: root {} outside 0..{}", root, n - 1));
  const auto* src = static_cast<const uint8_t*>(sbuf);
  auto* dst = static_cast<uint8_t*>(rbuf);
  const uint64_t chunk = std::max<uint64_t>(1, stageBytes_ / static_cast<uint64_t>(n));
  const std::string what = fmt::format("SHARP out-of-band gather to rank {}", root);
  for (uint64_t off = 0; off < len; off += chunk) {
    const uint64_t l = std::min(chunk, len - off);
    // Subtree of me lands at stage + (rank - me) * l; children send their whole subtree.
    std::memcpy(stage(), src + off, l);
    for (int c : treeChildren(me, n))
      comm_.postRecv(c, stageOffset_ + static_cast<uint64_t>(c - me) * l,
                     static_cast<uint64_t>(subtreeEnd(c) - c) * l);
    comm_.waitAll(what + ": waiting for the subtree");
    if (me != 0) {
      comm_.postSend(treeParent(me, n), stageOffset_,
                     static_cast<uint64_t>(subtreeEnd(me) - me) * l);
      comm_.waitAll(what + ": sending up the tree");
    }
    if (root != 0) down(static_cast<uint64_t>(n) * l, what);
    if (me == root)
      for (int r = 0; r < n; ++r)
        std::memcpy(dst + static_cast<uint64_t>(r) * len + off,
                    stage() + static_cast<uint64_t>(r) * l, l);
  }
}

namespace {

template <typename Fn>
int guarded(OobColls* self, std::string& error, Fn&& fn) {
  (void)self;
  try {
    fn();
    return 0;
  } catch (const std::exception& e) {
    error = e.what();
    return -1;
  } catch (...) {
    error = "unknown exception in an out-of-band collective";
    return -1;
  }
}

}  // namespace

int OobColls::bcastCb(void* ctx, void* buf, int len, int root) {
  auto* self = static_cast<OobColls*>(ctx);
  return guarded(self, self->error_, [&] {
    if (len < 0) throw UsageError(fmt::format("SHARP out-of-band bcast: length {}", len));
    self->bcast(buf, static_cast<uint64_t>(len), root);
  });
}

int OobColls::barrierCb(void* ctx) {
  auto* self = static_cast<OobColls*>(ctx);
  return guarded(self, self->error_, [&] { self->barrier(); });
}

int OobColls::gatherCb(void* ctx, int root, void* sbuf, void* rbuf, int len) {
  auto* self = static_cast<OobColls*>(ctx);
  return guarded(self, self->error_, [&] {
    if (len < 0) throw UsageError(fmt::format("SHARP out-of-band gather: length {}", len));
    self->gather(root, sbuf, rbuf, static_cast<uint64_t>(len));
  });
}

std::string OobColls::takeError() {
  std::string e;
  e.swap(error_);
  return e;
}

}  // namespace rdmabench::collective::sharp
