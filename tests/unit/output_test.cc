// ResultOutput (#12): a report that cannot be written is an error, never a silent exit 0.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "common/error.h"
#include "common/output.h"

namespace rdmabench {
namespace {

TEST(ResultOutput, WritesAFile) {
  char path[] = "/tmp/rdmabench-output.XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    ResultOutput out(path);
    out.stream() << "hello " << 42 << "\n" << std::string(200000, 'x');
    EXPECT_NO_THROW(out.finish());
  }
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "hello 42");
  unlink(path);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

size_t entries(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++n;
  }
  return n;
}

// Issue 22 item 1: the destination is replaced atomically. Until finish() it keeps its previous
// content (a run that fails or dies midway never leaves it empty or truncated); a run that
// failed before writing anything leaves it alone; one that wrote its report (with the error)
// commits it. No temporary file is left behind.
TEST(ResultOutput, ReplacesTheFileAtomicallyAndKeepsItOnFailure) {
  char dir[] = "/tmp/rb-atomic.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/keep.json";
  std::ofstream(path) << "good result";
  chmod(path.c_str(), 0640);
  {
    ResultOutput out(path);
    out.stream() << std::string(300000, 'x');  // past the buffer: bytes reach the disk
    EXPECT_EQ(slurp(path), "good result") << "the destination changed before finish()";
  }  // destroyed without finish(): discarded
  EXPECT_EQ(slurp(path), "good result");
  EXPECT_EQ(entries(dir), 1u) << "temporary file left behind";
  {
    ResultOutput out(path);
    EXPECT_FALSE(out.wantsErrorDocument(false));
    out.finishAfterFailure(false);  // nothing written: a failed connect
  }
  EXPECT_EQ(slurp(path), "good result");
  EXPECT_EQ(entries(dir), 1u);
  {
    // Issue 35 items 1-2: a header and an error but no measured row (a usage error of an N-rank
    // command, a run killed during its first size) is a failure before measuring.
    ResultOutput out(path);
    out.stream() << "{\"run\":{},\"rows\":[],\"error\":\"x\"}\n";
    out.finishAfterFailure(false);
  }
  EXPECT_EQ(slurp(path), "good result");
  EXPECT_EQ(entries(dir), 1u);
  {
    ResultOutput out(path);
    EXPECT_TRUE(out.wantsErrorDocument(true));
    out.stream() << "{\"rows\":[{}],\"error\":\"x\"}\n";
    out.finishAfterFailure(true);  // a measured row and the error
  }
  EXPECT_EQ(slurp(path), "{\"rows\":[{}],\"error\":\"x\"}\n");
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u) << "the file's mode was not kept";
  {
    ResultOutput out(path);
    out.stream() << "new";
    out.finish();
  }
  EXPECT_EQ(slurp(path), "new");
  EXPECT_EQ(entries(dir), 1u);
  std::filesystem::remove_all(dir);
}

// A symlink is written through: the link stays and its target gets the report; a dangling one is
// refused (docs/cli.md says why).
TEST(ResultOutput, WritesThroughASymlinkAndRefusesADanglingOne) {
  char dir[] = "/tmp/rb-symlink.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string target = std::string(dir) + "/run42.json", link = std::string(dir) + "/latest";
  std::ofstream(target) << "old";
  ASSERT_EQ(symlink("run42.json", link.c_str()), 0);
  {
    ResultOutput out(link);
    out.stream() << "new";
    out.finish();
  }
  struct stat st {};
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link was replaced by a file";
  EXPECT_EQ(slurp(target), "new");
  const std::string dangling = std::string(dir) + "/dangling";
  ASSERT_EQ(symlink("missing.json", dangling.c_str()), 0);
  EXPECT_THROW(ResultOutput out(dangling), UsageError);
  EXPECT_THROW(checkWritable(dangling, "--output"), UsageError);
  // Not a regular file: written in place, never renamed over.
  {
    ResultOutput out("/dev/null");
    out.stream() << "x";
    EXPECT_NO_THROW(out.finish());
  }
  struct stat devnull {};
  ASSERT_EQ(stat("/dev/null", &devnull), 0);
  EXPECT_TRUE(S_ISCHR(devnull.st_mode));
  std::filesystem::remove_all(dir);
}

TEST(ResultOutput, FullDiskIsAnError) {
  // Small output: the error shows only at the final flush.
  ResultOutput out("/dev/full");
  out.stream() << "one row\n";
  try {
    out.finish();
    FAIL() << "no error for /dev/full";
  } catch (const SystemError& e) {
    EXPECT_EQ(std::string(e.what()), "writing the report to /dev/full: No space left on device");
    EXPECT_EQ(e.code(), ENOSPC);
  }
  // Large output: the error happens during the writes and is kept until finish().
  ResultOutput big("/dev/full");
  big.stream() << std::string(1 << 20, 'x');
  EXPECT_THROW(big.finish(), SystemError);
}

TEST(ResultOutput, UnopenableNamesTheOption) {
  try {
    ResultOutput out("/nonexistent-dir/x.json");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--output /nonexistent-dir/x.json: cannot open for writing: No such file or "
              "directory");
  }
}

// checkWritable: the same words as ResultOutput, but nothing is created or truncated.
TEST(CheckWritable, RefusesWhatResultOutputWouldAndTouchesNothing) {
  EXPECT_NO_THROW(checkWritable("", "--output"));
  EXPECT_NO_THROW(checkWritable("-", "--output"));
  char dir[] = "/tmp/rb-checkwritable.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fresh = std::string(dir) + "/new.json", kept = std::string(dir) + "/old.json";
  EXPECT_NO_THROW(checkWritable(fresh, "--output"));
  EXPECT_NE(access(fresh.c_str(), F_OK), 0) << "a path that did not exist was created";
  std::ofstream(kept) << "keep me";
  EXPECT_NO_THROW(checkWritable(kept, "--plot"));
  std::ifstream in(kept);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "keep me") << "an existing file was truncated";
  try {
    checkWritable("/nonexistent-dir/x.json", "--plot");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--plot /nonexistent-dir/x.json: cannot open for writing: No such file or directory");
  }
  EXPECT_THROW(checkWritable(dir, "--output"), UsageError);  // a directory: EISDIR
  unlink(kept.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace rdmabench
