#include "collective/allreduce.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "collective/topology.h"
#include "common/error.h"

namespace rdmabench::collective {

const std::vector<std::string>& allreduceAlgorithms() {
  static const std::vector<std::string> names{"tree", "ring", "rd", "rabenseifner"};
  return names;
}

const char* toString(Algorithm a) {
  switch (a) {
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kRd:
      return "rd";
    case Algorithm::kRabenseifner:
      return "rabenseifner";
  }
  return "?";
}

Algorithm parseAlgorithm(const std::string& name) {
  for (Algorithm a : {Algorithm::kTree, Algorithm::kRing, Algorithm::kRd, Algorithm::kRabenseifner})
    if (name == toString(a)) return a;
  throw UsageError(
      fmt::format("--algo {}: unknown (valid: tree, ring, rd, rabenseifner, auto)", name));
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

// Records the algorithms' posts, waits and reductions into a plan; the algorithms below read as
// they run (post, wait, reduce), with offsets into the data area.
class PlanBuilder {
 public:
  PlanBuilder(AllreducePlan& plan, int rank, int size)
      : pl_(plan), r(rank), n(size), es(elementSize(plan.dtype_)), bytes(plan.bytes_) {}

  uint64_t res() const { return bytes; }
  uint64_t tmp() const { return 2 * bytes; }
  uint64_t count() const { return pl_.count_; }
  void recv(int peer, uint64_t off, uint64_t len) { pl_.posts_.push_back({true, peer, off, len}); }
  void send(int peer, uint64_t off, uint64_t len) { pl_.posts_.push_back({false, peer, off, len}); }
  void wait(const char* pattern, int64_t a = 0, int64_t b = 0, bool kids = false) {
    pl_.phases_.push_back(
        {pl_.posts_.size(), engine::Step{pattern, a, b, nullptr, 0}, kids, pl_.reductions_.size()});
  }
  // A reduction after the last wait.
  void reduce(uint64_t dst, uint64_t src, uint64_t elems) {
    pl_.reductions_.push_back({dst, src, elems});
    pl_.phases_.back().reduceEnd = pl_.reductions_.size();
  }

  void tree();
  bool foldIn(const Fold& f);
  void unfold(const Fold& f);
  void recursiveDoubling();
  void rabenseifner();
  void ring();

  AllreducePlan& pl_;
  const int r, n;
  const size_t es;
  const uint64_t bytes;
};

void PlanBuilder::tree() {
  pl_.kids_ = treeChildren(r, n);
  const std::vector<int>& kids = pl_.kids_;
  const int parent = treeParent(r, n);
  for (size_t i = 0; i < kids.size(); ++i)
    recv(kids[i], tmp() + i * bytes, bytes);
  wait("tree reduce: waiting for children rank {}", 0, 0, true);
  for (size_t i = 0; i < kids.size(); ++i)
    reduce(res(), tmp() + i * bytes, count());
  if (parent >= 0) {
    send(parent, res(), bytes);
    recv(parent, res(), bytes);
    wait("tree: waiting for parent rank {}", parent);
  }
  for (int k : kids)
    send(k, res(), bytes);
  wait("tree broadcast to children rank {}", 0, 0, true);
}

// MPICH-style fold of non-power-of-two worlds: returns false when this rank sits out (it then
// receives the result at the end from foldPeer in unfold()).
bool PlanBuilder::foldIn(const Fold& f) {
  if (f.foldPeer < 0) return true;
  if (f.sendsFirst) {
    send(f.foldPeer, res(), bytes);
    wait("fold: sending to rank {}", f.foldPeer);
    return false;
  }
  recv(f.foldPeer, tmp(), bytes);
  wait("fold: waiting for rank {}", f.foldPeer);
  reduce(res(), tmp(), count());
  return true;
}

void PlanBuilder::unfold(const Fold& f) {
  if (f.foldPeer < 0) return;
  if (f.sendsFirst)
    recv(f.foldPeer, res(), bytes);
  else
    send(f.foldPeer, res(), bytes);
  wait("unfold: result exchange with rank {}", f.foldPeer);
}

void PlanBuilder::recursiveDoubling() {
  const Fold f = fold(r, n);
  if (foldIn(f)) {
    for (int p : recursiveDoublingPartners(r, n)) {
      recv(p, tmp(), bytes);
      send(p, res(), bytes);
      wait("recursive doubling: exchange with rank {}", p);
      reduce(res(), tmp(), count());
    }
  }
  unfold(f);
}

void PlanBuilder::rabenseifner() {
  const Fold f = fold(r, n);
  if (foldIn(f)) {
    const auto steps = rabenseifnerSteps(r, n);
    const int blocks = f.pof2;
    for (const auto& s : steps) {
      Range keep = blocksRange(count(), blocks, s.keepFirst, s.keepLast);
      Range snd = blocksRange(count(), blocks, s.sendFirst, s.sendLast);
      recv(s.peer, tmp() + keep.offset * es, keep.count * es);
      send(s.peer, res() + snd.offset * es, snd.count * es);
      wait("reduce-scatter (halving): exchange with rank {}", s.peer);
      reduce(res() + keep.offset * es, tmp() + keep.offset * es, keep.count);
    }
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      Range keep = blocksRange(count(), blocks, it->keepFirst, it->keepLast);
      Range snd = blocksRange(count(), blocks, it->sendFirst, it->sendLast);
      recv(it->peer, res() + snd.offset * es, snd.count * es);
      send(it->peer, res() + keep.offset * es, keep.count * es);
      wait("allgather (doubling): exchange with rank {}", it->peer);
    }
  }
  unfold(f);
}

void PlanBuilder::ring() {
  const int left = ringLeft(r, n), right = ringRight(r, n);
  auto blk = [&](int b) { return blockRange(count(), n, ((b % n) + n) % n); };
  for (int s = 0; s < n - 1; ++s) {
    Range snd = blk(r - s), rcv = blk(r - s - 1);
    recv(left, tmp() + rcv.offset * es, rcv.count * es);
    send(right, res() + snd.offset * es, snd.count * es);
    wait("ring reduce-scatter step {}: waiting for rank {}", s, left);
    reduce(res() + rcv.offset * es, tmp() + rcv.offset * es, rcv.count);
  }
  for (int s = 0; s < n - 1; ++s) {
    Range snd = blk(r + 1 - s), rcv = blk(r - s);
    recv(left, res() + rcv.offset * es, rcv.count * es);
    send(right, res() + snd.offset * es, snd.count * es);
    wait("ring allgather step {}: waiting for rank {}", s, left);
  }
}

AllreducePlan::AllreducePlan(int rank, int size, Algorithm algo, uint64_t count, DType dtype,
                             ReduceOp op)
    : algo_(algo), count_(count), bytes_(count * elementSize(dtype)), dtype_(dtype), op_(op) {
  trivial_ = size == 1 || count == 0;
  if (trivial_) return;
  PlanBuilder b(*this, rank, size);
  switch (algo) {
    case Algorithm::kTree:
      b.tree();
      break;
    case Algorithm::kRd:
      b.recursiveDoubling();
      break;
    case Algorithm::kRabenseifner:
      b.rabenseifner();
      break;
    case Algorithm::kRing:
      b.ring();
      break;
  }
}

void AllreducePlan::run(Communicator& c) const {
  uint8_t* data = c.data();
  if (bytes_) std::memcpy(data + bytes_, data, bytes_);  // input to result
  if (trivial_) return;
  size_t post = 0, red = 0;
  for (const Phase& ph : phases_) {
    for (; post < ph.postEnd; ++post) {
      const Post& p = posts_[post];
      if (p.recv)
        c.postRecv(p.peer, p.offset, p.bytes);
      else
        c.postSend(p.peer, p.offset, p.bytes);
    }
    if (ph.waitNamesKids) {
      engine::Step s = ph.wait;
      s.ranks = kids_.data();
      s.rankCount = kids_.size();
      c.waitAll(s);
    } else {
      c.waitAll(ph.wait);
    }
    for (; red < ph.reduceEnd; ++red) {
      const Reduction& x = reductions_[red];
      reduceInto(data + x.dst, data + x.src, x.elems, dtype_, op_);
    }
  }
}

void allreduce(Communicator& comm, const std::string& algo, uint64_t count, DType dtype,
               ReduceOp op) {
  AllreducePlan(comm.rank(), comm.size(), parseAlgorithm(algo), count, dtype, op).run(comm);
}

}  // namespace rdmabench::collective
