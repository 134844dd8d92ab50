#pragma once
// "Who am I": rank, world size and where the rendezvous is, from (in this order) explicit
// flags, `--np N` (fork N local ranks), Slurm's srun environment, Open MPI's mpirun environment
// or a PMI environment; a process with none of these is a world of one. docs/rendezvous.md.
// Thread-safety: pure functions, except runLocal (forks; call it before any thread or device
// exists).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/pmix.h"
#include "rendezvous/store.h"

namespace rdmabench::launch {

// Rendezvous port when --rendezvous names only a host (and not under Slurm).
inline constexpr uint16_t kDefaultRendezvousPort = 18516;

// Reads one environment variable; nullopt when unset. Injected so tests need no real env.
using Env = std::function<std::optional<std::string>(const std::string&)>;
// The process environment.
Env processEnv();

// What --rendezvous names: "auto" or "" (PMIx when a PMIx server started this process, else
// what the launcher's environment implies), "pmix", "file:PATH", "tcp://HOST[:PORT]" or the
// historical "HOST[:PORT]".
enum class RendezvousKind { Auto, Pmix, Tcp, File };
struct RendezvousSpec {
  RendezvousKind kind = RendezvousKind::Auto;
  std::string address;  // Tcp: "HOST[:PORT]"
  std::string path;     // File: the shared directory
};
// Parses the --rendezvous text. UsageError for "file:" or "tcp://" without their argument.
RendezvousSpec parseRendezvous(const std::string& text);

struct LaunchOptions {
  std::optional<int> rank;        // --rank
  std::optional<int> worldSize;   // --world-size
  std::string rendezvous;         // --rendezvous auto|pmix|file:PATH|tcp://HOST[:PORT]|HOST[:PORT]
  int np = 0;                     // --np N (fork N local ranks); 0 = not given
  std::string runId;              // --run-id; empty = derived
  std::string fileStore;          // --file-store DIR: shared-directory store instead of TCP
  bool standaloneServer = false;  // --standalone-rendezvous: rank 0 does not host the server
  std::string defaultRunId;       // used when nothing else names the run (hash of the command)
  std::string runDescription;     // what defaultRunId hashes (cli::defaultRunId), for refusals
  // --token for the rendezvous store (common/token.h resolveToken: the option, else
  // $RDMABENCH_TOKEN, else under Slurm the job's secret, slurmJobToken); nullopt = not given.
  std::optional<std::string> token;
};

struct RankInfo {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  int localRanks = 1;          // ranks on this host (SLURM_STEP_TASKS_PER_NODE, --np)
  std::string host;            // this rank's node name (SLURMD_NODENAME, else gethostname)
  std::string rendezvousHost;  // address of the TCP store server
  uint16_t rendezvousPort = 0;
  std::string runId;
  // With the derived run id: the measurement it hashes, sent in the store join so a refusal of a
  // rank with another measurement names both ("" otherwise).
  std::string runDescription;
  std::string source;        // "explicit", "np", "pmix", "slurm", "openmpi", "pmi", "single"
  bool hostsServer = false;  // this rank runs the embedded store server (rank 0)
  std::string fileStore;     // non-empty: use a FileStore in this directory
  // Access token of the TCP store: required by the server rank 0 (or --np) hosts, sent by every
  // rank. "" = none. --np and PMIx generate a random one when none was given.
  std::string token;
  // No --token and no $RDMABENCH_TOKEN inside a Slurm job: the TCP store's token is the job's
  // secret (common/token.h slurmJobToken), read by connectStore only when a rank uses that store.
  bool slurmSecret = false;
  // source "pmix": the PMIx namespace (set by applyPmixIdentity).
  std::string pmixNamespace;
  // --ifname / $RDMABENCH_IFNAME (launch/ifname.h): which interface's IPv4 address rank 0
  // publishes for its store under PMIx; "" = the first up, non-loopback one.
  std::string ifname;
};

// Detects this rank's identity. Launchers nest, so the environment may hold several launchers'
// variables; the decision table is in docs/rendezvous.md ("Who am I"): PMIx (PMIX_RANK +
// PMIX_NAMESPACE) with --rendezvous auto|pmix; Open MPI's OMPI_COMM_WORLD_* and PMI_RANK/SIZE
// beat SLURM_* they disagree with (inherited from mpirun's own step); PMIX_RANK,
// OMPI_COMM_WORLD_RANK/SIZE and PMI_RANK/SIZE that disagree with each other are refused.
// With source "pmix" the world size is 0 until applyPmixIdentity. Throws UsageError, one line
// naming the variables, for a contradictory environment, and for inconsistent flags (rank
// outside the world, --rank without --world-size, a launcher environment without a rendezvous
// address, --rendezvous pmix without a PMIx server), and for rank 0 hosting the TCP store of a
// world of several ranks with no token at all: neither --token (an explicit "" opts out) nor
// $RDMABENCH_TOKEN, outside PMIx, Slurm and --np (docs/rendezvous.md, "Access token").
RankInfo detect(const LaunchOptions& options, const Env& env);

// Completes a "pmix" RankInfo from what PMIx_Init returned (rendezvous::pmixInit): world size,
// local rank and local size. UsageError when PMIX_RANK disagreed with the server.
void applyPmixIdentity(RankInfo& info, const rendezvous::PmixIdentity& id);

// Slurm host list expansion: "n[1-3,7],gpu[01-02],login" -> n1 n2 n3 n7 gpu01 gpu02 login
// (zero padding kept; nested brackets are not a Slurm feature). UsageError on malformed text.
std::vector<std::string> expandHostList(std::string_view list);

// Address of a node name: getaddrinfo first; when the name does not resolve (emulated Slurm
// nodes), Slurm's NodeAddr from `scontrol show node NAME`. UsageError when neither works.
std::string resolveNodeAddress(const std::string& node);
// The NodeAddr= field of `scontrol show node -o` output ("" when absent). Pure, unit-tested.
std::string parseNodeAddr(std::string_view scontrolLine);

// Rendezvous port derived from a Slurm job and step id: 20000 + (job * 64 + step) mod 20000,
// so two steps of one job and consecutive jobs on one node do not collide.
uint16_t portForJob(uint64_t jobId, uint64_t stepId);

// "host:port", "[v6]:port", "host" (port = defaultPort). UsageError on a bad port.
void parseHostPort(const std::string& text, uint16_t defaultPort, std::string& host,
                   uint16_t& port);

// How runLocal ends a run whose ranks do not all exit by themselves (milliseconds).
struct LocalRunLimits {
  // Once any rank has exited (success or failure), the others get this long to exit too
  // before they are signalled: a rank stuck (SIGSTOPped, spinning) never holds the launcher.
  // Use the run's --timeout: a healthy rank leaves its last barrier within it. <= 0 = no limit.
  int64_t afterFirstExitMs = 10'000;
  // Whole-run deadline from the start (<= 0 = none); past it every rank is signalled.
  int64_t deadlineMs = 0;
  // SIGTERM first; ranks still alive this long after get SIGKILL.
  int64_t graceMs = 3'000;
  // The store's limit from connecting to joining (StoreLimits::handshakeMs; at least its 10 s
  // default): 1024 ranks on 2 cores may take longer. Use the run's --timeout.
  int64_t handshakeMs = 10'000;
};

// Forks `np` ranks on this host after starting the TCP store server (127.0.0.1, ephemeral
// port) in this process, runs `body(rank info)` in each child (its return value is the exit
// status; exceptions must be caught by body), serves the store until every child exited and
// returns the first non-zero exit status (128 + signal for a killed child), else 0.
// When a rank fails, or `limits` expire, the remaining ranks get SIGTERM, then SIGKILL after
// limits.graceMs; a line on stderr ("rdmabench: error: launcher: ...") names the first failed
// rank and every rank that had to be signalled. A run cut short this way never returns 0.
int runLocal(int np, const RankInfo& base, const std::function<int(const RankInfo&)>& body,
             const LocalRunLimits& limits = {});

// A connected store for `info`: a FileStore, or a TcpStoreClient (for rank 0 with hostsServer,
// after starting the embedded server thread in `serverOut`). Source "pmix" (after
// applyPmixIdentity): rank 0 starts its server on an ephemeral port with a random token and
// publishes address, port and token through PMIx (rendezvous::pmixShareFromRank, one fence);
// every rank then joins it as a TcpStoreClient whose describe() is "pmix NS (tcp ADDR:PORT)".
// ADDR: selectAddress(localInterfaces(), info.ifname) (UsageError when --ifname selects none).
// Timeouts in milliseconds; errors as the stores' constructors and pmixShareFromRank.
std::unique_ptr<rendezvous::Store> connectStore(
    const RankInfo& info, int64_t timeoutMs,
    std::unique_ptr<rendezvous::TcpStoreServer>& serverOut);

}  // namespace rdmabench::launch
