// ResultOutput (#12): a report that cannot be written is an error, never a silent exit 0.
#include <gtest/gtest.h>

#include <unistd.h>

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
