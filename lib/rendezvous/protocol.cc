#include "rendezvous/protocol.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/json_read.h"
#include "common/token.h"
#include "common/version.h"

namespace rdmabench::rendezvous {

std::string encodeHello(const Hello& hello) {
  std::string out(reinterpret_cast<const char*>(kMagic), 4);
  out.push_back(static_cast<char>(hello.protocolVersion & 0xff));
  out.push_back(static_cast<char>(hello.protocolVersion >> 8));
  std::string token = hello.token.substr(0, kMaxTokenBytes);
  out.push_back(static_cast<char>(token.size() & 0xff));
  out.push_back(static_cast<char>(token.size() >> 8));
  out += token;
  out += hello.toolVersion.substr(0, 64);
  return out;
}

Hello decodeHello(const Frame& frame, const std::string& peer) {
  const auto& p = frame.payload;
  if (p.size() < 8 || p.size() > 8 + kMaxTokenBytes + 64 || std::memcmp(p.data(), kMagic, 4) != 0)
    throw ProtocolError(
        fmt::format("peer {} is not an rdmabench peer (bad hello: {} bytes, wrong magic)",
                    escapeForLog(peer), p.size()));
  Hello h;
  h.protocolVersion = static_cast<uint16_t>(p[4] | (p[5] << 8));
  size_t tokenBytes = static_cast<size_t>(p[6] | (p[7] << 8));
  if (tokenBytes > kMaxTokenBytes || 8 + tokenBytes > p.size() || p.size() - 8 - tokenBytes > 64)
    throw ProtocolError(
        fmt::format("peer {} sent a malformed hello ({} bytes, token length {}, limit {})",
                    escapeForLog(peer), p.size(), tokenBytes, kMaxTokenBytes));
  h.token.assign(p.begin() + 8, p.begin() + 8 + static_cast<std::ptrdiff_t>(tokenBytes));
  h.toolVersion.assign(p.begin() + 8 + static_cast<std::ptrdiff_t>(tokenBytes), p.end());
  for (char& c : h.toolVersion)
    if (c < 0x20 || c > 0x7e) c = '?';
  return h;
}

namespace {

// Waits for the first 8 bytes of the server's hello answer (peeked, not consumed) and checks
// that they can start one: a kHelloAck or kError frame header (length < 64 KiB, reserved bytes
// zero). Another service on the port (iperf3, ssh, a web server) is named as soon as its first
// bytes contradict that; one that sends nothing is named when `deadline` passes. An EOF is left
// to Channel::receive ("closed the control connection").
void checkHelloAnswerStart(Channel& channel, const Deadline& deadline) {
  uint8_t b[64];
  const int64_t startNs = nowNs();
  for (;;) {
    throwIfInterrupted("the hello answer");  // Ctrl-C at once, not after the 5 s deadline
    pollfd p{channel.fd(), POLLIN, 0};
    const int wait = deadline.remainingMs();
    if (wait == 0)
      throw TimeoutError(fmt::format(
          "server {} sent nothing within {:.1f} s of the hello: is it an rdmabench server? "
          "(another service may listen on that port, e.g. iperf3; `rdmabench server` listens on "
          "18515 unless -p says otherwise)",
          channel.peerName(), static_cast<double>(nowNs() - startNs) / 1e9));
    const int rc = ::poll(&p, 1, wait < 0 || wait > 100 ? 100 : wait);
    if (rc < 0 && errno != EINTR) throw SystemError("poll (hello answer)", errno);
    if (rc <= 0) continue;
    const ssize_t n = ::recv(channel.fd(), b, sizeof b, MSG_PEEK | MSG_DONTWAIT);
    if (n <= 0) return;  // EOF or an error: receive() names it
    const size_t got = static_cast<size_t>(n);
    const uint16_t type = got >= 6 ? static_cast<uint16_t>(b[4] | (b[5] << 8)) : 0;
    const bool ours = !(got >= 4 && (b[2] != 0 || b[3] != 0)) &&
                      !(got >= 6 && type != kHelloAck && type != kError) &&
                      !(got >= 8 && (b[6] != 0 || b[7] != 0));
    if (!ours)
      throw ProtocolError(fmt::format(
          "server {} is not an rdmabench server: it answered the hello with \"{}\" ({}{} bytes), "
          "not an rdmabench frame (another service on that port? `rdmabench server` listens on "
          "18515 unless -p says otherwise)",
          channel.peerName(),
          escapeForLog(std::string_view(reinterpret_cast<const char*>(b), got), 40),
          got == sizeof b ? "at least " : "", got));
    if (got >= 8) return;
  }
}

}  // namespace

Hello clientHandshake(Channel& channel, const Deadline& deadline, const std::string& token) {
  channel.send(kHello, encodeHello({kProtocolVersion, version::release(), token}), deadline);
  checkHelloAnswerStart(channel, deadline);
  Frame f = channel.receive(deadline, "the hello answer");
  if (f.type == kError)
    throw PeerError(
        fmt::format("server {} refused: {}", channel.peerName(), escapeForLog(f.text(), 400)));
  if (f.type != kHelloAck)
    throw ProtocolError(fmt::format("server {} answered the hello with message type {}",
                                    channel.peerName(), f.type));
  Hello h = decodeHello(f, channel.peerName());
  if (h.protocolVersion != kProtocolVersion)
    throw ProtocolError(fmt::format(
        "server {} speaks protocol version {} (rdmabench {}), this client speaks {} (rdmabench {})",
        channel.peerName(), h.protocolVersion, h.toolVersion, kProtocolVersion,
        version::release()));
  return h;
}

namespace {

// Answers a hello the server refuses: one kError frame (best effort), then closes the channel as
// the protocol says (protocol.h), so a caller's own error report (engine::tellPeer, which sends on
// an open channel only) cannot repeat it.
void refuseHello(Channel& channel, std::string_view text, const Deadline& deadline) {
  try {
    channel.send(kError, text, deadline);
  } catch (const Error&) {
  }
  channel.close();
}

}  // namespace

Hello serverHandshake(Channel& channel, const Deadline& deadline, const std::string& token) {
  Frame f = channel.receive(deadline, "the hello");
  Hello h;
  try {
    if (f.type != kHello)
      throw ProtocolError(fmt::format("peer {} sent message type {} instead of a hello",
                                      channel.peerName(), f.type));
    h = decodeHello(f, channel.peerName());
  } catch (const ProtocolError& e) {
    refuseHello(channel, e.what(), deadline);
    throw;
  }
  if (h.protocolVersion != kProtocolVersion) {
    std::string msg = fmt::format(
        "protocol version mismatch: client {} speaks {} (rdmabench {}), server speaks {} "
        "(rdmabench {})",
        channel.peerName(), h.protocolVersion, h.toolVersion, kProtocolVersion, version::release());
    refuseHello(channel, msg, deadline);
    throw ProtocolError(msg);
  }
  if (std::string refusal = tokenRefusal(token, h.token); !refusal.empty()) {
    refuseHello(channel, refusal, deadline);
    throw ProtocolError(fmt::format("client {}: {}", channel.peerName(), refusal));
  }
  channel.send(kHelloAck, encodeHello({kProtocolVersion, version::release()}), deadline);
  return h;
}

std::string errorFrameText(const std::exception& e) {
  if (dynamic_cast<const TimeoutError*>(&e)) return std::string(kTimeoutTag) + e.what();
  if (dynamic_cast<const UsageError*>(&e)) return std::string(kUsageTag) + e.what();
  return e.what();
}

void throwPeerReport(const std::string& peer, std::string_view text, std::string_view here) {
  auto tagged = [&](std::string_view tag) {
    if (text.substr(0, tag.size()) != tag) return false;
    text.remove_prefix(tag.size());
    return true;
  };
  bool timeout = tagged(kTimeoutTag);
  bool usage = !timeout && tagged(kUsageTag);
  std::string theirs = escapeForLog(text, 400);
  std::string message = fmt::format("{} reported: {}", peer, theirs);
  // Both sides failing alike (a loopback server without a device: its text is this side's plus
  // " (during connect)") say it once; the raw texts are compared, not the escaped, cut one.
  // So do both sides refusing the same option value ("--size 8388609: above the server ...
  // limit" and "--size 8388609: above the local ... limit" on one rxe device).
  auto optionOf = [](std::string_view t) {
    const size_t colon = t.find(": ");
    return t.substr(0, t.size() > 0 && t[0] == '-' && colon != std::string_view::npos ? colon : 0);
  };
  const std::string_view option = optionOf(text);
  const bool sameOption = !option.empty() && option == optionOf(here);
  if (!here.empty() && !sameOption && here.find(text) == std::string_view::npos &&
      text.find(here) == std::string_view::npos)
    message += fmt::format(" (here: {})", here);
  if (timeout) throw TimeoutError(message);
  if (usage) throw UsageError(message);
  throw PeerError(message);
}

std::string toHex(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    s.push_back(digits[b >> 4]);
    s.push_back(digits[b & 15]);
  }
  return s;
}

std::vector<uint8_t> fromHex(const std::string& hex, size_t maxBytes) {
  if (hex.size() % 2 != 0 || hex.size() / 2 > maxBytes)
    throw ProtocolError(
        fmt::format("malformed hex field ({} characters, limit {} bytes)", hex.size(), maxBytes));
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw ProtocolError("malformed hex field (non-hex character)");
  };
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<uint8_t>(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
  return out;
}

Frame expectFrame(Channel& channel, uint16_t type, const Deadline& deadline,
                  std::string_view phase) {
  Frame f = channel.receive(deadline, phase);
  if (f.type == kError) throwPeerReport("peer " + channel.peerName(), f.text());
  if (f.type != type)
    throw ProtocolError(fmt::format("peer {} sent message type {} while waiting for {} (type {})",
                                    channel.peerName(), f.type, phase, type));
  return f;
}

nlohmann::json expectJson(Channel& channel, uint16_t type, const Deadline& deadline,
                          std::string_view phase) {
  Frame f = expectFrame(channel, type, deadline, phase);
  return parseFrameJson(f, fmt::format("{} from {}", phase, channel.peerName()));
}

nlohmann::json parseFrameJson(const Frame& frame, std::string_view what) {
  auto j = parseUntrustedJson(
      std::string_view(reinterpret_cast<const char*>(frame.payload.data()), frame.payload.size()),
      what);
  if (!j.is_object()) throw ProtocolError(fmt::format("{}: not a JSON object", what));
  return j;
}

}  // namespace rdmabench::rendezvous
