#pragma once
// PMIx client for the rendezvous (docs/rendezvous.md, "PMIx"): who this process is, according to
// the PMIx server that started it (slurmstepd with `srun --mpi=pmix`, Open MPI's mpirun, PRRTE),
// and one bounded exchange of a value published by one rank (PMIx_Put + PMIx_Commit, one
// PMIx_Fence collecting the data, PMIx_Get). rdmabench makes no MPI call: PMIx is the launcher's
// own wire-up service. Built only with RDMABENCH_WITH_PMIX; otherwise every function but
// pmixBuilt() throws UsageError saying so (pmix/pmix_stub.cc).
// Thread-safety: call from one thread (the main thread, before any rank thread exists).

#include <cstdint>
#include <string>

namespace rdmabench::rendezvous {

// This process as its PMIx server knows it.
struct PmixIdentity {
  std::string nspace;  // the job's namespace ("slurm.pmix.12.0", a number under mpirun)
  int rank = 0;        // rank in the namespace
  int size = 1;        // PMIX_JOB_SIZE: ranks in the namespace
  int localRank = 0;   // PMIX_LOCAL_RANK: rank among this node's ranks of the job
  int localSize = 1;   // PMIX_LOCAL_SIZE: ranks of the job on this node
};

// True when this binary was built with PMIx.
bool pmixBuilt();

// PMIx_Init on the first call (later calls return the same identity); PMIx_Finalize runs when the
// process exits normally (a launcher such as mpirun treats a client that exits without it as
// failed). Throws UsageError when not built, Error naming PMIx's own error text when PMIx_Init or
// the job-size query fails (no PMIx server: the PMIX_* variables are stale).
const PmixIdentity& pmixInit();

// Rank `root` publishes `value` (<= 64 KiB) under `key`; every rank of the namespace (root
// included) then joins one PMIx_Fence that collects the data and returns root's value. `what`
// names the value in errors. Bounded by `timeoutMs` (PMIX_TIMEOUT to the server, and our own
// deadline on the non-blocking fence): TimeoutError names the fence, the namespace, the rank
// count and the wait; Error names the PMIx call and PMIx_Error_string. Call pmixInit() first.
std::string pmixShareFromRank(const std::string& key, const std::string& value, int root,
                              const std::string& what, int64_t timeoutMs);

}  // namespace rdmabench::rendezvous
