#pragma once
// Message types and the versioned hello of the client/server control protocol
// (docs/wire-protocol.md). Payloads of typed messages are JSON objects (bounded by the frame
// limit) except kHello/kHelloAck (binary, below) and kError (UTF-8 text).

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "rendezvous/channel.h"

namespace rdmabench::rendezvous {

// Bumped on any incompatible change of frames, message order or JSON fields.
inline constexpr uint16_t kProtocolVersion = 2;  // 2: token in the hello
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

// Hello payload: 4 magic bytes, u16 protocol version (LE), u16 token length (LE, <= 256; 0 =
// none; this was "reserved = 0" in version 1), the token bytes, then the tool version as text
// (<= 64 bytes). Total <= 328 bytes.
struct Hello {
  uint16_t protocolVersion = kProtocolVersion;
  std::string toolVersion;
  std::string token;  // access token (common/token.h); empty = none
};

std::string encodeHello(const Hello& hello);
// Throws ProtocolError: not an rdmabench peer (bad magic/size), naming `peer`.
Hello decodeHello(const Frame& frame, const std::string& peer);

// Client side: sends kHello carrying `token`, waits for kHelloAck, checks the version
// (ProtocolError on mismatch or on a kError answer, carrying the server's message).
Hello clientHandshake(Channel& channel, const Deadline& deadline, const std::string& token = {});
// Server side: waits for kHello, answers kHelloAck, or kError + ProtocolError on a version
// mismatch / garbage / a token that does not match `token` (non-empty = required; compared in
// constant time, common/token.h). After that one kError it closes `channel` (fd() < 0).
Hello serverHandshake(Channel& channel, const Deadline& deadline, const std::string& token = {});

// kError payloads whose sender failed on a timeout start with this tag, so the receiver raises
// TimeoutError too and both sides of a test exit with the same status (3) for the same cause.
inline constexpr std::string_view kTimeoutTag = "timeout: ";
// Likewise for a request the sender refused as a bad value (UsageError: an unknown --provider,
// an option out of the device's range): the receiver raises UsageError (exit status 2), as if
// it had checked the value itself.
inline constexpr std::string_view kUsageTag = "usage: ";
// The kError text for a local failure: its message, tagged when it is a TimeoutError or a
// UsageError.
std::string errorFrameText(const std::exception& e);
// Throws what a kError frame from `peer` with `text` means: TimeoutError for a tagged timeout,
// UsageError for a tagged usage error, else PeerError. The message is "<peer> reported: <text
// without its tag, escaped>", followed by " (here: <here>)" when `here` (the receiver's own
// error, if any) is non-empty and neither text contains the other (the same failure on both
// sides is said once).
[[noreturn]] void throwPeerReport(const std::string& peer, std::string_view text,
                                  std::string_view here = {});

// Hex encoding for opaque bytes inside JSON payloads.
std::string toHex(const std::vector<uint8_t>& bytes);
// Throws ProtocolError on odd length / non-hex characters / more than `maxBytes`.
std::vector<uint8_t> fromHex(const std::string& hex, size_t maxBytes);

// Receives a frame and checks its type. A kError frame becomes ProtocolError carrying the
// peer's message ("server 10.0.0.1:18515 reported: ..."); another type is a ProtocolError too.
Frame expectFrame(Channel& channel, uint16_t type, const Deadline& deadline,
                  std::string_view phase);
// The payload of a JSON frame, parsed through parseUntrustedJson (depth limit
// kJsonMaxDepth); ProtocolError naming `what` on malformed JSON, nesting too deep or a
// non-object. Callable on any byte buffer (fuzz targets).
nlohmann::json parseFrameJson(const Frame& frame, std::string_view what);
// expectFrame + parseFrameJson (ProtocolError on malformed JSON or a non-object).
nlohmann::json expectJson(Channel& channel, uint16_t type, const Deadline& deadline,
                          std::string_view phase);

}  // namespace rdmabench::rendezvous
