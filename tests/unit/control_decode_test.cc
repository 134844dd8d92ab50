// Pure decoders of the pair protocol's control messages (engine/control_decode.h): what a peer's
// Addresses, SizeStart and provider_env may hold, and what is refused before anything acts on it.
#include "engine/control_decode.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "rendezvous/protocol.h"

namespace rdmabench::engine::pairing {
namespace {

using nlohmann::json;

std::string regionHex(uint64_t length, size_t keyBytes = 4) {
  transport::RemoteRegion r;
  r.addr = 0x1000;
  r.length = length;
  r.key.assign(keyBytes, 7);
  return rendezvous::toHex(r.encode());
}

TEST(ControlDecode, AddressesRoundTrip) {
  json j = {{"connectors", {"0a0b", "ff"}}, {"regions", {regionHex(4096), regionHex(8192, 0)}}};
  auto conns = decodeAddresses(j, 2, 4096, "peer");
  ASSERT_EQ(conns.size(), 2u);
  EXPECT_EQ(conns[0].address, (std::vector<uint8_t>{0x0a, 0x0b}));
  EXPECT_EQ(conns[1].address, (std::vector<uint8_t>{0xff}));
  EXPECT_EQ(conns[0].region.length, 4096u);
  EXPECT_EQ(conns[0].region.key.size(), 4u);
  EXPECT_TRUE(conns[1].region.key.empty());
}

TEST(ControlDecode, AddressesRefused) {
  json ok = {{"connectors", {"0a0b"}}, {"regions", {regionHex(4096)}}};
  EXPECT_THROW(decodeAddresses(ok, 2, 0, "peer"), ProtocolError);     // count
  EXPECT_THROW(decodeAddresses(ok, 1, 8192, "peer"), ProtocolError);  // region too small
  json j = ok;
  j["connectors"][0] = 12;
  EXPECT_THROW(decodeAddresses(j, 1, 0, "peer"), ProtocolError);  // not a string
  j = ok;
  j["connectors"][0] = "0g";
  EXPECT_THROW(decodeAddresses(j, 1, 0, "peer"), ProtocolError);  // not hex
  j = ok;
  j["regions"][0] = "00";
  EXPECT_THROW(decodeAddresses(j, 1, 0, "peer"), ProtocolError);  // short descriptor
  j = ok;
  j["regions"] = json::object();
  EXPECT_THROW(decodeAddresses(j, 1, 0, "peer"), ProtocolError);  // not an array
  EXPECT_THROW(decodeAddresses(json::array(), 1, 0, "peer"), ProtocolError);
}

TEST(ControlDecode, SizeStart) {
  TestSpec spec;
  spec.sizes = {8, 4096};
  SizeRun r = decodeSizeStart(json{{"bytes", 8}, {"iterations", 100}, {"warmup", 0}}, spec, "w");
  EXPECT_EQ(r.bytes, 8u);
  EXPECT_EQ(r.iterations, 100u);
  EXPECT_THROW(decodeSizeStart(json{{"bytes", 16}, {"iterations", 1}}, spec, "w"), ProtocolError);
  EXPECT_THROW(decodeSizeStart(json{{"bytes", 8}, {"iterations", 0}}, spec, "w"), ProtocolError);
  EXPECT_THROW(decodeSizeStart(json{{"bytes", 8}, {"iterations", 1e30}}, spec, "w"), ProtocolError);
  EXPECT_THROW(decodeSizeStart(json{{"bytes", -8}, {"iterations", 1}}, spec, "w"), ProtocolError);
}

TEST(ControlDecode, WireEnv) {
  EXPECT_TRUE(isWireEnvName("FI_OFI_RXM_BUFFER_SIZE"));
  EXPECT_FALSE(isWireEnvName("FI_OFI_RXM_"));
  EXPECT_FALSE(isWireEnvName("LD_PRELOAD"));
  EXPECT_FALSE(isWireEnvName("FI_SHM_x"));
  json ok = {{"FI_OFI_RXM_BUFFER_SIZE", "16384"}};
  EXPECT_NO_THROW(checkWireEnv(&ok, "env"));
  EXPECT_NO_THROW(checkWireEnv(nullptr, "env"));
  json bad = {{"LD_PRELOAD", "/tmp/x.so"}};
  EXPECT_THROW(checkWireEnv(&bad, "env"), ProtocolError);
  bad = {{"FI_SHM_X", "a\nb"}};
  EXPECT_THROW(checkWireEnv(&bad, "env"), ProtocolError);
  bad = {{"FI_SHM_X", 5}};
  EXPECT_THROW(checkWireEnv(&bad, "env"), ProtocolError);
  bad = {{"FI_SHM_X", std::string(kMaxWireEnvValue + 1, 'a')}};
  EXPECT_THROW(checkWireEnv(&bad, "env"), ProtocolError);
  bad = json::object();
  for (size_t i = 0; i <= kMaxWireEnv; ++i)
    bad["FI_SHM_V" + std::to_string(i)] = "1";
  EXPECT_THROW(checkWireEnv(&bad, "env"), ProtocolError);
}

}  // namespace
}  // namespace rdmabench::engine::pairing
