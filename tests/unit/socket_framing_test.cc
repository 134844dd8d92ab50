#include "transport/socket/framing.h"

#include <gtest/gtest.h>

#include <netinet/in.h>

#include "common/error.h"

namespace rdmabench::transport::socket {
namespace {

TEST(SocketFraming, HeaderRoundTrip) {
  WireHeader h;
  h.op = WireOp::kWrite;
  h.length = kMaxMessageBytes;
  h.offset = 0x0102030405060708ull;
  h.key = 0xfedcba9876543210ull;
  uint8_t buf[kHeaderBytes];
  encodeHeader(h, buf);
  EXPECT_EQ(buf[0], 2);
  EXPECT_EQ(buf[8], 0x08);  // little-endian offset
  auto d = decodeHeader(buf);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->op, WireOp::kWrite);
  EXPECT_EQ(d->length, kMaxMessageBytes);
  EXPECT_EQ(d->offset, h.offset);
  EXPECT_EQ(d->key, h.key);
}

TEST(SocketFraming, HeaderRejectsBadOpPaddingAndLength) {
  uint8_t buf[kHeaderBytes];
  encodeHeader(WireHeader{}, buf);
  ASSERT_TRUE(decodeHeader(buf));
  buf[0] = 0;
  EXPECT_FALSE(decodeHeader(buf));
  buf[0] = 5;
  EXPECT_FALSE(decodeHeader(buf));
  encodeHeader(WireHeader{}, buf);
  buf[2] = 1;
  EXPECT_FALSE(decodeHeader(buf));
  WireHeader big;
  big.length = kMaxMessageBytes + 1;
  encodeHeader(big, buf);
  EXPECT_FALSE(decodeHeader(buf));
}

TEST(SocketFraming, AddressRoundTripIPv4AndIPv6) {
  ListenAddress a;
  auto* in4 = reinterpret_cast<sockaddr_in*>(&a.addr);
  in4->sin_family = AF_INET;
  in4->sin_port = htons(40123);
  in4->sin_addr.s_addr = htonl(0x0a000002);
  a.addrLen = sizeof(sockaddr_in);
  a.token = 0x1122334455667788ull;
  a.deviceId = 0x0102030405060708ull;
  auto bytes = encodeAddress(a);
  ASSERT_EQ(bytes.size(), kAddressBytes);
  EXPECT_EQ(bytes[2], 0x01);  // device id big-endian right after version and family
  ListenAddress b = decodeAddress(bytes);
  EXPECT_EQ(b.token, a.token);
  EXPECT_EQ(b.deviceId, a.deviceId);
  EXPECT_EQ(formatSockaddr(reinterpret_cast<const sockaddr*>(&b.addr)), "10.0.0.2:40123");

  ListenAddress v6;
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&v6.addr);
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons(7);
  in6->sin6_addr = in6addr_loopback;
  v6.addrLen = sizeof(sockaddr_in6);
  ListenAddress c = decodeAddress(encodeAddress(v6));
  EXPECT_EQ(formatSockaddr(reinterpret_cast<const sockaddr*>(&c.addr)), "[::1]:7");
}

TEST(SocketFraming, AddressRejectsMalformed) {
  EXPECT_THROW(decodeAddress({}), TransportError);
  EXPECT_THROW(decodeAddress(std::vector<uint8_t>(kAddressBytes, 0)), TransportError);
  std::vector<uint8_t> v(kAddressBytes, 0);
  v[0] = kAddressVersion;
  v[1] = 4;
  v[11] = 1;  // port
  EXPECT_NO_THROW(decodeAddress(v));
  v[20] = 1;  // IPv4 padding
  EXPECT_THROW(decodeAddress(v), TransportError);
}

TEST(SocketFraming, Hello) {
  auto h = encodeHello(0xabcdef);
  auto t = decodeHello(h.data());
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, 0xabcdefu);
  h[0] = 'X';
  EXPECT_FALSE(decodeHello(h.data()));
}

}  // namespace
}  // namespace rdmabench::transport::socket
