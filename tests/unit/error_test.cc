// common/error: the exit status of each error class (docs/cli.md's table).
#include <gtest/gtest.h>

#include <cerrno>
#include <stdexcept>

#include "common/error.h"

namespace rdmabench {
namespace {

TEST(ExitCode, OneStatusPerErrorClass) {
  EXPECT_EQ(exitCodeFor(UsageError("--window 0: out of range")), 2);
  EXPECT_EQ(exitCodeFor(TimeoutError("no progress for 5.0 s")), 3);
  EXPECT_EQ(exitCodeFor(InterruptedError("interrupted (SIGINT)")), 4);
  // Failures: transport, system call, protocol, the peer's own error, anything else.
  EXPECT_EQ(exitCodeFor(TransportError("retry counter exceeded")), 1);
  EXPECT_EQ(exitCodeFor(SystemError("connect", ECONNREFUSED)), 1);
  EXPECT_EQ(exitCodeFor(ProtocolError("malformed frame")), 1);
  EXPECT_EQ(exitCodeFor(PeerError("server reported: busy")), 1);
  EXPECT_EQ(exitCodeFor(std::runtime_error("other")), 1);
}

}  // namespace
}  // namespace rdmabench
