#include "collective/allreduce.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "collective/topology.h"
#include "common/error.h"

namespace rdmabench::collective {

const std::vector<std::string>& allreduceAlgorithms() {
  static const std::vector<std::string> names{"tree", "ring", "rd", "rabenseifner"};
  return names;
}

uint64_t allreduceScratchBytes(const std::string& algo, int rank, int size, uint64_t bytes) {
  if (algo == "tree") return bytes * std::max<uint64_t>(1, treeChildren(rank, size).size());
  return bytes;
}

uint64_t allreduceDataBytes(int rank, int size, uint64_t maxBytes) {
  uint64_t scratch = 0;
  for (const auto& a : allreduceAlgorithms())
    scratch = std::max(scratch, allreduceScratchBytes(a, rank, size, maxBytes));
  return 2 * maxBytes + scratch;
}

namespace {

struct Ctx {
  Communicator& c;
  uint64_t count;
  DType t;
  ReduceOp op;
  size_t es;
  uint64_t bytes;
  uint64_t in() const { return 0; }
  uint64_t res() const { return bytes; }
  uint64_t tmp() const { return 2 * bytes; }
  void reduce(uint64_t dstOff, uint64_t srcOff, uint64_t elems) {
    reduceInto(c.data() + dstOff, c.data() + srcOff, elems, t, op);
  }
};

void tree(Ctx& x) {
  Communicator& c = x.c;
  const int r = c.rank(), n = c.size();
  std::vector<int> kids = treeChildren(r, n);
  int parent = treeParent(r, n);
  for (size_t i = 0; i < kids.size(); ++i)
    c.postRecv(kids[i], x.tmp() + i * x.bytes, x.bytes);
  c.waitAll(fmt::format("tree reduce: waiting for children rank {}", fmt::join(kids, ", ")));
  for (size_t i = 0; i < kids.size(); ++i)
    x.reduce(x.res(), x.tmp() + i * x.bytes, x.count);
  if (parent >= 0) {
    c.postSend(parent, x.res(), x.bytes);
    c.postRecv(parent, x.res(), x.bytes);
    c.waitAll(fmt::format("tree: waiting for parent rank {}", parent));
  }
  for (int k : kids)
    c.postSend(k, x.res(), x.bytes);
  c.waitAll(fmt::format("tree broadcast to children rank {}", fmt::join(kids, ", ")));
}

// MPICH-style fold of non-power-of-two worlds: returns false when this rank sits out (it then
// receives the result at the end from foldPeer in unfold()).
bool foldIn(Ctx& x, const Fold& f) {
  if (f.foldPeer < 0) return true;
  if (f.sendsFirst) {
    x.c.postSend(f.foldPeer, x.res(), x.bytes);
    x.c.waitAll(fmt::format("fold: sending to rank {}", f.foldPeer));
    return false;
  }
  x.c.postRecv(f.foldPeer, x.tmp(), x.bytes);
  x.c.waitAll(fmt::format("fold: waiting for rank {}", f.foldPeer));
  x.reduce(x.res(), x.tmp(), x.count);
  return true;
}

void unfold(Ctx& x, const Fold& f) {
  if (f.foldPeer < 0) return;
  if (f.sendsFirst)
    x.c.postRecv(f.foldPeer, x.res(), x.bytes);
  else
    x.c.postSend(f.foldPeer, x.res(), x.bytes);
  x.c.waitAll(fmt::format("unfold: result exchange with rank {}", f.foldPeer));
}

void recursiveDoubling(Ctx& x) {
  Fold f = fold(x.c.rank(), x.c.size());
  if (foldIn(x, f)) {
    for (int p : recursiveDoublingPartners(x.c.rank(), x.c.size())) {
      x.c.postRecv(p, x.tmp(), x.bytes);
      x.c.postSend(p, x.res(), x.bytes);
      x.c.waitAll(fmt::format("recursive doubling: exchange with rank {}", p));
      x.reduce(x.res(), x.tmp(), x.count);
    }
  }
  unfold(x, f);
}

void rabenseifner(Ctx& x) {
  const int n = x.c.size();
  Fold f = fold(x.c.rank(), n);
  if (foldIn(x, f)) {
    auto steps = rabenseifnerSteps(x.c.rank(), n);
    const int blocks = f.pof2;
    for (const auto& s : steps) {
      Range keep = blocksRange(x.count, blocks, s.keepFirst, s.keepLast);
      Range send = blocksRange(x.count, blocks, s.sendFirst, s.sendLast);
      x.c.postRecv(s.peer, x.tmp() + keep.offset * x.es, keep.count * x.es);
      x.c.postSend(s.peer, x.res() + send.offset * x.es, send.count * x.es);
      x.c.waitAll(fmt::format("reduce-scatter (halving): exchange with rank {}", s.peer));
      x.reduce(x.res() + keep.offset * x.es, x.tmp() + keep.offset * x.es, keep.count);
    }
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      Range keep = blocksRange(x.count, blocks, it->keepFirst, it->keepLast);
      Range send = blocksRange(x.count, blocks, it->sendFirst, it->sendLast);
      x.c.postRecv(it->peer, x.res() + send.offset * x.es, send.count * x.es);
      x.c.postSend(it->peer, x.res() + keep.offset * x.es, keep.count * x.es);
      x.c.waitAll(fmt::format("allgather (doubling): exchange with rank {}", it->peer));
    }
  }
  unfold(x, f);
}

void ring(Ctx& x) {
  const int r = x.c.rank(), n = x.c.size();
  const int left = ringLeft(r, n), right = ringRight(r, n);
  auto blk = [&](int b) { return blockRange(x.count, n, ((b % n) + n) % n); };
  for (int s = 0; s < n - 1; ++s) {
    Range snd = blk(r - s), rcv = blk(r - s - 1);
    x.c.postRecv(left, x.tmp() + rcv.offset * x.es, rcv.count * x.es);
    x.c.postSend(right, x.res() + snd.offset * x.es, snd.count * x.es);
    x.c.waitAll(fmt::format("ring reduce-scatter step {}: waiting for rank {}", s, left));
    x.reduce(x.res() + rcv.offset * x.es, x.tmp() + rcv.offset * x.es, rcv.count);
  }
  for (int s = 0; s < n - 1; ++s) {
    Range snd = blk(r + 1 - s), rcv = blk(r - s);
    x.c.postRecv(left, x.res() + rcv.offset * x.es, rcv.count * x.es);
    x.c.postSend(right, x.res() + snd.offset * x.es, snd.count * x.es);
    x.c.waitAll(fmt::format("ring allgather step {}: waiting for rank {}", s, left));
  }
}

}  // namespace

void allreduce(Communicator& comm, const std::string& algo, uint64_t count, DType dtype,
               ReduceOp op) {
  Ctx x{comm, count, dtype, op, elementSize(dtype), count * elementSize(dtype)};
  if (x.bytes) std::memcpy(comm.data() + x.res(), comm.data() + x.in(), x.bytes);
  if (comm.size() == 1 || count == 0) return;
  if (algo == "tree")
    tree(x);
  else if (algo == "rd")
    recursiveDoubling(x);
  else if (algo == "rabenseifner")
    rabenseifner(x);
  else if (algo == "ring")
    ring(x);
  else
    throw UsageError(
        fmt::format("--algo {}: unknown (valid: tree, ring, rd, rabenseifner, auto)", algo));
}

}  // namespace rdmabench::collective
