// The typed transport facts (transport/info.h) and their one JSON conversion (info_json.h), and
// the per-device store of failed completions' texts (transport/error_texts.h).
#include <gtest/gtest.h>

#include <string>

#include "transport/error_texts.h"
#include "transport/info_json.h"
#include "transport/transport.h"

namespace rdmabench::transport {
namespace {

TEST(TransportInfo, EmptyInfoIsAnEmptyObject) {
  // Test doubles return {}: the run header must keep writing `{}` for them.
  EXPECT_EQ(toJson(DeviceInfo{}).dump(), "{}");
  EXPECT_EQ(toJson(ConnectionInfo{}).dump(), "{}");
}

TEST(TransportInfo, TypedFieldsAndFactsWriteTheBackendsNames) {
  DeviceInfo d;
  d.txDepth = 128;
  d.eventMode = false;
  d.common.inlineBytes = 220;
  Facts protocol;
  addFact(protocol, "sar_limit_bytes", nullptr);
  addFact(protocol, "eager_limit_bytes", uint64_t{16384});
  addFact(d.facts, "device", "rxe0");
  addFact(d.facts, "max_qp_wr", -1);
  addFact(d.facts, "protocol", std::move(protocol));
  EXPECT_EQ(toJson(d).dump(),
            R"({"device":"rxe0","event_mode":false,"inline_bytes":220,"max_qp_wr":-1,)"
            R"("protocol":{"eager_limit_bytes":16384,"sar_limit_bytes":null},"tx_depth":128})");
  ConnectionInfo socket;
  socket.peer = "127.0.0.1:4000";
  socket.peerAddress = true;
  EXPECT_EQ(toJson(socket).dump(), R"({"peer_address":"127.0.0.1:4000"})");
  ConnectionInfo verbs;
  verbs.peer = "QPN 0x12 @ fe80::1";
  verbs.common.mtu = 1024;
  EXPECT_EQ(toJson(verbs).dump(), R"({"mtu":1024,"peer":"QPN 0x12 @ fe80::1"})");
}

TEST(ErrorTexts, KeepsTheLastTextsAndNamesEvictedOnes) {
  ErrorTexts t;
  const uint32_t first = t.keep("first failure");
  EXPECT_NE(first, 0u);
  EXPECT_EQ(t.text(first), "first failure");
  uint32_t last = first;
  for (uint32_t i = 0; i < ErrorTexts::kKeptErrors; ++i)
    last = t.keep("failure " + std::to_string(i));
  EXPECT_EQ(t.text(last), "failure " + std::to_string(ErrorTexts::kKeptErrors - 1));
  EXPECT_NE(t.text(first).find("no longer kept"), std::string::npos) << t.text(first);
  EXPECT_NE(t.text(0).find("no longer kept"), std::string::npos);
  EXPECT_NE(t.text(last + 1).find("no longer kept"), std::string::npos);
}

TEST(ErrorTexts, DeviceWithoutTextsNamesStatusAndCode) {
  Completion c;
  c.op = OpKind::kRecv;
  c.status = CompletionStatus::kTruncated;
  c.code = 90;
  EXPECT_EQ(genericErrorText(c), "recv completion truncated (status 90)");
  EXPECT_TRUE(Completion{}.ok());
  static_assert(sizeof(Completion) <= 24, "Completion stays plain and small");
}

// socket's device_id only orders who connects: a server session's (accept-only) is 0 by design
// and says so rather than printing sixteen zeros next to the client's random id.
TEST(TransportInfo, SocketServerSessionDeviceIdSaysWhyItIsZero) {
  DeviceOptions o;
  o.localHost = "127.0.0.1";
  o.acceptOnly = true;
  const nlohmann::json server = toJson(openDevice("socket", o)->info());
  EXPECT_EQ(server["device_id"], "0 (server session: accepts only)");
  o.acceptOnly = false;
  const nlohmann::json client = toJson(openDevice("socket", o)->info());
  EXPECT_EQ(client["device_id"].get<std::string>().size(), 16u);  // random, hex
}

}  // namespace
}  // namespace rdmabench::transport
