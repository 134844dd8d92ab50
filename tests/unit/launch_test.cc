// Launch detection: explicit flags, Slurm and mpirun environments, host list expansion.
#include <gtest/gtest.h>

#include <map>

#include "common/error.h"
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
  RankInfo i = detect(o, env);
  EXPECT_EQ(i.source, "openmpi");
  EXPECT_EQ(i.rank, 1);
  i = detect(o, envOf({{"PMI_RANK", "0"}, {"PMI_SIZE", "3"}}));
  EXPECT_EQ(i.source, "pmi");
  EXPECT_EQ(i.worldSize, 3);
  EXPECT_TRUE(i.hostsServer);
}

TEST(Detect, NothingIsOneRank) {
  RankInfo i = detect(LaunchOptions{}, envOf({}));
  EXPECT_EQ(i.worldSize, 1);
  EXPECT_EQ(i.source, "single");
}

}  // namespace
}  // namespace rdmabench::launch
