// `rdmabench connect` (lib/connect): the command line's refusals word for word, and the steps'
// known answers over real sockets on loopback: four steps in cmtime's order, each timed once per
// connection, every connection carrying its first message.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "connect/connect.h"
#include "connect/options.h"

namespace rdmabench {
namespace {

std::string usage(const std::vector<std::string>& args) {
  try {
    connect::parseConnectCommand(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ConnectOptions, DefaultsAndRefusals) {
  const connect::ConnectCommand c = connect::parseConnectCommand({"-t", "socket"});
  EXPECT_EQ(c.params.connections, 100u);
  EXPECT_EQ(c.params.timeoutMs, 30000);
  EXPECT_EQ(c.params.device.localHost, "127.0.0.1");
  EXPECT_EQ(
      connect::parseConnectCommand({"-t", "ofi", "--ep", "msg", "-n", "7", "-o", "x.json"}).format,
      "json");
  EXPECT_EQ(usage({"-t", "socket", "-n", "0"}).rfind("-n/--connections 0: ", 0), 0u);
  EXPECT_EQ(usage({"-t", "socket", "-n", "65537"}).rfind("-n/--connections 65537: ", 0), 0u);
  EXPECT_EQ(usage({"-t", "ofi", "--ep", "dgram"}), "--ep dgram: unknown (valid: rdm, msg)");
  EXPECT_EQ(usage({"-t", "verbs", "-R"}),
            "-R/--rdma-cm: needs --bind ADDR, the IP address of the RDMA device's netdev "
            "(rdma_cm resolves the device from it)");
  EXPECT_EQ(usage({"-t", "socket", "-d", "mlx5_0"}),
            "-d/--device mlx5_0: only for -t verbs or -t ofi; -t socket does not use it");
  EXPECT_EQ(usage({"-t", "socket", "--bind", ""}), "--bind '': empty address");
}

TEST(ConnectMeasure, SocketLoopbackStepsInOrderOncePerConnection) {
  connect::ConnectParams p;
  p.transport = "socket";
  p.device.localHost = p.device.peerHost = "127.0.0.1";
  p.connections = 12;
  p.timeoutMs = 20000;
  const connect::ConnectResult r = connect::measureConnections(p);
  ASSERT_EQ(r.steps.size(), 4u);
  const char* names[] = {"create", "connect", "first_message", "destroy"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.steps[i].name, names[i]);
    EXPECT_EQ(r.steps[i].perConnection.count, 12u) << names[i];
    EXPECT_GE(r.steps[i].totalMs * 1e3, r.steps[i].perConnection.max) << names[i];
  }
  EXPECT_EQ(r.connections, 12u);
  EXPECT_GT(r.setupPerSec(), 0);
}

TEST(ConnectMeasure, AFailureOnOneSideIsNamedAndNothingHangs) {
  connect::ConnectParams p;
  p.transport = "ofi";
  p.device.provider = "no_such_provider";
  p.connections = 3;
  p.timeoutMs = 2000;
  try {
    connect::measureConnections(p);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_provider"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rdmabench
