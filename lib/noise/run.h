#pragma once
// One rank of `rdmabench noise` (docs/noise.md): pin to a core, run the detour loop (and the
// FWQ with --fwq), and, on each node's local rank 0, the /proc reader for attribution; every
// rank sends its result through the rendezvous store and rank 0 builds the report.
// Store keys (all under "noise/"): barrier counters, result/<rank>, local/<host>/<local rank>
// (pid and cpu, for the reader), attr/<host> and attr/<host>/<cpu> (the reader's findings).
// Errors: the store's (TimeoutError naming the rank that never sent its result, ProtocolError);
// InterruptedError when Ctrl-C/SIGTERM stopped the loop.
// Thread-safety: call from the rank's main thread; it starts (and joins) the reader's thread.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "launch/launch.h"
#include "noise/report.h"
#include "rendezvous/store.h"

namespace rdmabench::noise {

struct NoiseRunOptions {
  NoiseConfig config;
  int64_t timeoutMs = 10'000;      // --timeout: longest wait for another rank, ms
  std::string procRoot = "/proc";  // where the reader looks ($RDMABENCH_NOISE_PROC_ROOT in tests)
  // Processes of this job besides the ranks (the --np launcher): left out of the attribution.
  std::set<int> ownPids;
};

// Rank 0 returns the report, every other rank nullopt. `partial` (rank 0; may be null): when
// gathering the ranks' results fails (a rank died), the results the store holds are left there
// as a report with failed = true before the exception propagates (nullopt when none is there).
std::optional<NoiseReport> runNoiseRank(const NoiseRunOptions& o, const launch::RankInfo& info,
                                        rendezvous::Store& store,
                                        std::optional<NoiseReport>* partial = nullptr);

// The CPUs this thread may run on (sched_getaffinity), ascending.
std::vector<int> allowedCpus();

}  // namespace rdmabench::noise
