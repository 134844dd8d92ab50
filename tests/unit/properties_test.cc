// transport::CommonProperties: the shared device / connection facts under one typed name each,
// and the A/B table that reads them (verbs' inline size was lost there when it was spelt
// "inline" by the backend and "inline_bytes" by the report).
#include <gtest/gtest.h>

#include <sstream>

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
    c.info.local = local;
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

}  // namespace
}  // namespace rdmabench::transport
