// The --np launcher's folding of identical stderr lines (launch/fold.h), issue 22 item 7.
#include "launch/fold.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace rdmabench::launch {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(Fold, RankListRanges) {
  EXPECT_EQ(formatRankList({5, 0, 1, 2, 7, 8, 3}), "0-3,5,7-8");
  EXPECT_EQ(formatRankList({4}), "4");
  EXPECT_EQ(formatRankList({}), "");
}

TEST(Fold, IdenticalLinesAfterTheRankPrefixFoldIntoOne) {
  std::vector<std::string> out;
  LineFolder f(300 * kMs, [&](const std::string& l) { out.push_back(l); });
  for (int r : {3, 0, 1, 2, 4, 5})
    f.add(r, "rdmabench: error: rank " + std::to_string(r) + " on vm: --cpu 99: not allowed", 0);
  f.add(2, "rdmabench: error: rank 2 on vm: something else", 10 * kMs);
  f.flushDue(299 * kMs);
  EXPECT_TRUE(out.empty());  // still within the window
  f.flushDue(300 * kMs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], "rdmabench: error: ranks 0-5 on vm: --cpu 99: not allowed");
  f.flushAll();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1], "rdmabench: error: rank 2 on vm: something else");  // one rank: unchanged
  // Knowing the world: a line every rank wrote goes out without waiting for the window.
  LineFolder all(
      300 * kMs, [&](const std::string& l) { out.push_back(l); }, 2);
  all.add(0, "rank 0 on h: x", 0);
  all.add(1, "rank 1 on h: x", 0);
  all.flushDue(1);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2], "ranks 0-1 on h: x");
}

// The rank's own "rank N: " inside its message (collective/comm.cc) kept identical errors of
// many ranks apart: "rank 1 on vm: rank 1: ..." (newcomer trial).
TEST(Fold, TheRanksOwnPrefixInsideTheMessageDoesNotKeepLinesApart) {
  EXPECT_EQ(stripOwnRank("rank 3: rank 3: peer gone", 3), "peer gone");
  EXPECT_EQ(stripOwnRank("rank 3: peer gone", 4), "rank 3: peer gone");
  EXPECT_EQ(stripOwnRank("connecting to rank 3: x", 3), "connecting to rank 3: x");
  std::vector<std::string> out;
  LineFolder f(300 * kMs, [&](const std::string& l) { out.push_back(l); });
  for (int r : {0, 1, 2})
    f.add(r,
          "rdmabench: error: rank " + std::to_string(r) + " on vm: rank " + std::to_string(r) +
              ": rank 3 on host vm failed: --cpu 99",
          0);
  f.flushAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], "rdmabench: error: ranks 0-2 on vm: rank 3 on host vm failed: --cpu 99");
}

// Issue 35 item 12: `barrier --np 1000` on 2 CPUs collapsed; each rank relayed the failure it
// heard of, in chains ("rank 95 ... failed: rank 2 ... failed: ROOT"), 79-113 lines of up to
// 1,440 characters. The root cause's own line, then one line for every rank it stopped.
TEST(Fold, RelayedFailuresBecomeOneLinePerRootCause) {
  std::vector<std::string> out;
  LineFolder f(300 * kMs, [&](const std::string& l) { out.push_back(l); });
  const std::string root = "connecting to rank 66 over socket: timed out";
  auto line = [](int r, const std::string& text) {
    return "rdmabench: error: rank " + std::to_string(r) + " on vm: " + text;
  };
  int64_t t = 0;
  for (int r = 0; r < 10; ++r, t += 400 * kMs) {
    if (r == 2) {
      f.add(r, line(r, root), t);
    } else if (r < 5) {
      f.add(r, line(r, "rank 2 on host vm failed: " + root), t);
    } else {  // a chain through the ranks that relayed before
      f.add(r,
            line(r, "rank " + std::to_string(r - 1) +
                        " on host vm failed: rank 3 on host vm "
                        "failed: rank 2 on host vm failed: " +
                        root),
            t);
    }
    f.flushDue(t);
  }
  f.flushAll();
  std::vector<std::string> want{
      line(2, root), "rdmabench: error: ranks 0-1,3-9 on vm: rank 2 on host vm failed: " + root};
  EXPECT_EQ(out, want);
}

TEST(Fold, LinesWithoutAPrefixAndRepeatsKeepTheirOrder) {
  std::vector<std::string> out;
  LineFolder f(300 * kMs, [&](const std::string& l) { out.push_back(l); });
  f.add(0, "rdmabench: warning: slow", 0);
  f.add(1, "rdmabench: warning: slow", 0);
  f.add(1, "a line", 0);
  f.add(1, "a line", 0);  // the same rank again: the first copy goes out first
  // A prefix naming another rank than the writer's is not a rank prefix.
  f.add(0, "rdmabench: error: rank 7 on vm: x", 0);
  f.add(1, "rdmabench: error: rank 7 on vm: x", 0);
  f.flushAll();
  std::vector<std::string> want{"rdmabench: warning: slow (ranks 0-1)", "a line", "a line",
                                "rdmabench: error: rank 7 on vm: x (ranks 0-1)"};
  EXPECT_EQ(out, want);
  // The tests' hold markers go out at once (after what came before them).
  out.clear();
  f.add(0, "rdmabench: error: rank 0 on vm: y", 0);
  f.add(0, "rdmabench: test hook: pid 12 holding at warmup", 0);
  want = {"rdmabench: error: rank 0 on vm: y", "rdmabench: test hook: pid 12 holding at warmup"};
  EXPECT_EQ(out, want);
}

// Pipes end to end: a rank writing far more than a pipe holds never blocks, every line arrives,
// and an unterminated last line is printed at exit.
TEST(Fold, StderrFolderDrainsWithoutLosingLines) {
  FILE* capture = std::tmpfile();  // a file: the folder's output never blocks on the test
  ASSERT_NE(capture, nullptr);
  const int saved = dup(2);
  {
    StderrFolder folder(2, 50);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      folder.redirectChild(1);
      std::string big;
      for (int i = 0; i < 20000; ++i)
        big += "rdmabench: note: line " + std::to_string(i) + "\n";  // ~600 KB
      size_t off = 0;
      while (off < big.size()) {
        ssize_t n = write(2, big.data() + off, big.size() - off);
        if (n <= 0) _exit(3);
        off += static_cast<size_t>(n);
      }
      if (write(2, "tail", 4) != 4) _exit(3);
      _exit(0);
    }
    dup2(fileno(capture), 2);  // the folder writes to fd 2: capture it
    folder.start();
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    folder.finish();
    dup2(saved, 2);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  close(saved);
  std::string all;
  char buf[65536];
  std::rewind(capture);
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, capture)) > 0;)
    all.append(buf, n);
  std::fclose(capture);
  size_t lines = 0;
  for (char ch : all)
    lines += ch == '\n';
  EXPECT_EQ(lines, 20001u);
  EXPECT_NE(all.find("rdmabench: note: line 19999\n"), std::string::npos);
  EXPECT_EQ(all.substr(all.size() - 5), "tail\n");
}

}  // namespace
}  // namespace rdmabench::launch
