// Placement of N-rank runs: one CPU of --cpu LIST per local rank (common/placement.h
// rankPlacement) and the oversubscription warning rank 0 puts in the header
// (collective/rank_placement.h sharedCpuWarning).
#include "collective/rank_placement.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace rdmabench
