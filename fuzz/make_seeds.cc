// Writes the encoder-made seeds of the fuzz corpus: valid frames and addresses produced by the
// product's own encoders (encodeHello, TestSpec::toJson, encodeKeyRecord, RemoteRegion::encode,
// socket encodeAddress, QpAddress::encode). Usage: fuzz_make_seeds CORPUS_DIR (fuzz/make_seeds.sh
// runs it into fuzz/corpus/). Compare seeds are the test fixtures, copied by the script.

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/spec.h"
#include "rendezvous/channel.h"
#include "rendezvous/protocol.h"
#include "rendezvous/store_protocol.h"
#include "transport/socket/framing.h"
#include "transport/transport.h"
#ifdef RDMABENCH_HAVE_OFI
#include "common/bytes.h"
#include "transport/ofi/ofi_wire.h"
#endif
#ifdef RDMABENCH_HAVE_VERBS
#include "transport/verbs/verbs_address.h"
#include "transport/verbs/verbs_cm_address.h"
#endif

namespace {

using namespace rdmabench;
using nlohmann::json;
namespace rv = rendezvous;
namespace fs = std::filesystem;

std::string frame(uint16_t type, std::string_view payload) {
  uint8_t h[rv::kFrameHeaderBytes];
  rv::encodeHeader(static_cast<uint32_t>(payload.size()), type, h);
  return std::string(reinterpret_cast<const char*>(h), sizeof h) + std::string(payload);
}
std::string jframe(uint16_t type, const json& j) {
  return frame(type, j.dump());
}
std::string str(const std::vector<uint8_t>& b) {
  return std::string(b.begin(), b.end());
}

void write(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

std::vector<uint8_t> socketAddress(bool v6) {
  transport::socket::ListenAddress a;
  if (v6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.addr);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(18515);
    in6->sin6_addr = in6addr_loopback;
  } else {
    auto* in4 = reinterpret_cast<sockaddr_in*>(&a.addr);
    in4->sin_family = AF_INET;
    in4->sin_port = htons(18515);
    in4->sin_addr.s_addr = htonl(0x0a000001);
  }
  a.deviceId = 0x0123456789abcdefULL;
  a.token = 0xfeedfacecafebeefULL;
  return transport::socket::encodeAddress(a);
}

std::vector<uint8_t> region(uint64_t length, size_t keyBytes) {
  transport::RemoteRegion r;
  r.addr = 0x7f0000001000ULL;
  r.length = length;
  r.key.assign(keyBytes, 0x5a);
  return r.encode();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_make_seeds CORPUS_DIR\n";
    return 2;
  }
  const fs::path root = argv[1];
  const std::string hello = frame(rv::kHello, rv::encodeHello({rv::kProtocolVersion, "0.1.0", ""}));
  const std::string helloToken =
      frame(rv::kHello, rv::encodeHello({rv::kProtocolVersion, "0.1.0", "s3cret-token"}));

  // control: whole client -> server sessions, and the server's answers.
  engine::TestSpec lat;
  lat.sizes = {0, 8, 4096};
  json latReq = lat.toJson();
  latReq["provider_env"] = json{{"FI_OFI_RXM_BUFFER_SIZE", "16384"}};
  json addr1 = {{"connectors", {rv::toHex(socketAddress(false))}},
                {"regions", {rv::toHex(region(lat.bytesPerConnection(), 8))}}};
  write(root / "control", "enc-lat-session",
        hello + jframe(rv::kTestRequest, latReq) + jframe(rv::kAddresses, addr1) +
            jframe(rv::kSizeStart, json{{"bytes", 8}, {"iterations", 1000}, {"warmup", 10}}) +
            frame(rv::kDone, std::string_view()));
  engine::TestSpec bw;
  bw.test = engine::TestKind::kBandwidth;
  bw.transport = "verbs";
  bw.op = engine::Op::kWrite;
  bw.mode = engine::BwMode::kStream;
  bw.queuePairs = 2;
  bw.sizes = {65536, 1 << 20};
  bw.iterations = 100;
  bw.warmup = 5;
  bw.serverDevice.device = "rxe0";
  bw.serverDevice.txDepth = 256;
  bw.serverDevice.mtu = 4096;
  json addr2 = {{"connectors", {rv::toHex(socketAddress(true)), rv::toHex(socketAddress(false))}},
                {"regions",
                 {rv::toHex(region(bw.bytesPerConnection(), 4)),
                  rv::toHex(region(bw.bytesPerConnection(), 32))}}};
  write(root / "control", "enc-bw-session",
        helloToken + jframe(rv::kTestRequest, bw.toJson()) + jframe(rv::kAddresses, addr2) +
            jframe(rv::kSizeStart, json{{"bytes", 65536}, {"iterations", 100}, {"warmup", 5}}));
  write(root / "control", "enc-server-answers",
        frame(rv::kHelloAck, rv::encodeHello({rv::kProtocolVersion, "0.1.0", ""})) +
            jframe(rv::kTestAccept, json{{"host", "node1"},
                                         {"version", "0.1.0"},
                                         {"device", {{"name", "rxe0"}, {"mtu", 4096}}},
                                         {"caps", {{"rma_write", true}}}}) +
            jframe(rv::kSizeReady, json::object()) +
            jframe(rv::kSizeResult, json{{"bytes", 8}, {"mean_us", 1.5}}) +
            frame(rv::kError, std::string_view("timeout: no progress for 10 s")));

  // store: a rank's session and the server's answers.
  json join = {{"run_id", "job42"}, {"rank", 1}, {"world_size", 4}, {"host", "node2"}};
  std::string get = std::string(4, '\0') + rv::encodeKeyRecord("conn/1/0", "");
  get[0] = static_cast<char>(0xe8);
  get[1] = 0x03;  // 1000 ms
  write(root / "store", "enc-rank-session",
        hello + jframe(rv::kStoreJoin, join) +
            frame(rv::kStoreSet, rv::encodeKeyRecord("conn/0/1", "0123456789abcdef")) +
            frame(rv::kStoreGet, get) +
            frame(rv::kStoreAdd, rv::encodeKeyRecord("barrier/0", rv::encodeU64(1))) +
            jframe(rv::kStoreBye, json{{"ok", false}, {"reason", "rank 1: timeout"}}));
  write(root / "store", "enc-server-answers",
        frame(rv::kHelloAck, rv::encodeHello({rv::kProtocolVersion, "0.1.0", ""})) +
            jframe(rv::kStoreJoinAck, json{{"world_size", 4}}) +
            frame(rv::kStoreOk, std::string_view()) + frame(rv::kStoreValue, rv::encodeU64(3)) +
            jframe(rv::kStoreTimeout,
                   json{{"key", "conn/1/0"},
                        {"missing", {{{"rank", 3}, {"host", ""}, {"state", "never arrived"}}}},
                        {"joined", 3}}) +
            jframe(rv::kStoreRankLost,
                   json{{"rank", 2}, {"host", "node3"}, {"reason", "died"}, {"clean", false}}));

  // address: raw (first byte even) and hex (odd) forms of each descriptor.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> addrs = {
      {"region", region(1 << 20, 8)},
      {"region-nokey", region(4096, 0)},
      {"socket4", socketAddress(false)},
      {"socket6", socketAddress(true)},
  };
  {
    std::vector<uint8_t> h(transport::socket::kHeaderBytes);
    transport::socket::encodeHeader({transport::socket::WireOp::kWrite, 4096, 64, 7}, h.data());
    addrs.emplace_back("socket-header", h);
    auto hl = transport::socket::encodeHello(0xfeedfacecafebeefULL);
    addrs.emplace_back("socket-hello", std::vector<uint8_t>(hl.begin(), hl.end()));
  }
#ifdef RDMABENCH_HAVE_OFI
  // The layout OfiDevice::localAddress writes (it needs an open device): a sockaddr_in name.
  for (bool msg : {false, true}) {
    namespace of = transport::ofi;
    const size_t header = msg ? of::kMsgAddressHeader : of::kAddressHeader;
    std::vector<uint8_t> b(header + sizeof(sockaddr_in), 0);
    putLe(b.data(), of::kAddressMagic, 4);
    b[4] = of::kAddressVersion;
    b[5] = msg ? of::kTypeMsg : 0;
    putLe(b.data() + 6, sizeof(sockaddr_in), 2);
    putLe(b.data() + 8, 0x0123456789abcdefULL, 8);
    putLe(b.data() + 16, 2, 4);  // FI_SOCKADDR_IN
    if (msg) putLe(b.data() + 20, 0xfeedfacecafebeefULL, 8);
    sockaddr_in in4{};
    in4.sin_family = AF_INET;
    in4.sin_port = htons(40000);
    in4.sin_addr.s_addr = htonl(0x7f000001);
    std::memcpy(b.data() + header, &in4, sizeof in4);
    addrs.emplace_back(msg ? "ofi-msg" : "ofi-rdm", b);
  }
#endif
#ifdef RDMABENCH_HAVE_VERBS
  {
    transport::verbs::QpAddress q;
    q.linkLayer = 2;
    q.mtu = IBV_MTU_1024;
    q.lid = 0;
    q.qpn = 0x11;
    q.psn = 0x123456;
    q.gidIndex = 1;
    q.gid[10] = q.gid[11] = 0xff;
    q.gid[12] = 10;
    q.gid[15] = 1;
    q.initRdAtom = q.rdAtom = 16;
    addrs.emplace_back("verbs-qp", q.encode());
    transport::verbs::CmAddress cm;
    cm.port = 40000;
    cm.ip = {10, 0, 0, 1};
    cm.token = 0xfeedfacecafebeefULL;
    cm.initRdAtom = cm.rdAtom = 16;
    addrs.emplace_back("verbs-cm4", cm.encode());
    cm.family = 6;
    cm.ip = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    addrs.emplace_back("verbs-cm6", cm.encode());
  }
#endif
  for (const auto& [name, b] : addrs) {
    write(root / "address", "enc-" + name, std::string(1, '\0') + str(b));
    write(root / "address", "enc-" + name + "-hex", std::string(1, '\1') + rv::toHex(b));
  }
  return 0;
}
