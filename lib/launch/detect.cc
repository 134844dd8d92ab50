#include "launch/launch.h"

#include <algorithm>
#include <climits>
#include <cstdlib>

#include <fmt/format.h>

#include "common/error.h"
#include "common/host_info.h"
#include "common/token.h"

// The launcher detection table of docs/rendezvous.md ("Who am I"): detect() and
// applyPmixIdentity() (declared in launch/launch.h).

namespace rdmabench::launch {

namespace {

int envInt(const Env& env, const std::string& name, int min, int max) {
  auto v = env(name);
  if (!v) return -1;
  char* end = nullptr;
  long x = std::strtol(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || x < min || x > max)
    throw UsageError(
        fmt::format("environment {}={}: not an integer in {}..{}", name, *v, min, max));
  return static_cast<int>(x);
}

}  // namespace

namespace {

// "NAME=value" for error messages ("NAME unset" when absent).
std::string shown(const Env& env, const std::string& name) {
  auto v = env(name);
  return v ? fmt::format("{}={}", name, *v) : name + " unset";
}

// Rank and size one launcher's variables claim; rank < 0 when its rank variable is unset.
struct Claim {
  const char* rankVar;
  const char* sizeVar;
  int rank = -1;
  int size = -1;
};

Claim claim(const Env& env, const char* rankVar, const char* sizeVar) {
  Claim c{rankVar, sizeVar};
  if (!env(rankVar)) return c;
  c.rank = envInt(env, rankVar, 0, 1 << 24);
  if (sizeVar) {
    c.size = envInt(env, sizeVar, 1, 1 << 24);
    if (c.size < 1) throw UsageError(fmt::format("{} is set but {} is not", rankVar, sizeVar));
    if (c.rank >= c.size)
      throw UsageError(fmt::format("{}={} is outside {}={}", rankVar, c.rank, sizeVar, c.size));
  }
  return c;
}

bool differ(const Claim& a, const Claim& b) {
  return a.rank >= 0 && b.rank >= 0 &&
         (a.rank != b.rank || (a.size > 0 && b.size > 0 && a.size != b.size));
}

std::string claimText(const Env& env, const Claim& c) {
  return c.sizeVar ? fmt::format("{} {}", shown(env, c.rankVar), shown(env, c.sizeVar))
                   : shown(env, c.rankVar);
}

// Started by srun itself (PMI_RANK of `srun --mpi=pmi2` agrees): rank, size and local rank
// from Slurm, the default port and run id from the job and step, and (`needAddress`: no
// --rendezvous HOST:PORT, no file store) rank 0's node, the step's first.
void fromSlurm(const Env& env, const Claim& slurm, bool needAddress, RankInfo& info,
               uint16_t& defaultPort, std::string& runId) {
  // srun itself (PMI_RANK of `srun --mpi=pmi2` agrees): Slurm also says where rank 0 is.
  info.rank = slurm.rank;
  info.worldSize = slurm.size;
  info.localRank = std::max(0, envInt(env, "SLURM_LOCALID", 0, 1 << 24));
  info.source = "slurm";
  // "2(x2),1": the first count is this step's largest per-node share (good enough to
  // decide whether ranks outnumber cores).
  if (auto tpn =
          env("SLURM_STEP_TASKS_PER_NODE").value_or(env("SLURM_TASKS_PER_NODE").value_or(""));
      !tpn.empty())
    info.localRanks = std::max(1, std::atoi(tpn.c_str()));
  int job = envInt(env, "SLURM_JOB_ID", 0, INT32_MAX);
  if (job < 0) job = envInt(env, "SLURM_JOBID", 0, INT32_MAX);
  int step = envInt(env, "SLURM_STEP_ID", 0, INT32_MAX);
  if (step < 0) step = envInt(env, "SLURM_STEPID", 0, INT32_MAX);
  defaultPort =
      portForJob(static_cast<uint64_t>(std::max(job, 0)), static_cast<uint64_t>(std::max(step, 0)));
  if (runId.empty()) runId = fmt::format("slurm-{}.{}", job, step);
  if (needAddress) {
    std::string nodes =
        env("SLURM_STEP_NODELIST")
            .value_or(env("SLURM_JOB_NODELIST").value_or(env("SLURM_NODELIST").value_or("")));
    std::vector<std::string> hosts = expandHostList(nodes);
    if (hosts.empty())
      throw UsageError("Slurm: SLURM_STEP_NODELIST is empty; give --rendezvous HOST:PORT");
    // Rank 0 runs on the first node of the step (block and cyclic distributions alike).
    info.rendezvousHost = resolveNodeAddress(hosts[0]);
    info.rendezvousPort = defaultPort;
  }
}

// Which launcher started this process (docs/rendezvous.md, "Who am I"), when neither --rank nor
// --np says: PMIx, Slurm, Open MPI, PMI, or none ("single"). Fills `info` and, for Slurm and
// PMIx, the default port and run id. UsageError for contradicting launcher variables and
// for a launcher whose world cannot meet without a rendezvous option.
void fromLauncher(const LaunchOptions& o, const Env& env, const RendezvousSpec& spec,
                  const std::string& fileStore, RankInfo& info, uint16_t& defaultPort,
                  std::string& runId) {
  const bool pmixServer = env("PMIX_RANK") && env("PMIX_NAMESPACE");
  const bool wantPmix = spec.kind == RendezvousKind::Pmix;
  // Launchers nest (mpirun inside salloc, srun inside an mpirun job), and children inherit the
  // outer one's variables: the per-process variables of the launcher that started us must win,
  // and two launchers that both claim to be it (they disagree on this process) are refused.
  const Claim pmix = claim(env, "PMIX_RANK", nullptr);
  const Claim ompi = claim(env, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE");
  const Claim pmi = claim(env, "PMI_RANK", "PMI_SIZE");
  const Claim slurm = env("SLURM_NTASKS") ? claim(env, "SLURM_PROCID", "SLURM_NTASKS")
                                          : Claim{"SLURM_PROCID", "SLURM_NTASKS"};
  auto contradiction = [&](const Claim& a, const Claim& b) {
    return UsageError(fmt::format(
        "contradictory launcher environment: {} but {}; both claim to have started this "
        "process (unset the stale ones, or give --rank/--world-size)",
        claimText(env, a), claimText(env, b)));
  };
  if (differ(pmix, ompi)) throw contradiction(pmix, ompi);
  if (differ(pmix, pmi)) throw contradiction(pmix, pmi);
  if (differ(ompi, pmi)) throw contradiction(ompi, pmi);
  // A build without PMIx says so first (rendezvous/pmix.h: the stub throws UsageError).
  if (wantPmix && !rendezvous::pmixBuilt()) (void)rendezvous::pmixInit();
  if (wantPmix && !pmixServer)
    throw UsageError(
        fmt::format("--rendezvous pmix: no PMIx server started this process ({}, {}); run it under "
                    "`srun --mpi=pmix`, mpirun or prterun",
                    shown(env, "PMIX_NAMESPACE"), shown(env, "PMIX_RANK")));
  // auto: PMIx whenever a PMIx server started us, this build has PMIx, and no other store
  // was named.
  const bool usePmix = wantPmix || (spec.kind == RendezvousKind::Auto && fileStore.empty() &&
                                    pmixServer && rendezvous::pmixBuilt());
  // The launcher's own variables beat inherited SLURM_* that disagree with them.
  const Claim* other = ompi.rank >= 0 ? &ompi : pmi.rank >= 0 ? &pmi : nullptr;
  const bool slurmStale =
      (other && differ(*other, slurm)) || (pmix.rank >= 0 && differ(pmix, slurm));
  if (usePmix) {
    if (o.standaloneServer)
      throw UsageError("--standalone-rendezvous: not with --rendezvous pmix (rank 0 serves)");
    info.rank = pmix.rank;
    info.worldSize = 0;  // PMIX_JOB_SIZE, filled in by applyPmixIdentity after PMIx_Init
    info.source = "pmix";
    if (runId.empty()) runId = "pmix-" + *env("PMIX_NAMESPACE");
  } else if (slurm.rank >= 0 && other != &ompi && !slurmStale) {
    fromSlurm(env, slurm, spec.kind != RendezvousKind::Tcp && fileStore.empty(), info, defaultPort,
              runId);
  } else if (other || slurm.rank >= 0) {
    // mpirun (or a PMI launcher) inside a Slurm allocation: SLURM_* describe mpirun's own
    // step, not these processes. Without OMPI/PMI variables only PMIx knows the size.
    if (!other)
      throw UsageError(fmt::format(
          "{} but {} (inherited from an enclosing Slurm step?): the size is only known to "
          "PMIx; use --rendezvous pmix",
          claimText(env, pmix), claimText(env, slurm)));
    const bool ompiOwn = other == &ompi;
    info.rank = other->rank;
    info.worldSize = other->size;
    info.localRank = std::max(
        0, envInt(env, ompiOwn ? "OMPI_COMM_WORLD_LOCAL_RANK" : "PMI_LOCAL_RANK", 0, 1 << 24));
    info.source = ompiOwn ? "openmpi" : "pmi";
    if (spec.kind != RendezvousKind::Tcp && fileStore.empty() && info.worldSize > 1)
      throw UsageError(fmt::format(
          "launched by {} ({}{}): give --rendezvous pmix (needs a PMIx server), HOST:PORT (the "
          "host of rank 0) or file:DIR",
          ompiOwn ? "mpirun" : "a PMI launcher", claimText(env, *other),
          slurmStale ? fmt::format("; ignoring the inherited {}", claimText(env, slurm)) : ""));
  } else {
    info.source = "single";
  }
}

// Rank 0 hosting the TCP store of a world of several ranks, with no token from --token,
// $RDMABENCH_TOKEN, PMIx or the Slurm job's secret (hand-started ranks, or mpirun/PMI with
// --rendezvous HOST:PORT): refused, as the standalone store is (docs/rendezvous.md, "Access
// token"). The store listens on every address, and a loopback one is open to every user of the
// host too, so no address makes it private. --token '' opts out (connectStore says so).
void requireStoreToken(const LaunchOptions& o, const RankInfo& info) {
  if (!info.hostsServer || info.worldSize < 2 || !info.token.empty() || info.slurmSecret ||
      o.token || info.source == "pmix")
    return;
  throw UsageError(fmt::format(
      "--token: none given, and rank 0's rendezvous store (port {}) would let anyone who reaches "
      "it join the run, read every rank's address and inject host names and results; give every "
      "rank the same --token T or {}, or --token '' to accept anyone",
      info.rendezvousPort ? info.rendezvousPort : kDefaultRendezvousPort, kTokenEnvVar));
}

}  // namespace

RankInfo detect(const LaunchOptions& o, const Env& env) {
  RankInfo info;
  info.host = env("SLURMD_NODENAME").value_or(hostName());
  const RendezvousSpec spec = parseRendezvous(o.rendezvous);
  std::string fileStore = o.fileStore;
  if (spec.kind == RendezvousKind::File) {
    if (!fileStore.empty() && fileStore != spec.path)
      throw UsageError(fmt::format("--rendezvous file:{} and --file-store {}: give only one",
                                   spec.path, fileStore));
    fileStore = spec.path;
  }
  info.fileStore = fileStore;
  info.token = resolveToken(o.token, false);
  info.slurmSecret = info.token.empty() && !o.token && env("SLURM_JOB_ID").has_value();
  uint16_t defaultPort = kDefaultRendezvousPort;
  std::string runId = o.runId.empty() ? env("RDMABENCH_RUN_ID").value_or("") : o.runId;
  const bool wantPmix = spec.kind == RendezvousKind::Pmix;

  if (o.rank || o.worldSize) {
    if (!o.rank || !o.worldSize)
      throw UsageError("--rank and --world-size: give both (or neither)");
    if (o.np) throw UsageError("--np and --rank: give only one of them");
    if (wantPmix)
      throw UsageError("--rendezvous pmix takes rank and size from PMIx: drop --rank/--world-size");
    if (*o.worldSize < 1 || *o.rank < 0 || *o.rank >= *o.worldSize)
      throw UsageError(fmt::format("--rank {}: out of range 0..{}", *o.rank, *o.worldSize - 1));
    if (spec.kind != RendezvousKind::Tcp && fileStore.empty() && *o.worldSize > 1)
      throw UsageError("--rank: also give --rendezvous HOST:PORT (rank 0's host) or --file-store");
    info.rank = *o.rank;
    info.worldSize = *o.worldSize;
    info.localRank = 0;
    info.source = "explicit";
  } else if (o.np > 0) {
    if (wantPmix)
      throw UsageError(
          "--np forks its own ranks and serves their rendezvous: drop --rendezvous pmix");
    info.worldSize = o.np;
    info.localRanks = o.np;
    info.source = "np";
  } else {
    fromLauncher(o, env, spec, fileStore, info, defaultPort, runId);
  }
  if (spec.kind == RendezvousKind::Tcp)
    parseHostPort(spec.address, defaultPort, info.rendezvousHost, info.rendezvousPort);
  info.runId = runId.empty() ? o.defaultRunId : runId;
  if (runId.empty()) info.runDescription = o.runDescription;
  info.hostsServer =
      info.rank == 0 && !o.standaloneServer && fileStore.empty() && info.source != "np";
  requireStoreToken(o, info);
  return info;
}

void applyPmixIdentity(RankInfo& info, const rendezvous::PmixIdentity& id) {
  if (info.rank != id.rank)
    throw UsageError(fmt::format(
        "PMIX_RANK={} but the PMIx server says this process is rank {} of namespace '{}'",
        info.rank, id.rank, id.nspace));
  info.worldSize = id.size;
  info.localRank = id.localRank;
  info.localRanks = id.localSize;
  info.pmixNamespace = id.nspace;
}

}  // namespace rdmabench::launch
