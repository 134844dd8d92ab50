#pragma once
// Counting allocations of a stretch of code (issue #26: no timed loop allocates). The
// integration_tests binary replaces the global operator new (every form but the aligned ones,
// alloc_count.cc); while a thread's counting is on, each of its calls adds one to its count.
// Thread-safety: the count and the switch are per thread (thread_local).

#include <cstdint>

namespace rdmabench::testing {

// Turns counting on for the calling thread and clears its count.
void startCountingAllocations();
// Turns counting off and returns the calls counted since startCountingAllocations().
uint64_t stopCountingAllocations();

}  // namespace rdmabench::testing
