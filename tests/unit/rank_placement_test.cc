// Placement of N-rank runs: one CPU of --cpu LIST per local rank (common/placement.h
// rankPlacement) and the oversubscription warning rank 0 puts in the header
// (collective/rank_placement.h sharedCpuWarning).
#include "collective/rank_placement.h"

#include <unistd.h>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "collective/bench.h"
#include "common/error.h"
#include "common/placement.h"

namespace rdmabench {
namespace {

TEST(RankPlacement, OneCpuOfTheListPerLocalRank) {
  PlacementRequest r;
  r.cpus = "2-3,8";
  bool shared = true;
  EXPECT_EQ(rankPlacement(r, 0, 3, &shared).cpus, "2");
  EXPECT_FALSE(shared);
  EXPECT_EQ(rankPlacement(r, 1, 3).cpus, "3");
  EXPECT_EQ(rankPlacement(r, 2, 3).cpus, "8");
  // More ranks than CPUs: cycles, and says so.
  EXPECT_EQ(rankPlacement(r, 3, 4, &shared).cpus, "2");
  EXPECT_TRUE(shared);
  // One rank on the host: the whole list, as for a pair.
  EXPECT_EQ(rankPlacement(r, 0, 1).cpus, "2-3,8");
}

TEST(RankPlacement, OtherRequestsApplyToEveryRank) {
  PlacementRequest numa;
  numa.numa = "0";
  EXPECT_EQ(rankPlacement(numa, 3, 4).numa, "0");
  EXPECT_EQ(rankPlacement(numa, 3, 4).cpus, "");
  PlacementRequest bad;
  bad.cpus = "3-1";
  EXPECT_THROW(rankPlacement(bad, 0, 2), UsageError);
}

TEST(SharedCpuWarning, MoreRanksThanCpusOnAHost) {
  using collective::RankCpus;
  EXPECT_EQ(collective::sharedCpuWarning({{0, "a", "0"}, {1, "a", "1"}, {2, "b", "0"}}), "");
  EXPECT_EQ(collective::sharedCpuWarning(
                {{0, "a", "0-1"}, {1, "a", "0-1"}, {2, "a", "0-1"}, {3, "b", "0-1"}}),
            "3 ranks on a run on 2 CPUs (0-1)");
  EXPECT_EQ(collective::sharedCpuWarning({{0, "a", "0"}, {1, "a", "1"}, {2, "a", "0"}}),
            "3 ranks on a run on 2 CPUs (0-1)");
  // Enough CPUs in the union, but two ranks pinned to the same one.
  EXPECT_EQ(collective::sharedCpuWarning({{0, "a", "4"}, {1, "a", "4"}, {2, "a", "0-3"}}),
            "ranks 0, 1 on a share CPU 4");
  EXPECT_EQ(
      collective::sharedCpuWarning({{0, "a", "0"}, {1, "a", "0"}, {2, "b", "1"}, {3, "b", "1"}}),
      "2 ranks on a run on 1 CPU (0); 2 ranks on b run on 1 CPU (1)");
  // Unknown bindings count as no information, not as a clash.
  EXPECT_EQ(collective::sharedCpuWarning({{0, "a", ""}, {1, "a", ""}}), "");
}

// The progress mode of a rank (collective::chooseProgress): yield where more ranks than CPUs
// share the host, said in the note; -e always wins; busy polling otherwise.
TEST(ChooseProgress, OversubscribedDefaultIsYield) {
  using transport::ProgressMode;
  const int online = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  launch::RankInfo info;
  info.source = "slurm";  // counts the online CPUs
  info.localRanks = 2 * online;
  info.localRank = 1;
  PlacementRequest none;
  collective::ProgressChoice c = collective::chooseProgress(std::nullopt, none, info);
  EXPECT_EQ(c.mode, ProgressMode::kYield);
  EXPECT_EQ(c.note.rfind(fmt::format("auto: yield mode ({} ranks on this host share {} CPU",
                                     2 * online, online),
                         0),
            0u)
      << c.note;
  EXPECT_NE(c.note.find("mpi_yield_when_idle"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("-e on for event mode"), std::string::npos) << c.note;
  EXPECT_DOUBLE_EQ(c.cpuShare, 0.5);
  // Explicit -e: no note; event and busy poll never take the shared-CPU descheduling rule.
  c = collective::chooseProgress(ProgressMode::kEvent, none, info);
  EXPECT_EQ(c.mode, ProgressMode::kEvent);
  EXPECT_TRUE(c.note.empty());
  EXPECT_EQ(c.cpuShare, 0);
  c = collective::chooseProgress(ProgressMode::kBusyPoll, none, info);
  EXPECT_EQ(c.mode, ProgressMode::kBusyPoll);
  EXPECT_EQ(c.cpuShare, 0);
  c = collective::chooseProgress(ProgressMode::kYield, none, info);
  EXPECT_EQ(c.mode, ProgressMode::kYield);
  EXPECT_TRUE(c.note.empty());
  EXPECT_DOUBLE_EQ(c.cpuShare, 0.5);
  // One rank per CPU: busy polling, no note.
  info.localRanks = 1;
  info.localRank = 0;
  c = collective::chooseProgress(std::nullopt, none, info);
  EXPECT_EQ(c.mode, ProgressMode::kBusyPoll);
  EXPECT_TRUE(c.note.empty());
  // A --cpu list shorter than the local ranks: yield, and the list's CPUs are what is shared.
  PlacementRequest list;
  list.cpus = "0";
  info.localRanks = 2;
  info.localRank = 1;
  c = collective::chooseProgress(std::nullopt, list, info);
  EXPECT_EQ(c.mode, ProgressMode::kYield);
  EXPECT_EQ(c.note.rfind("auto: yield mode (--cpu 0 has fewer CPUs than the 2 ranks", 0), 0u)
      << c.note;
  EXPECT_DOUBLE_EQ(c.cpuShare, 0.5);
}

}  // namespace
}  // namespace rdmabench
