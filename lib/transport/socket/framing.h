#pragma once
// Wire format of the socket backend (see docs/transport.md, "Socket backend"): the connect
// hello, the opaque connector address bytes and the fixed per-message header. All integers are
// little-endian except the port and IP address, which stay in network order as in sockaddr.
// Pure functions on byte arrays; thread-safe.

#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rdmabench::transport::socket {

// Message kinds on the stream.
enum class WireOp : uint8_t {
  kMsg = 1,       // two-sided send; payload matches the next posted receive
  kWrite = 2,     // emulated RDMA write; payload lands in region `key` at `offset`
  kReadReq = 3,   // emulated RDMA read request for `length` bytes of region `key` at `offset`
  kReadResp = 4,  // payload answering the oldest outstanding read request
};

// Fixed header in front of every message: op(1) pad(3) length(4) offset(8) key(8).
inline constexpr size_t kHeaderBytes = 24;
// Largest payload (and read length) one header may announce: 1 GiB. Keeps byte counts within
// Completion::bytes (uint32) and bounds what a malformed header can ask for.
inline constexpr uint32_t kMaxMessageBytes = 1u << 30;

struct WireHeader {
  WireOp op = WireOp::kMsg;
  uint32_t length = 0;  // payload bytes (kReadReq: bytes requested, no payload follows)
  uint64_t offset = 0;  // kWrite/kReadReq: byte offset in the target region; else 0
  uint64_t key = 0;     // kWrite/kReadReq: target region key; else 0
};

// Writes exactly kHeaderBytes to `out`.
void encodeHeader(const WireHeader& h, uint8_t* out);
// Reads kHeaderBytes from `in`. Returns std::nullopt for an unknown op, nonzero padding or
// a length above kMaxMessageBytes (the caller treats that as a protocol violation).
std::optional<WireHeader> decodeHeader(const uint8_t* in);

// Connector address bytes: version(1)=1, family(1) 4|6, device id(8, big-endian), port(2,
// network order), ip(16, network order; IPv4 uses the first 4 bytes, rest zero), token(8, LE)
// = 36 bytes. The device id comes first so that comparing two address byte strings orders
// devices consistently (see SocketConnector: deadlock freedom).
inline constexpr size_t kAddressBytes = 36;
inline constexpr uint8_t kAddressVersion = 1;

struct ListenAddress {
  sockaddr_storage addr{};  // AF_INET or AF_INET6 with port
  socklen_t addrLen = 0;
  uint64_t deviceId = 0;  // random per Device; decides the connect role first
  uint64_t token = 0;     // random secret the connecting side must echo in its hello
};

std::vector<uint8_t> encodeAddress(const ListenAddress& a);
// Throws TransportError naming the problem (size, version, family, zero port) for bytes that
// did not come from encodeAddress().
ListenAddress decodeAddress(const std::vector<uint8_t>& bytes);

// Hello the connecting (active) side sends first on a new connection:
// magic(4) "RBSK", version(2)=1, pad(2)=0, token(8, LE) of the accepting side = 16 bytes.
inline constexpr size_t kHelloBytes = 16;
std::array<uint8_t, kHelloBytes> encodeHello(uint64_t token);
// Returns the token, or std::nullopt for a bad magic/version/padding.
std::optional<uint64_t> decodeHello(const uint8_t* in);

// "1.2.3.4:5" or "[::1]:5" (port included when nonzero).
std::string formatSockaddr(const sockaddr* sa);

}  // namespace rdmabench::transport::socket
