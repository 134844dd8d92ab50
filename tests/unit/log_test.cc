#include "common/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "engine/progress.h"

namespace rdmabench::log {
namespace {

TEST(Log, WarningAndNoteLines) {
  std::ostringstream captured;
  {
    ScopedCapture capture(captured);
    warning("ring: 1 of 4 links above 3.00 us");
    note("the verbs transport is not built");
    write("rdmabench server: session 1 done\n");
  }
  EXPECT_EQ(captured.str(),
            "rdmabench: warning: ring: 1 of 4 links above 3.00 us\n"
            "rdmabench: note: the verbs transport is not built\n"
            "rdmabench server: session 1 done\n");
  // The capture ended: the sink is back on std::cerr.
  EXPECT_EQ(setStream(nullptr), nullptr);
}

TEST(Log, SetStreamReturnsThePrevious) {
  std::ostringstream a, b;
  EXPECT_EQ(setStream(&a), nullptr);  // the default: std::cerr
  EXPECT_EQ(setStream(&b), &a);
  EXPECT_EQ(setStream(nullptr), &b);
}

// Lines from many threads arrive whole: no line is cut by another thread's text.
TEST(Log, ThreadsNeverInterleaveInsideALine) {
  std::ostringstream captured;
  constexpr int kThreads = 8, kLines = 500;
  {
    ScopedCapture capture(captured);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([t] {
        for (int i = 0; i < kLines; ++i)
          write(fmt::format("thread {} line {} {}\n", t, i, std::string(40, 'a' + t)));
      });
    for (auto& th : threads)
      th.join();
  }
  std::istringstream in(captured.str());
  std::string line;
  int count = 0;
  while (std::getline(in, line)) {
    int t = -1, i = -1;
    char tail[64] = {};
    ASSERT_EQ(std::sscanf(line.c_str(), "thread %d line %d %63s", &t, &i, tail), 3) << line;
    EXPECT_EQ(std::string(tail), std::string(40, static_cast<char>('a' + t))) << line;
    ++count;
  }
  EXPECT_EQ(count, kThreads * kLines);
}

// lib's diagnostics go through the sink (they went straight to std::cerr before).
TEST(Log, LibraryLinesGoThroughTheSink) {
  ::setenv("RDMABENCH_TEST_HOLD", "warmup@3", 1);
  ::setenv("RDMABENCH_TEST_HOLD_MS", "0", 1);
  std::ostringstream captured;
  {
    ScopedCapture capture(captured);
    engine::testHold("warmup", 3, "warmup");
  }
  ::unsetenv("RDMABENCH_TEST_HOLD");
  ::unsetenv("RDMABENCH_TEST_HOLD_MS");
  EXPECT_EQ(captured.str(), fmt::format("rdmabench: test hook: pid {} holding at warmup\n"
                                        "rdmabench: test hook: pid {} resumes after warmup\n",
                                        getpid(), getpid()));
}

}  // namespace
}  // namespace rdmabench::log
