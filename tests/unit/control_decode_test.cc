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

// The server's allowlist and bounds for adopted libfabric variables (issue 24, item 1).
TEST(ControlDecode, BoundWireEnv) {
  const WireEnvBudget budget{1ull << 30, 2ull << 20};
  EXPECT_NO_THROW(boundWireEnv(nullptr, budget, "env"));
  json ok = {{"FI_OFI_RXM_EAGER_LIMIT", "131072"},
             {"FI_OFI_RXM_USE_RNDV_WRITE", "1"},
             {"FI_OFI_RXM_DEF_WAIT_OBJ", "pollfd"},
             {"FI_SHM_DISABLE_CMA", "yes"}};
  EXPECT_NO_THROW(boundWireEnv(&ok, budget, "env"));
  // libfabric's defaults are always allowed, even when they alone exceed a small --max-bytes.
  json defaults = {{"FI_OFI_RXM_BUFFER_SIZE", "16384"}, {"FI_OFI_RXM_RX_SIZE", "2048"}};
  EXPECT_EQ(rxmPoolBytes(defaults), 16384u * 4352u);
  EXPECT_NO_THROW(boundWireEnv(&defaults, WireEnvBudget{1 << 20, 0}, "env"));
  // The attack: 1 MiB x 2048 receive buffers (4.1 GB), refused under 1 GiB.
  json attack = {{"FI_OFI_RXM_BUFFER_SIZE", "1048576"}, {"FI_OFI_RXM_RX_SIZE", "2048"}};
  EXPECT_EQ(rxmPoolBytes(attack), 1048576ull * 4352u);
  try {
    boundWireEnv(&attack, budget, "provider_env from 10.0.0.2:4000");
    ADD_FAILURE() << "not refused";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("provider_env from 10.0.0.2:4000"), std::string::npos) << m;
    EXPECT_NE(m.find("FI_OFI_RXM_BUFFER_SIZE=1048576"), std::string::npos) << m;
    EXPECT_NE(m.find("4563402752 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("--max-bytes 1073741824"), std::string::npos) << m;
  }
  // The test's own buffers count too.
  json mid = {{"FI_OFI_RXM_BUFFER_SIZE", "131072"}};  // 570 MB of pools
  EXPECT_NO_THROW(boundWireEnv(&mid, budget, "env"));
  EXPECT_THROW(boundWireEnv(&mid, WireEnvBudget{1ull << 30, 600ull << 20}, "env"), UsageError);
  // Unknown names, non-decimal numbers, out-of-range values, bad words: refused.
  for (json bad :
       {json{{"FI_OFI_RXM_NOT_A_KNOB", "1"}}, json{{"FI_OFI_RXM_RX_SIZE", "0x800"}},
        json{{"FI_OFI_RXM_RX_SIZE", "-1"}}, json{{"FI_OFI_RXM_RX_SIZE", "1e9"}},
        json{{"FI_OFI_RXM_RX_SIZE", "65537"}}, json{{"FI_OFI_RXM_RX_SIZE", ""}},
        json{{"FI_OFI_RXM_BUFFER_SIZE", "99999999999999999999999"}},
        json{{"FI_OFI_RXM_USE_SRX", "maybe"}}, json{{"FI_OFI_RXM_DEF_WAIT_OBJ", "yield"}},
        json{{"FI_OFI_RXD_MAX_PEERS", "100000"}}})
    EXPECT_THROW(boundWireEnv(&bad, budget, "env"), UsageError) << bad.dump();
}

}  // namespace
}  // namespace rdmabench::engine::pairing
