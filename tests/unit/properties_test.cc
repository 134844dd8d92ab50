// transport::CommonProperties: the shared device / connection facts under one typed name each,
// and the A/B table that reads them (verbs' inline size was lost there when it was spelt
// "inline" by the backend and "inline_bytes" by the report).
#include <gtest/gtest.h>

#include <sstream>

#include "common/error.h"
#include "report/ab_report.h"
#include "transport/info_json.h"
#include "transport/transport.h"

namespace rdmabench::transport {
namespace {

TEST(CommonProperties, RoundTripKeepsOnlySetFields) {
  CommonProperties c;
  c.port = 1;
  c.gidIndex = 3;
  c.mtu = 1024;
  c.inlineBytes = 220;
  nlohmann::json j = {{"device", "rxe0"}};
  writeCommonProperties(c, j);
  EXPECT_EQ(j["inline_bytes"], 220);
  EXPECT_EQ(j["gid_index"], 3);
  EXPECT_FALSE(j.contains("inline"));
  EXPECT_FALSE(j.contains("inject_size"));  // unset: absent, not null
  EXPECT_FALSE(j.contains("active_mtu"));
  EXPECT_EQ(j["device"], "rxe0");  // other keys untouched
  CommonProperties r = readCommonProperties(j);
  EXPECT_EQ(r.port, c.port);
  EXPECT_EQ(r.gidIndex, c.gidIndex);
  EXPECT_EQ(r.mtu, c.mtu);
  EXPECT_EQ(r.inlineBytes, c.inlineBytes);
  EXPECT_FALSE(r.injectSize);
  EXPECT_FALSE(r.activeMtu);
  EXPECT_EQ(r.summary(), "port=1 gid_index=3 mtu=1024 inline_bytes=220");
}

TEST(CommonProperties, ReadFromUntrustedValuesNeverThrows) {
  nlohmann::json j = {{"port", -1},
                      {"gid_index", "3"},
                      {"mtu", 1.5},
                      {"active_mtu", 1ull << 40},
                      {"inline_bytes", nullptr},
                      {"inject_size", 64}};
  CommonProperties r = readCommonProperties(j);
  EXPECT_FALSE(r.port);       // negative
  EXPECT_FALSE(r.gidIndex);   // a string
  EXPECT_FALSE(r.mtu);        // not an integer
  EXPECT_FALSE(r.activeMtu);  // beyond uint32
  EXPECT_FALSE(r.inlineBytes);
  EXPECT_EQ(r.injectSize, 64u);
  EXPECT_EQ(readCommonProperties(nlohmann::json::array()).summary(), "");
  EXPECT_EQ(readCommonProperties(nullptr).summary(), "");
}

TEST(CommonProperties, AbTableShowsEveryBackendsInlineSize) {
  // What verbs and socket write through CommonProperties, as the A/B header reads it.
  auto capture = [](const std::string& label, const nlohmann::json& local) {
    report::RunCapture c;
    c.label = label;
    c.info.test = report::Test::kLat;
    c.info.op = "send";
    c.info.local.device = deviceInfoFromJson(local, "test");
    report::Row row;
    row.bytes = 8;
    c.rows.push_back(row);
    return c;
  };
  nlohmann::json verbs = {{"device", "rxe0"}, {"link_layer", "Ethernet"}};
  CommonProperties v;
  v.inlineBytes = 220;
  v.gidIndex = 1;
  writeCommonProperties(v, verbs);
  nlohmann::json socket = {{"interface", "lo"}};
  CommonProperties s;
  s.inlineBytes = 1024;
  writeCommonProperties(s, socket);
  std::ostringstream out;
  report::printAb(out, "table", {capture("verbs", verbs), capture("socket", socket)});
  const std::string text = out.str();
  EXPECT_NE(text.find("# verbs: device=rxe0 link_layer=Ethernet gid_index=1 inline_bytes=220"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# socket: interface=lo inline_bytes=1024"), std::string::npos) << text;
}

// The server's facts arrive as JSON and are decoded once: toJson gives the same object back.
TEST(InfoFromJson, DeviceFactsRoundTrip) {
  const nlohmann::json wire = nlohmann::json::parse(
      R"({"device":"rxe0","link_layer":"Ethernet","gid":"fe80::1","qpn":-1,"fw":null,
          "odp":false,"max_qp":131072,"tx_depth":128,"rx_depth":512,"event_mode":true,
          "mtu":4096,"inline_bytes":220,"protocol":{"summary":"eager <= 16 KiB","eager":16384}})");
  const DeviceInfo d = deviceInfoFromJson(wire, "test accept");
  EXPECT_EQ(d.txDepth, 128u);
  EXPECT_EQ(d.rxDepth, 512u);
  EXPECT_EQ(d.eventMode, true);
  EXPECT_EQ(d.common.mtu, 4096u);
  EXPECT_EQ(d.common.inlineBytes, 220u);
  EXPECT_EQ(toJson(d), wire);
  EXPECT_EQ(toJson(deviceInfoFromJson(nlohmann::json::object(), "x")), nlohmann::json::object());
}

TEST(InfoFromJson, DeviceFactsNeverTrustTheWire) {
  auto error = [](const nlohmann::json& j) {
    try {
      (void)deviceInfoFromJson(j, "test accept");
    } catch (const ProtocolError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error({{"tx_depth", "deep"}}).find("tx_depth"), std::string::npos);
  EXPECT_NE(error({{"mtu", -1}}).find("mtu"), std::string::npos);
  EXPECT_NE(error({{"port", 1ull << 40}}).find("port"), std::string::npos);
  EXPECT_NE(error({{"event_mode", 1}}).find("event_mode"), std::string::npos);
  EXPECT_NE(error({{"device", std::string(kMaxFactTextBytes + 1, 'x')}}).find("device"),
            std::string::npos);
  EXPECT_NE(error({{std::string(kMaxFactNameBytes + 1, 'k'), 1}}).find("longer than"),
            std::string::npos);
  EXPECT_NE(error({{"a", {{"b", {{"c", {{"d", {{"e", 1}}}}}}}}}}).find("nested deeper"),
            std::string::npos);
  EXPECT_NE(error(nlohmann::json::array()).find("test accept"), std::string::npos);
  // Values no backend states (fractions, arrays) are dropped, not echoed.
  const DeviceInfo d = deviceInfoFromJson({{"ratio", 0.5}, {"list", {1, 2}}, {"ok", 1}}, "x");
  EXPECT_EQ(toJson(d), nlohmann::json({{"ok", 1}}));
}

TEST(InfoFromJson, CapsRoundTripAndDefaults) {
  Caps c;
  c.rmaWrite = true;
  c.rmaEmulated = true;
  c.maxMessageBytes = 1ull << 31;
  c.maxSendQueue = 1024;
  c.maxRecvQueue = 512;
  c.inlineBytes = 64;
  EXPECT_EQ(toJson(capsFromJson(toJson(c), "x")), toJson(c));
  const Caps partial = capsFromJson({{"rma_read", true}, {"unknown", "ignored"}}, "x");
  EXPECT_TRUE(partial.rmaRead);
  EXPECT_FALSE(partial.rmaWrite);
  EXPECT_EQ(partial.maxSendQueue, 0u);
  EXPECT_THROW((void)capsFromJson({{"max_send_queue", 1ull << 33}}, "x"), ProtocolError);
  EXPECT_THROW((void)capsFromJson({{"rma_write", "yes"}}, "x"), ProtocolError);
}

// The run header's "local": the device's facts with its connection and caps as objects.
TEST(InfoFromJson, SideInfoNestsConnectionAndCaps) {
  SideInfo side;
  addFact(side.device.facts, "device", "lo");
  EXPECT_EQ(toJson(side), nlohmann::json({{"device", "lo"}}));
  ConnectionInfo conn;
  conn.peer = "127.0.0.1:1";
  conn.peerAddress = true;
  side.connection = conn;
  side.caps = Caps{};
  const nlohmann::json j = toJson(side);
  EXPECT_EQ(j["connection"], nlohmann::json({{"peer_address", "127.0.0.1:1"}}));
  EXPECT_EQ(j["caps"]["rma_write"], false);
  EXPECT_EQ(j["caps"].size(), 7u);
}

}  // namespace
}  // namespace rdmabench::transport
