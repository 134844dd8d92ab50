// fuzz_control: the pair protocol's control frames as a server session and a client read them
// (docs/wire-protocol.md): frame headers, the hello, the test description (TestSpec::fromJson,
// its provider_env), Addresses frames (hex connector addresses + RemoteRegion descriptors),
// SizeStart, the server's answers (TestAccept's device facts and caps decoded as the client
// does: transport::deviceInfoFromJson / capsFromJson) and Error frames. Input: a stream of frames
// (8-byte header + payload), as on the socket.

#include <optional>
#include <string>

#include "common/error.h"
#include "common/json_read.h"
#include "engine/control_decode.h"
#include "engine/spec.h"
#include "fuzz_util.h"
#include "rendezvous/protocol.h"
#include "transport/info_json.h"

namespace {

using namespace rdmabench;
using nlohmann::json;

void frame(const rendezvous::Frame& f, std::optional<engine::TestSpec>& spec) {
  namespace rv = rendezvous;
  switch (f.type) {
    case rv::kHello:
    case rv::kHelloAck:
      rv::decodeHello(f, "fuzz-peer:1");
      return;
    case rv::kError:
      rv::throwPeerReport("fuzz-peer:1", f.text());
    case rv::kTestRequest: {
      json j = rv::parseFrameJson(f, "test description");
      engine::TestSpec s = engine::TestSpec::fromJson(j);
      const json* env = jsonObject(j, "provider_env", "test description");
      engine::pairing::checkWireEnv(env, "provider_env from fuzz-peer:1");
      uint64_t need = s.bytesPerConnection() * s.queuePairs;
      // The server's allowlist and --max-bytes bound (default 1 GiB).
      engine::pairing::boundWireEnv(env, {1ull << 30, need}, "provider_env from fuzz-peer:1");
      for (uint64_t b : s.sizes)
        need += s.iterationsFor(b) + s.warmupFor(b);
      (void)need;
      (void)s.toJson().dump();
      spec = s;
      return;
    }
    case rv::kAddresses: {
      json j = rv::parseFrameJson(f, "connection addresses");
      const size_t expected = spec ? spec->queuePairs : 1;
      const uint64_t minBytes = spec ? spec->bytesPerConnection() : 0;
      engine::pairing::decodeAddresses(j, expected, minBytes, "fuzz-peer:1");
      return;
    }
    case rv::kSizeStart: {
      json j = rv::parseFrameJson(f, "size start");
      if (spec) engine::pairing::decodeSizeStart(j, *spec, "size start");
      return;
    }
    case rv::kTestAccept: {
      // The client's reading of the server's answer (pair.cc sessionWithSide).
      json j = rv::parseFrameJson(f, "test accept");
      (void)escapeForLog(jsonString(j, "host", "test accept", {}, 256), 256);
      transport::SideInfo remote;  // decoded once, as pair.cc runInfo does
      if (const json* dev = jsonObject(j, "device", "test accept"))
        remote.device = transport::deviceInfoFromJson(*dev, "test accept");
      if (const json* caps = jsonObject(j, "caps", "test accept"))
        remote.caps = transport::capsFromJson(*caps, "test accept");
      (void)transport::toJson(remote).dump();
      return;
    }
    default:
      rv::parseFrameJson(f, "frame");
      return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<engine::TestSpec> spec;
  fuzz::forEachFrame(data, size, [&](const rendezvous::Frame& f) {
    try {
      frame(f, spec);
    } catch (const Error&) {
      // The documented outcome of a malformed frame: the session ends with this message.
    }
  });
  return 0;
}
