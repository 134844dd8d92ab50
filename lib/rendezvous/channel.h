#pragma once
// Framed, deadline-bounded TCP control channel (the pair's control connection and, later, the
// rendezvous store). docs/wire-protocol.md is the normative description.
//
// Frame = 8-byte header {u32 length, u16 type, u16 reserved} (little-endian) + `length` payload
// bytes. A frame longer than the channel's limit (default 1 MiB) is rejected before anything is
// allocated. Every blocking call takes a Deadline and throws TimeoutError naming the peer and
// the phase, ProtocolError when the peer closed the connection or broke framing.
// Thread-safety: a Channel is used by one thread at a time.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/clock.h"

namespace rdmabench::rendezvous {

inline constexpr uint32_t kDefaultMaxFrameBytes = 1u << 20;
inline constexpr size_t kFrameHeaderBytes = 8;

struct Frame {
  uint16_t type = 0;
  std::vector<uint8_t> payload;
  std::string text() const { return std::string(payload.begin(), payload.end()); }
};

// Header encode/decode (pure; unit-tested). decodeHeader throws ProtocolError when the length
// exceeds `maxFrameBytes`.
void encodeHeader(uint32_t length, uint16_t type, uint8_t out[kFrameHeaderBytes]);
void decodeHeader(const uint8_t in[kFrameHeaderBytes], uint32_t maxFrameBytes, uint32_t& length,
                  uint16_t& type);

class Channel {
 public:
  // Takes ownership of a connected socket. `peerName` appears in every error message.
  Channel(int fd, std::string peerName, uint32_t maxFrameBytes = kDefaultMaxFrameBytes);
  Channel(Channel&& other) noexcept;
  Channel& operator=(Channel&& other) noexcept;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel();

  // Resolves `host` (name or address) and connects to host:port, retrying refused connections
  // until the deadline when `retryRefused` (a peer that is still starting). Errors: UsageError
  // for an unknown host, TimeoutError, SystemError ("connect to node1:18515: Connection refused").
  static Channel connect(const std::string& host, uint16_t port, const Deadline& deadline,
                         bool retryRefused = false);

  void send(uint16_t type, const void* data, size_t bytes, const Deadline& deadline);
  void send(uint16_t type, std::string_view text, const Deadline& deadline) {
    send(type, text.data(), text.size(), deadline);
  }
  void sendJson(uint16_t type, const nlohmann::json& value, const Deadline& deadline);

  // Waits for one frame. `phase` names what we wait for ("test description", "size 4096").
  Frame receive(const Deadline& deadline, std::string_view phase);
  // True when a frame (or EOF) is ready to read without blocking.
  bool readable();
  // The type of the next frame without consuming it, or -1 when no complete header is buffered
  // yet. Never blocks. Throws ProtocolError when the peer closed the connection.
  int peekType();

  int fd() const { return fd_; }
  const std::string& peerName() const { return peerName_; }
  // Numeric local/peer address of the socket ("10.0.0.1"), for transport listen addresses.
  std::string localAddress() const;
  std::string peerAddress() const;
  void close();

 private:
  void writeAll(const uint8_t* data, size_t bytes, const Deadline& deadline);
  void readAll(uint8_t* data, size_t bytes, const Deadline& deadline, std::string_view phase,
               bool atFrameStart);

  int fd_ = -1;
  std::string peerName_;
  uint32_t maxFrameBytes_;
};

// A listening TCP socket. Port 0 = ephemeral (see port()).
class Listener {
 public:
  Listener(const std::string& bindAddress, uint16_t port, int backlog = 64);
  Listener(Listener&& other) noexcept;
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  ~Listener();

  // Waits for a connection; TimeoutError when the deadline passes first. Also returns early
  // with InterruptedError on Ctrl-C.
  Channel accept(const Deadline& deadline, uint32_t maxFrameBytes = kDefaultMaxFrameBytes);
  uint16_t port() const { return port_; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

// "host:port" / "[v6]:port" formatting for messages.
std::string formatHostPort(const std::string& host, uint16_t port);

}  // namespace rdmabench::rendezvous
