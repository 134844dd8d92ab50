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

#include <cstdint>
#include <string>

#include "collective/comm.h"
#include "collective/reduce.h"

namespace rdmabench::collective {

// The four algorithm names, in help order.
const std::vector<std::string>& allreduceAlgorithms();

// Scratch bytes `algo` needs on `rank` for a vector of `bytes` (tree: one slot per child).
uint64_t allreduceScratchBytes(const std::string& algo, int rank, int size, uint64_t bytes);
// Data area bytes for every algorithm up to `maxBytes` (what the communicator must hold).
uint64_t allreduceDataBytes(int rank, int size, uint64_t maxBytes);

// One allreduce of `count` elements. UsageError for an unknown algorithm.
void allreduce(Communicator& comm, const std::string& algo, uint64_t count, DType dtype,
               ReduceOp op);

}  // namespace rdmabench::collective
