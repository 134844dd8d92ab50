// ResultOutput (#12): a report that cannot be written is an error, never a silent exit 0.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
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

}  // namespace
}  // namespace rdmabench
