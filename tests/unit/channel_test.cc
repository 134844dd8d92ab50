// Control-channel framing, hello and hex fields: encoding and the rejection of bad input.
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "common/error.h"
#include "rendezvous/channel.h"
#include "rendezvous/protocol.h"

namespace rdmabench::rendezvous {
namespace {

std::pair<Channel, Channel> socketPair() {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  return {Channel(fds[0], "left", 1024), Channel(fds[1], "right", 1024)};
}

TEST(FrameHeader, RoundTrip) {
  uint8_t h[kFrameHeaderBytes];
  encodeHeader(0x01020304, 0x0a0b, h);
  uint32_t len = 0;
  uint16_t type = 0;
  decodeHeader(h, 0x7fffffff, len, type);
  EXPECT_EQ(len, 0x01020304u);
  EXPECT_EQ(type, 0x0a0b);
}

TEST(FrameHeader, RejectsOversizedAndReservedBits) {
  uint8_t h[kFrameHeaderBytes];
  encodeHeader(2048, 1, h);
  uint32_t len = 0;
  uint16_t type = 0;
  EXPECT_THROW(decodeHeader(h, 1024, len, type), ProtocolError);
  encodeHeader(16, 1, h);
  h[7] = 1;
  EXPECT_THROW(decodeHeader(h, 1024, len, type), ProtocolError);
}

TEST(Channel, SendReceiveFrames) {
  auto [a, b] = socketPair();
  a.send(kTestRequest, std::string_view("{\"x\":1}"), Deadline(1000));
  a.send(kDone, std::string_view(), Deadline(1000));
  Frame f = b.receive(Deadline(1000), "test");
  EXPECT_EQ(f.type, kTestRequest);
  EXPECT_EQ(f.text(), "{\"x\":1}");
  f = b.receive(Deadline(1000), "test");
  EXPECT_EQ(f.type, kDone);
  EXPECT_TRUE(f.payload.empty());
}

TEST(Channel, OversizedFrameRejectedBeforeAllocation) {
  auto [a, b] = socketPair();
  uint8_t h[kFrameHeaderBytes];
  encodeHeader(1u << 30, kTestRequest, h);
  ASSERT_EQ(::write(a.fd(), h, sizeof h), static_cast<ssize_t>(sizeof h));
  try {
    b.receive(Deadline(1000), "test description");
    FAIL() << "accepted a 1 GiB frame";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the limit"), std::string::npos) << e.what();
  }
}

TEST(Channel, TimeoutNamesPeerAndPhase) {
  auto [a, b] = socketPair();
  try {
    b.receive(Deadline(100), "size 4096");
    FAIL();
  } catch (const TimeoutError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("size 4096"), std::string::npos) << m;
    EXPECT_NE(m.find("right"), std::string::npos) << m;
  }
}

TEST(Channel, PeerCloseIsProtocolError) {
  auto [a, b] = socketPair();
  a.close();
  EXPECT_THROW(b.receive(Deadline(1000), "hello"), ProtocolError);
}

TEST(Channel, TruncatedFrameIsProtocolError) {
  auto [a, b] = socketPair();
  uint8_t h[kFrameHeaderBytes];
  encodeHeader(100, kTestRequest, h);
  ASSERT_EQ(::write(a.fd(), h, sizeof h), static_cast<ssize_t>(sizeof h));
  ASSERT_EQ(::write(a.fd(), "abc", 3), 3);
  a.close();
  try {
    b.receive(Deadline(1000), "test description");
    FAIL();
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("mid-frame"), std::string::npos) << e.what();
  }
}

TEST(Hello, RoundTripAndVersionCheck) {
  Frame f;
  f.type = kHello;
  std::string enc = encodeHello({kProtocolVersion, "9.9.9"});
  f.payload.assign(enc.begin(), enc.end());
  Hello h = decodeHello(f, "peer");
  EXPECT_EQ(h.protocolVersion, kProtocolVersion);
  EXPECT_EQ(h.toolVersion, "9.9.9");
  f.payload[0] = 'X';
  EXPECT_THROW(decodeHello(f, "peer"), ProtocolError);
  f.payload.assign(200, 'R');
  EXPECT_THROW(decodeHello(f, "peer"), ProtocolError);
}

TEST(Hello, ServerRejectsWrongVersionAndTellsClient) {
  auto [client, server] = socketPair();
  std::string enc = encodeHello({static_cast<uint16_t>(kProtocolVersion + 1), "future"});
  client.send(kHello, std::string_view(enc), Deadline(1000));
  EXPECT_THROW(serverHandshake(server, Deadline(1000)), ProtocolError);
  Frame answer = client.receive(Deadline(1000), "answer");
  EXPECT_EQ(answer.type, kError);
  EXPECT_NE(answer.text().find("version"), std::string::npos) << answer.text();
}

TEST(Hex, RoundTripAndRejects) {
  std::vector<uint8_t> bytes = {0, 1, 0xab, 0xff};
  EXPECT_EQ(toHex(bytes), "0001abff");
  EXPECT_EQ(fromHex("0001abff", 16), bytes);
  EXPECT_THROW(fromHex("abc", 16), ProtocolError);
  EXPECT_THROW(fromHex("zz", 16), ProtocolError);
  EXPECT_THROW(fromHex("00112233", 2), ProtocolError);
}

}  // namespace
}  // namespace rdmabench::rendezvous

namespace rdmabench::rendezvous {
namespace {

TEST(Channel, PeekTypeLeavesTheFrameQueued) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  Channel a(fds[0], "left"), b(fds[1], "right");
  EXPECT_EQ(b.peekType(), -1);
  a.send(kSizeResult, std::string_view("{}"), Deadline(1000));
  EXPECT_EQ(b.peekType(), kSizeResult);
  EXPECT_EQ(b.peekType(), kSizeResult);
  EXPECT_EQ(b.receive(Deadline(1000), "result").type, kSizeResult);
  a.close();
  EXPECT_THROW(b.peekType(), ProtocolError);
}

}  // namespace
}  // namespace rdmabench::rendezvous
