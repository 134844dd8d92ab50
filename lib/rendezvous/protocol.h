#pragma once
// Message types and the versioned hello of the client/server control protocol
// (docs/wire-protocol.md). Payloads of typed messages are JSON objects (bounded by the frame
// limit) except kHello/kHelloAck (binary, below) and kError (UTF-8 text).

#include <cstdint>
#include <string>

#include "rendezvous/channel.h"

namespace rdmabench::rendezvous {

// Bumped on any incompatible change of frames, message order or JSON fields.
inline constexpr uint16_t kProtocolVersion = 1;
// "RDMB": first four payload bytes of a hello.
inline constexpr uint8_t kMagic[4] = {'R', 'D', 'M', 'B'};

enum MessageType : uint16_t {
  kHello = 1,         // client -> server: magic, version, tool version
  kHelloAck = 2,      // server -> client: same layout
  kError = 3,         // either way: one-line message, then the sender closes
  kTestRequest = 10,  // client -> server: engine::TestSpec as JSON
  kTestAccept = 11,   // server -> client: {"host", "device": properties, "caps"}
  kAddresses = 12,    // both ways: {"connectors": [hex...], "region": hex}
  kSizeStart = 20,    // client -> server: {"index", "bytes", "iterations", "warmup"}
  kSizeReady = 21,    // server -> client: {} (receives posted)
  kSizeResult = 22,   // server -> client: the server's own measurement of that size
  kDone = 30,         // client -> server: test complete, session ends
};

// Hello payload: 4 magic bytes, u16 protocol version (LE), u16 reserved = 0, then the tool
// version as text (<= 64 bytes). Total <= 72 bytes.
struct Hello {
  uint16_t protocolVersion = kProtocolVersion;
  std::string toolVersion;
};

std::string encodeHello(const Hello& hello);
// Throws ProtocolError: not an rdmabench peer (bad magic/size), naming `peer`.
Hello decodeHello(const Frame& frame, const std::string& peer);

// Client side: sends kHello, waits for kHelloAck, checks the version (ProtocolError on
// mismatch or on a kError answer, carrying the server's message).
Hello clientHandshake(Channel& channel, const Deadline& deadline);
// Server side: waits for kHello, answers kHelloAck, or kError + ProtocolError on a version
// mismatch / garbage.
Hello serverHandshake(Channel& channel, const Deadline& deadline);

// Hex encoding for opaque bytes inside JSON payloads.
std::string toHex(const std::vector<uint8_t>& bytes);
// Throws ProtocolError on odd length / non-hex characters / more than `maxBytes`.
std::vector<uint8_t> fromHex(const std::string& hex, size_t maxBytes);

// Receives a frame and checks its type. A kError frame becomes ProtocolError carrying the
// peer's message ("server 10.0.0.1:18515 reported: ..."); another type is a ProtocolError too.
Frame expectFrame(Channel& channel, uint16_t type, const Deadline& deadline,
                  std::string_view phase);
// expectFrame + JSON parse (ProtocolError on malformed JSON or a non-object).
nlohmann::json expectJson(Channel& channel, uint16_t type, const Deadline& deadline,
                          std::string_view phase);

}  // namespace rdmabench::rendezvous
