// Launch detection: explicit flags, Slurm, mpirun and PMIx environments (the decision table of
// docs/rendezvous.md), --rendezvous forms, host list expansion.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "common/error.h"
#include "common/token.h"
#include "launch/launch.h"

namespace rdmabench::launch {
namespace {

Env envOf(std::map<std::string, std::string> m) {
  return [m](const std::string& k) -> std::optional<std::string> {
    auto it = m.find(k);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}

TEST(HostList, Expands) {
  EXPECT_EQ(expandHostList("n[1-3,7]"), (std::vector<std::string>{"n1", "n2", "n3", "n7"}));
  EXPECT_EQ(expandHostList("gpu[01-02],login"),
            (std::vector<std::string>{"gpu01", "gpu02", "login"}));
  EXPECT_EQ(expandHostList("a,b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(expandHostList("r[9-10]x"), (std::vector<std::string>{"r9x", "r10x"}));
  EXPECT_THROW(expandHostList("n[1-"), UsageError);
  EXPECT_THROW(expandHostList("n[3-1]"), UsageError);
}

TEST(HostPort, Parses) {
  std::string h;
  uint16_t p;
  parseHostPort("node1:1234", 9, h, p);
  EXPECT_EQ(h, "node1");
  EXPECT_EQ(p, 1234);
  parseHostPort("node1", 9, h, p);
  EXPECT_EQ(p, 9);
  parseHostPort("[::1]:77", 9, h, p);
  EXPECT_EQ(h, "::1");
  EXPECT_EQ(p, 77);
  EXPECT_THROW(parseHostPort("x:70000", 9, h, p), UsageError);
}

TEST(NodeAddr, ParsesScontrol) {
  EXPECT_EQ(parseNodeAddr("NodeName=n1 Arch=x86_64 NodeAddr=127.0.0.1 NodeHostName=vm"),
            "127.0.0.1");
  EXPECT_EQ(parseNodeAddr("nothing"), "");
}

TEST(Detect, Explicit) {
  LaunchOptions o;
  o.rank = 2;
  o.worldSize = 4;
  o.rendezvous = "10.0.0.1:555";
  o.defaultRunId = "cmd-1";
  RankInfo i = detect(o, envOf({}));
  EXPECT_EQ(i.rank, 2);
  EXPECT_EQ(i.worldSize, 4);
  EXPECT_EQ(i.rendezvousHost, "10.0.0.1");
  EXPECT_EQ(i.rendezvousPort, 555);
  EXPECT_EQ(i.runId, "cmd-1");
  EXPECT_FALSE(i.hostsServer);
  o.rank = 4;
  EXPECT_THROW(detect(o, envOf({})), UsageError);
  o.rank = 0;
  o.token = "t";  // rank 0 hosting the store needs one (Detect.HandStartedStoreNeedsAToken)
  EXPECT_TRUE(detect(o, envOf({})).hostsServer);
  o.rendezvous.clear();
  EXPECT_THROW(detect(o, envOf({})), UsageError);
}

TEST(Detect, SlurmWithNodeAddressGiven) {
  LaunchOptions o;
  o.rendezvous = "127.0.0.1";  // port still derived from the job
  RankInfo i = detect(o, envOf({{"SLURM_PROCID", "3"},
                                {"SLURM_NTASKS", "4"},
                                {"SLURM_LOCALID", "1"},
                                {"SLURM_JOB_ID", "42"},
                                {"SLURM_STEP_ID", "0"},
                                {"SLURMD_NODENAME", "n2"},
                                {"SLURM_STEP_NODELIST", "n[1-2]"}}));
  EXPECT_EQ(i.source, "slurm");
  EXPECT_EQ(i.rank, 3);
  EXPECT_EQ(i.worldSize, 4);
  EXPECT_EQ(i.localRank, 1);
  EXPECT_EQ(i.host, "n2");
  EXPECT_EQ(i.rendezvousPort, portForJob(42, 0));
  EXPECT_EQ(i.runId, "slurm-42.0");
  EXPECT_NE(portForJob(42, 0), portForJob(42, 1));
}

TEST(Detect, SlurmResolvesFirstNode) {
  RankInfo i = detect(LaunchOptions{}, envOf({{"SLURM_PROCID", "1"},
                                              {"SLURM_NTASKS", "2"},
                                              {"SLURM_JOB_ID", "7"},
                                              {"SLURM_STEP_NODELIST", "localhost"}}));
  EXPECT_EQ(i.rendezvousHost, "localhost");
}

TEST(Detect, MpirunNeedsRendezvous) {
  auto env = envOf({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
  EXPECT_THROW(detect(LaunchOptions{}, env), UsageError);
  LaunchOptions o;
  o.rendezvous = "h:1";
  o.token = "t";  // rank 0 hosts the store below
  RankInfo i = detect(o, env);
  EXPECT_EQ(i.source, "openmpi");
  EXPECT_EQ(i.rank, 1);
  i = detect(o, envOf({{"PMI_RANK", "0"}, {"PMI_SIZE", "3"}}));
  EXPECT_EQ(i.source, "pmi");
  EXPECT_EQ(i.worldSize, 3);
  EXPECT_TRUE(i.hostsServer);
}

// Issue 36 item 2: rank 0 hosting the TCP store of hand-started ranks (or of mpirun/PMI ranks
// given --rendezvous HOST:PORT) without any token is refused, one line naming --token; a token,
// --token '' (explicitly open), a world of one, a file store, a standalone store, other ranks,
// PMIx and the Slurm job's secret are not.
TEST(Detect, HandStartedStoreNeedsAToken) {
  const char* saved = std::getenv(kTokenEnvVar);
  const std::string savedToken = saved ? saved : "";
  ::unsetenv(kTokenEnvVar);
  LaunchOptions o;
  o.rank = 0;
  o.worldSize = 2;
  o.rendezvous = "127.0.0.1:555";
  try {
    detect(o, envOf({}));
    ADD_FAILURE() << "rank 0 without a token was not refused";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--token: none given, and rank 0's rendezvous store "
                                          "(port 555) would let anyone who reaches it join",
                                          0),
              0u)
        << e.what();
  }
  auto env = envOf({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
  LaunchOptions m;
  m.rendezvous = "h:1";
  EXPECT_THROW(detect(m, env), UsageError);  // mpirun's ranks have no secret of their own
  o.token = "";
  EXPECT_EQ(detect(o, envOf({})).token, "");  // --token '': open on request
  o.token = "s";
  EXPECT_EQ(detect(o, envOf({})).token, "s");
  o.token.reset();
  ::setenv(kTokenEnvVar, "from-env", 1);
  EXPECT_EQ(detect(o, envOf({})).token, "from-env");
  ::unsetenv(kTokenEnvVar);
  EXPECT_TRUE(detect(o, envOf({{"SLURM_JOB_ID", "7"}})).slurmSecret);  // the job's secret
  o.rank = 1;  // not hosting: the store refuses it if it needs a token
  EXPECT_NO_THROW(detect(o, envOf({})));
  o.rank = 0;
  o.standaloneServer = true;  // the standalone store checks its own
  EXPECT_NO_THROW(detect(o, envOf({})));
  o.standaloneServer = false;
  o.worldSize = 1;  // nobody else can join a world of one
  EXPECT_NO_THROW(detect(o, envOf({})));
  o.worldSize = 2;
  o.rendezvous = "file:/tmp/x";
  EXPECT_NO_THROW(detect(o, envOf({})));
  if (saved) ::setenv(kTokenEnvVar, savedToken.c_str(), 1);
}

TEST(Rendezvous, ParsesEveryForm) {
  EXPECT_EQ(parseRendezvous("").kind, RendezvousKind::Auto);
  EXPECT_EQ(parseRendezvous("auto").kind, RendezvousKind::Auto);
  EXPECT_EQ(parseRendezvous("pmix").kind, RendezvousKind::Pmix);
  RendezvousSpec t = parseRendezvous("tcp://h:12");
  EXPECT_EQ(t.kind, RendezvousKind::Tcp);
  EXPECT_EQ(t.address, "h:12");
  t = parseRendezvous("h:12");  // the historical form
  EXPECT_EQ(t.kind, RendezvousKind::Tcp);
  EXPECT_EQ(t.address, "h:12");
  RendezvousSpec f = parseRendezvous("file:/shared/x");
  EXPECT_EQ(f.kind, RendezvousKind::File);
  EXPECT_EQ(f.path, "/shared/x");
  EXPECT_THROW(parseRendezvous("file:"), UsageError);
  EXPECT_THROW(parseRendezvous("tcp://"), UsageError);
}

TEST(Detect, FileFormIsTheFileStore) {
  LaunchOptions o;
  o.rank = 1;
  o.worldSize = 2;
  o.rendezvous = "file:/tmp/rdv";
  RankInfo i = detect(o, envOf({}));
  EXPECT_EQ(i.fileStore, "/tmp/rdv");
  o.fileStore = "/elsewhere";
  EXPECT_THROW(detect(o, envOf({})), UsageError);
}

// The decision table of docs/rendezvous.md ("Who am I"), row by row.
const std::map<std::string, std::string> kSallocSlurm0 = {{"SLURM_PROCID", "0"},
                                                          {"SLURM_NTASKS", "2"},
                                                          {"SLURM_JOB_ID", "9"},
                                                          {"SLURM_STEP_ID", "0"},
                                                          {"SLURM_LOCALID", "0"},
                                                          {"SLURM_STEP_NODELIST", "localhost"},
                                                          {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"}};

std::map<std::string, std::string> with(std::map<std::string, std::string> base,
                                        const std::map<std::string, std::string>& more) {
  for (const auto& [k, v] : more)
    base[k] = v;
  return base;
}

std::string usageError(const LaunchOptions& o, const Env& env) {
  try {
    detect(o, env);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(DetectTable, PmixServerWinsUnderAuto) {
  // mpirun -np 4 inside salloc -N 2: every process inherits SLURM_PROCID 0 or 1 of 2.
  auto env = envOf(with(kSallocSlurm0, {{"PMIX_RANK", "3"},
                                        {"PMIX_NAMESPACE", "1301020673"},
                                        {"OMPI_COMM_WORLD_RANK", "3"},
                                        {"OMPI_COMM_WORLD_SIZE", "4"}}));
  if (!rendezvous::pmixBuilt()) {
    // A build without PMIx: auto falls back to Open MPI's variables (never to SLURM_*).
    EXPECT_EQ(usageError(LaunchOptions{}, env),
              "launched by mpirun (OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4; ignoring the "
              "inherited SLURM_PROCID=0 SLURM_NTASKS=2): give --rendezvous pmix (needs a PMIx "
              "server), HOST:PORT (the host of rank 0) or file:DIR");
    return;
  }
  RankInfo i = detect(LaunchOptions{}, env);
  EXPECT_EQ(i.source, "pmix");
  EXPECT_EQ(i.rank, 3);
  EXPECT_EQ(i.worldSize, 0);  // until applyPmixIdentity
  EXPECT_EQ(i.runId, "pmix-1301020673");
  EXPECT_TRUE(i.rendezvousHost.empty());  // no derived Slurm port
  EXPECT_EQ(i.rendezvousPort, 0);
  rendezvous::PmixIdentity id{"1301020673", 3, 4, 1, 2};
  applyPmixIdentity(i, id);
  EXPECT_EQ(i.worldSize, 4);
  EXPECT_EQ(i.localRank, 1);
  EXPECT_EQ(i.localRanks, 2);
  EXPECT_EQ(i.pmixNamespace, "1301020673");
  id.rank = 2;
  EXPECT_THROW(applyPmixIdentity(i, id), UsageError);
  // Rank 0 of the same job hosts the store; so does srun --mpi=pmix's rank 0.
  EXPECT_TRUE(detect(LaunchOptions{}, envOf({{"PMIX_RANK", "0"},
                                             {"PMIX_NAMESPACE", "slurm.pmix.2.0"},
                                             {"SLURM_PROCID", "0"},
                                             {"SLURM_NTASKS", "4"}}))
                  .hostsServer);
}

TEST(DetectTable, ExplicitStoreUnderPmixKeepsTheEnvironment) {
  // srun --mpi=pmix with --rendezvous HOST:PORT: Slurm, as before (PMIX_RANK agrees).
  LaunchOptions o;
  o.rendezvous = "127.0.0.1:999";
  auto env = envOf(with(kSallocSlurm0, {{"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", "slurm.pmix.9.0"}}));
  EXPECT_EQ(detect(o, env).source, "slurm");
  // mpirun inside salloc with --rendezvous HOST:PORT: Open MPI's variables beat SLURM_*.
  auto mpi = envOf(with(kSallocSlurm0, {{"PMIX_RANK", "3"},
                                        {"PMIX_NAMESPACE", "77"},
                                        {"OMPI_COMM_WORLD_RANK", "3"},
                                        {"OMPI_COMM_WORLD_SIZE", "4"}}));
  RankInfo i = detect(o, mpi);
  EXPECT_EQ(i.source, "openmpi");
  EXPECT_EQ(i.rank, 3);
  EXPECT_EQ(i.worldSize, 4);
  EXPECT_EQ(i.rendezvousPort, 999);
}

TEST(DetectTable, OpenMpiBeatsInheritedSlurm) {
  // Env only (no PMIx): two processes with OMPI ranks 0 and 1 of 2 that both inherited
  // SLURM_PROCID=0 SLURM_NTASKS=2. Before: both were Slurm rank 0 ("rank 0 joined twice").
  LaunchOptions o;
  o.rendezvous = "127.0.0.1:999";
  for (int r = 0; r < 2; ++r) {
    RankInfo i = detect(o, envOf(with(kSallocSlurm0, {{"OMPI_COMM_WORLD_RANK", std::to_string(r)},
                                                      {"OMPI_COMM_WORLD_SIZE", "2"}})));
    EXPECT_EQ(i.source, "openmpi");
    EXPECT_EQ(i.rank, r);
    EXPECT_EQ(i.worldSize, 2);
    EXPECT_EQ(i.rendezvousPort, 999);  // not Slurm's derived port
    EXPECT_EQ(i.hostsServer, r == 0);
  }
  // Without a store address: one line naming both sets of variables.
  EXPECT_EQ(
      usageError(LaunchOptions{}, envOf(with(kSallocSlurm0, {{"OMPI_COMM_WORLD_RANK", "1"},
                                                             {"OMPI_COMM_WORLD_SIZE", "2"}}))),
      "launched by mpirun (OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2; ignoring the "
      "inherited SLURM_PROCID=0 SLURM_NTASKS=2): give --rendezvous pmix (needs a PMIx "
      "server), HOST:PORT (the host of rank 0) or file:DIR");
}

TEST(DetectTable, PmiBeatsInheritedSlurmButAgreeingPmiIsSrun) {
  LaunchOptions o;
  o.rendezvous = "h:1";
  // srun --mpi=pmi2: PMI_RANK agrees with SLURM_PROCID: Slurm (it knows where rank 0 is).
  EXPECT_EQ(
      detect(LaunchOptions{}, envOf(with(kSallocSlurm0, {{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}})))
          .source,
      "slurm");
  // A PMI launcher inside an allocation: its variables win.
  RankInfo i = detect(o, envOf(with(kSallocSlurm0, {{"PMI_RANK", "5"}, {"PMI_SIZE", "6"}})));
  EXPECT_EQ(i.source, "pmi");
  EXPECT_EQ(i.rank, 5);
  EXPECT_EQ(i.worldSize, 6);
}

TEST(DetectTable, ContradictionsAreOneLineErrors) {
  EXPECT_EQ(usageError(LaunchOptions{}, envOf({{"PMIX_RANK", "0"},
                                               {"PMIX_NAMESPACE", "x"},
                                               {"OMPI_COMM_WORLD_RANK", "1"},
                                               {"OMPI_COMM_WORLD_SIZE", "2"}})),
            "contradictory launcher environment: PMIX_RANK=0 but OMPI_COMM_WORLD_RANK=1 "
            "OMPI_COMM_WORLD_SIZE=2; both claim to have started this process (unset the stale "
            "ones, or give --rank/--world-size)");
  EXPECT_EQ(usageError(LaunchOptions{}, envOf({{"OMPI_COMM_WORLD_RANK", "1"},
                                               {"OMPI_COMM_WORLD_SIZE", "2"},
                                               {"PMI_RANK", "1"},
                                               {"PMI_SIZE", "4"}})),
            "contradictory launcher environment: OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 "
            "but PMI_RANK=1 PMI_SIZE=4; both claim to have started this process (unset the "
            "stale ones, or give --rank/--world-size)");
  EXPECT_EQ(usageError(LaunchOptions{}, envOf({{"OMPI_COMM_WORLD_RANK", "1"}})),
            "OMPI_COMM_WORLD_RANK is set but OMPI_COMM_WORLD_SIZE is not");
  EXPECT_EQ(usageError(LaunchOptions{},
                       envOf({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "2"}})),
            "OMPI_COMM_WORLD_RANK=2 is outside OMPI_COMM_WORLD_SIZE=2");
  // PMIx disagrees with inherited SLURM_*, but the user asked for a TCP store: only PMIx
  // knows the size.
  LaunchOptions o;
  o.rendezvous = "h:1";
  EXPECT_EQ(
      usageError(o, envOf(with(kSallocSlurm0, {{"PMIX_RANK", "3"}, {"PMIX_NAMESPACE", "p"}}))),
      "PMIX_RANK=3 but SLURM_PROCID=0 SLURM_NTASKS=2 (inherited from an enclosing Slurm "
      "step?): the size is only known to PMIx; use --rendezvous pmix");
}

TEST(DetectTable, PmixOnlyWhenItCanWork) {
  LaunchOptions o;
  o.rendezvous = "pmix";
  EXPECT_EQ(usageError(o, envOf({})),
            rendezvous::pmixBuilt()
                ? "--rendezvous pmix: no PMIx server started this process (PMIX_NAMESPACE unset, "
                  "PMIX_RANK unset); run it under `srun --mpi=pmix`, mpirun or prterun"
                : "--rendezvous pmix: this rdmabench was built without PMIx "
                  "(RDMABENCH_WITH_PMIX=OFF or libpmix-dev missing); use --rendezvous HOST:PORT "
                  "or file:DIR");
  o.np = 2;
  EXPECT_THROW(detect(o, envOf({})), UsageError);
  o.np = 0;
  o.rank = 0;
  o.worldSize = 2;
  EXPECT_THROW(detect(o, envOf({{"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", "n"}})), UsageError);
  // auto with a file store named: the file store, identity from the environment.
  LaunchOptions f;
  f.fileStore = "/tmp/x";
  RankInfo i = detect(f, envOf({{"PMIX_RANK", "1"},
                                {"PMIX_NAMESPACE", "n"},
                                {"OMPI_COMM_WORLD_RANK", "1"},
                                {"OMPI_COMM_WORLD_SIZE", "3"}}));
  EXPECT_EQ(i.source, "openmpi");
  EXPECT_EQ(i.worldSize, 3);
}

TEST(Detect, NothingIsOneRank) {
  RankInfo i = detect(LaunchOptions{}, envOf({}));
  EXPECT_EQ(i.worldSize, 1);
  EXPECT_EQ(i.source, "single");
}

}  // namespace
}  // namespace rdmabench::launch
