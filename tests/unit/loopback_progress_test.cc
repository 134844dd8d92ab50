// Issue 35 item 11: loopback lat / bw choose their progress mode as the N-rank commands do when
// the client and its forked server would not each have a CPU (cli/loopback_progress.h).
#include <gtest/gtest.h>

#include "cli/loopback_progress.h"
#include "cli/options.h"

namespace rdmabench::cli {
namespace {

using transport::ProgressMode;

TEST(LoopbackProgress, EventOnOneCpuYieldOnBusyCpusBusyPollOtherwise) {
  EXPECT_FALSE(loopbackProgress(true, 1, 2, 5));  // -e given: honoured, whatever the host
  auto one = loopbackProgress(false, 1, 8, 0);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->mode, ProgressMode::kEvent);
  EXPECT_EQ(one->note.rfind("auto: event mode (the loopback client", 0), 0u) << one->note;
  EXPECT_FALSE(loopbackProgress(false, 2, 2, 0));   // idle 2-CPU host: busy polling
  EXPECT_FALSE(loopbackProgress(false, 2, 2, -1));  // unknown: as asked (busy polling)
  auto busy = loopbackProgress(false, 2, 2, 2);     // two hogs on a 2-CPU host
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->mode, ProgressMode::kYield);
  EXPECT_EQ(busy->note.rfind("auto: yield mode (the loopback client and its forked server share 2 "
                             "CPUs with 2 other runnable tasks",
                             0),
            0u)
      << busy->note;
  EXPECT_TRUE(loopbackProgress(false, 2, 2, 1));     // 3 runnable on 2 CPUs
  EXPECT_FALSE(loopbackProgress(false, 8, 8, 5));    // 7 runnable on 8 CPUs
  EXPECT_TRUE(loopbackProgress(false, 8, 8, 7));     // 9 on 8
  EXPECT_FALSE(loopbackProgress(false, 2, 64, 10));  // pinned to 2 of 64: others elsewhere
  EXPECT_TRUE(loopbackProgress(false, 2, 64, 64));   // 64 others on 64 CPUs: 2 expected on ours
}

TEST(LoopbackProgress, UseEventGivenIsRecorded) {
  EXPECT_FALSE(parseClientCommand("lat", {}).progressGiven);
  EXPECT_TRUE(parseClientCommand("lat", {"-e", "off"}).progressGiven);
  EXPECT_TRUE(parseClientCommand("lat", {"-e"}).progressGiven);
}

TEST(LoopbackProgress, SomeoneIsRunning) {
  EXPECT_GE(otherRunnableTasks(1, 0), 0);  // /proc/stat is readable here; we are not counted
}

}  // namespace
}  // namespace rdmabench::cli
