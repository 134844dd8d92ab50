#pragma once
// The timed loops of `rdmabench barrier | allreduce | ring`: runs on every rank, rank 0 gathers
// every rank's per-iteration times through the store and feeds the Reporter (docs/metrics.md).
//
// Per size: warmup, then `iterations` calls (or as many as the time budget allows: -D, IMB's
// -time; the count is agreed across ranks from the slowest warmup), each timed on its rank's
// own clock; allreduce puts
// an untimed barrier after every call (as osu_allreduce and IMB's -sync on). With `check`, one
// more call runs after timing and its result is compared with the value computed locally
// (#wrong, as nccl-tests). Results travel through the store in bounded size whatever the
// iteration count: each rank publishes its mean; the slowest rank per iteration is computed by
// an untimed max-allreduce of the per-iteration samples over the data plane (chunks of 8192).
// Thread-safety: one thread per rank.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collective/comm.h"
#include "collective/params.h"
#include "collective/reduce.h"
#include "common/placement.h"
#include "launch/launch.h"
#include "rendezvous/store.h"
#include "report/report.h"
#include "transport/transport.h"

namespace rdmabench::collective {

struct CollectiveOutcome {
  uint64_t wrong = 0;          // mismatched elements (rank 0: over all ranks and sizes)
  std::string outlierSummary;  // ring: non-empty when outliers were found (rank 0)
  double wireupSeconds = 0;    // this rank: device open + connections + first barrier
};

// The Communicator options every collective command derives from its parameters: transport,
// device options and timeout of `params`, connecting to `peers` with a data area of `dataBytes`.
// A rank's progress mode and the header's note on it (RankParams::progressNote; "" = none).
struct ProgressChoice {
  transport::ProgressMode mode = transport::ProgressMode::kBusyPoll;
  std::string note;
  // Yield mode on shared CPUs (RankParams::yieldCpuShare): this rank's share of a CPU, CPUs /
  // local ranks; 0 = not yielding, or not sharing.
  double cpuShare = 0;
};
// The progress mode of a rank: `asked` (-e / --use-event) when given, no note. Else yield when
// this rank's CPU is shared: more ranks on this host than CPUs (under --np the CPUs the launcher
// may use, sched_getaffinity: taskset counts; else the online CPUs, as srun binds each rank), or
// a --cpu list with fewer CPUs than local ranks; the note says why ("auto: yield mode (4 ranks
// on this host share 2 CPUs: ...)"). Busy polling would keep a CPU from the rank with work
// until the scheduler's tick; event mode pays a wake-up, often across CPUs, per message (1.3-2.9x
// Open MPI's time at 4 and 8 ranks on 2 cores, bench/collectives/results.md); a yielding poll
// hands the CPU over at once, as Open MPI does when it detects oversubscription
// (mpi_yield_when_idle). Else busy polling, no note.
ProgressChoice chooseProgress(std::optional<transport::ProgressMode> asked,
                              const PlacementRequest& placement, const launch::RankInfo& info);

CommOptions commOptions(const RankParams& params, std::vector<int> peers, uint64_t dataBytes);

// One rank's result of one size: its mean time per iteration (microseconds) and, with --check,
// its wrong elements.
struct RankResult {
  double meanUs = 0;
  uint64_t wrong = 0;
};

// The across-ranks figures of one size: IMB's t_min / t_max (microseconds) and the sum of the
// ranks' means (t_avg = sumUs / ranks), and the #wrong total (nccl-tests).
struct AcrossRanks {
  double minUs = 0, maxUs = 0, sumUs = 0;
  uint64_t wrong = 0;
};

// Reduces every rank's `mine` over the data plane's binomial tree: three allreduces of one or
// two float64 (min, max, sum; a count of wrong elements is exact in a float64 below 2^53),
// O(log n) at rank 0 instead of n store round trips. Collective: every rank of `comm` calls it
// (it needs the tree's peers, which every collective command connects); all get the result.
// Errors as Communicator's waits (timeout, a dead rank named).
AcrossRanks reduceAcrossRanks(Communicator& comm, const RankResult& mine);

// Runs the test as rank `info.rank`. `reporter` is used on rank 0 only (may be null elsewhere).
// Errors: every wait is bounded by timeoutMs; a dead rank makes the others throw naming it.
CollectiveOutcome runCollective(const CollectiveParams& params, const launch::RankInfo& info,
                                rendezvous::Store& store, report::Reporter* reporter);

}  // namespace rdmabench::collective
