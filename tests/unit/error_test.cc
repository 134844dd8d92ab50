// common/error: the exit status of each error class (docs/cli.md's table), and how a peer's
// error keeps its class across the wire (rendezvous/protocol: tagged kError texts).
#include <gtest/gtest.h>

#include <cerrno>
#include <stdexcept>

#include "common/error.h"
#include "rendezvous/protocol.h"

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

// What the receiver of `sent`'s kError frame raises.
template <typename E>
int statusAcrossTheWire(const E& sent, std::string* message, std::string_view here = {}) {
  try {
    rendezvous::throwPeerReport("server 10.0.0.1:18515", rendezvous::errorFrameText(sent), here);
  } catch (const std::exception& e) {
    *message = e.what();
    return exitCodeFor(e);
  }
  return -1;
}

TEST(ExitCode, PeerErrorKeepsItsClassAcrossTheWire) {
  std::string m;
  // A server that refused the request as a bad value: the client exits 2 as if it had checked.
  EXPECT_EQ(statusAcrossTheWire(UsageError("--provider: 'nosuch' offers no endpoint"), &m), 2);
  EXPECT_EQ(m, "server 10.0.0.1:18515 reported: --provider: 'nosuch' offers no endpoint");
  EXPECT_EQ(statusAcrossTheWire(TimeoutError("no progress for 5.0 s"), &m), 3);
  EXPECT_EQ(m, "server 10.0.0.1:18515 reported: no progress for 5.0 s");
  EXPECT_EQ(statusAcrossTheWire(TransportError("retry counter exceeded"), &m, "local: eof"), 1);
  EXPECT_EQ(m, "server 10.0.0.1:18515 reported: retry counter exceeded (here: local: eof)");
  // The local error already carries the server's text: said once.
  EXPECT_EQ(statusAcrossTheWire(TransportError("x failed"), &m, "peer said x failed"), 1);
  EXPECT_EQ(m, "server 10.0.0.1:18515 reported: x failed");
  // Issue 35 item 13: the same failure on both sides is said once, whichever text is longer
  // (a loopback server without an RDMA device adds " (during connect)"), also past the 400
  // characters the peer's text is cut to; different failures keep both.
  const std::string noDevice =
      "transport verbs: no RDMA devices: ibv_get_device_list: Function "
      "not implemented (this kernel has no RDMA support)";
  statusAcrossTheWire(Error(noDevice + " (during connect)"), &m, noDevice);
  EXPECT_EQ(m, "server 10.0.0.1:18515 reported: " + noDevice + " (during connect)");
  statusAcrossTheWire(Error(noDevice), &m, noDevice + " (during connect)");
  EXPECT_EQ(m.find("(here:"), std::string::npos) << m;
  const std::string longText = "fi_enable on ofi verbs;ofi_rxm: " + std::string(500, 'x');
  statusAcrossTheWire(Error(longText), &m, longText);
  EXPECT_EQ(m.find("(here:"), std::string::npos) << m;
  statusAcrossTheWire(Error("x failed"), &m, "y failed");
  EXPECT_EQ(m, "server 10.0.0.1:18515 reported: x failed (here: y failed)");
  // Both sides refusing the same option value on one rxe device (seen in the VM): said once.
  statusAcrossTheWire(
      UsageError("--size 8388609: above the server verbs device rxe0 limit of 8388608 bytes"), &m,
      "--size 8388609: above the local verbs device rxe0 limit of 8388608 bytes");
  EXPECT_EQ(m.find("(here:"), std::string::npos) << m;
  statusAcrossTheWire(UsageError("--size 9: too big"), &m, "--mtu 4096: above the active MTU");
  EXPECT_NE(m.find("(here: --mtu 4096"), std::string::npos) << m;
  // An untagged text that merely starts like a tag word is not a tag.
  try {
    rendezvous::throwPeerReport("p", "usage:x");
  } catch (const std::exception& e) {
    EXPECT_EQ(exitCodeFor(e), 1);
  }
}

}  // namespace
}  // namespace rdmabench
