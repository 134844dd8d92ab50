#pragma once
// Allreduce algorithms over a Communicator (docs/collectives.md has the costs):
//  - "tree": binomial-tree reduce to rank 0, then binomial broadcast (the default);
//  - "rd": recursive doubling (non-power-of-two: MPICH's fold, topology.h);
//  - "rabenseifner": reduce-scatter by recursive halving + allgather by recursive doubling;
//  - "ring": reduce-scatter + allgather around the ring (n-1 steps each).
// Buffer layout in the communicator's data area (bytes = count * elementSize):
//   [0, bytes) input, [bytes, 2*bytes) result, [2*bytes, ...) scratch (allreduceScratchBytes).
// Every call copies the input to the result first (out-of-place, as nccl-tests' default), then
// reduces in place. Any world size >= 1. Thread-safety: one thread per Communicator.
//
// Timed loops build an AllreducePlan per (algorithm, size) before the loop: the topology math,
// the block offsets and the step names are computed once, so AllreducePlan::run() does not
// allocate, format text, compare strings or look up maps (tests/integration/collective_test.cc
// counts allocations around it).

#include <cstdint>
#include <string>
#include <vector>

#include "collective/comm.h"
#include "collective/reduce.h"
#include "engine/progress.h"

namespace rdmabench::collective {

// The four algorithms, in help order.
enum class Algorithm { kTree, kRing, kRd, kRabenseifner };

// The four algorithm names, in help order.
const std::vector<std::string>& allreduceAlgorithms();
// "tree", "ring", "rd", "rabenseifner".
const char* toString(Algorithm a);
// The algorithm of `name`. UsageError naming the valid ones for an unknown name.
Algorithm parseAlgorithm(const std::string& name);

// Scratch bytes `algo` needs on `rank` for a vector of `bytes` (tree: one slot per child).
uint64_t allreduceScratchBytes(const std::string& algo, int rank, int size, uint64_t bytes);
// Data area bytes for every algorithm up to `maxBytes` (what the communicator must hold).
uint64_t allreduceDataBytes(int rank, int size, uint64_t maxBytes);

// One rank's allreduce of `count` elements, planned: its posts (peer, data-area offset, bytes),
// its waits (each named by an engine::Step) and its local reductions, in order. Movable, not
// copyable (the tree's steps point at the plan's own child list).
class AllreducePlan {
 public:
  AllreducePlan(int rank, int size, Algorithm algo, uint64_t count, DType dtype, ReduceOp op);
  AllreducePlan(AllreducePlan&&) = default;
  AllreducePlan& operator=(AllreducePlan&&) = default;
  AllreducePlan(const AllreducePlan&) = delete;
  AllreducePlan& operator=(const AllreducePlan&) = delete;

  Algorithm algorithm() const { return algo_; }
  uint64_t count() const { return count_; }
  // One allreduce on `comm` (of the rank and size planned for). Errors: those of the waits
  // (TimeoutError, TransportError, PeerError), naming the step and the peer.
  void run(Communicator& comm) const;

  // What the plan records (public for the builder in allreduce.cc).
  struct Post {
    bool recv;
    int peer;
    uint64_t offset, bytes;
  };
  struct Reduction {
    uint64_t dst, src, elems;
  };
  struct Phase {  // posts, one wait, then reductions
    size_t postEnd;
    engine::Step wait;
    bool waitNamesKids;  // the step's rank list is kids_ (set at run time: the plan may move)
    size_t reduceEnd;
  };

 private:
  friend class PlanBuilder;
  Algorithm algo_;
  uint64_t count_, bytes_;
  DType dtype_;
  ReduceOp op_;
  bool trivial_ = false;  // one rank or no elements: only the copy
  std::vector<int> kids_;
  std::vector<Post> posts_;
  std::vector<Reduction> reductions_;
  std::vector<Phase> phases_;
};

// One allreduce of `count` elements (plans and runs: for untimed calls). UsageError for an
// unknown algorithm.
void allreduce(Communicator& comm, const std::string& algo, uint64_t count, DType dtype,
               ReduceOp op);

}  // namespace rdmabench::collective
