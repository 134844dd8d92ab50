// transport/socket/listener: the one listening socket a SocketDevice shares between its
// connectors. A connection is handed to the connector whose token its hello carries, kept for a
// registered connector that is not accepting yet, refused for an unknown token, and the socket
// closes with its last connector.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "transport/socket/framing.h"
#include "transport/socket/listener.h"
#include "transport/socket/net_util.h"

namespace rdmabench::transport::socket {
namespace {

SockAddr loopback(uint16_t port) {
  SockAddr a = resolveHost("127.0.0.1", "test");
  reinterpret_cast<sockaddr_in*>(&a.ss)->sin_port = htons(port);
  return a;
}

// A client connection to `port` that sends the hello for `token` and then one byte `tag`, so
// the accepted side can tell which connection it got. -1 when connect() fails.
int dialWithHello(uint16_t port, uint64_t token, char tag) {
  SockAddr a = loopback(port);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, a.sa(), a.len) != 0) {
    ::close(fd);
    return -1;
  }
  auto hello = encodeHello(token);
  EXPECT_EQ(::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(hello.size()));
  EXPECT_EQ(::send(fd, &tag, 1, MSG_NOSIGNAL), 1);
  return fd;
}

char firstByte(const Fd& fd) {
  char c = 0;
  Deadline dl(2000);
  while (!dl.expired()) {
    if (::recv(fd.get(), &c, 1, 0) == 1) return c;
    usleep(1000);
  }
  return 0;
}

TEST(ListenerHub, HandsEachConnectionToItsTokenAndKeepsTheOthers) {
  ListenerHub hub(loopback(0));
  const uint16_t port = hub.add(11);
  ASSERT_NE(port, 0);
  EXPECT_EQ(hub.add(22), port) << "one listener for every connector of the device";
  EXPECT_EQ(hub.add(22), 0) << "a token registered twice";
  // The connection for 22 arrives first, while 11 accepts: it is kept for 22.
  Fd c22(dialWithHello(port, 22, 'b'));
  Fd c11(dialWithHello(port, 11, 'a'));
  ASSERT_TRUE(c22 && c11);
  int rejected = 0;
  std::string last;
  Fd a = hub.accept(11, Deadline(2000), rejected, last);
  ASSERT_TRUE(a);
  EXPECT_EQ(firstByte(a), 'a') << "the hello is consumed, the data stream follows";
  Fd b = hub.accept(22, Deadline(0), rejected, last);  // kept: no wait needed
  ASSERT_TRUE(b);
  EXPECT_EQ(firstByte(b), 'b');
  EXPECT_EQ(rejected, 0) << last;
  hub.remove(11);
  hub.remove(22);
}

TEST(ListenerHub, RefusesUnknownTokensAndMalformedHellos) {
  ListenerHub hub(loopback(0));
  const uint16_t port = hub.add(7);
  Fd stranger(dialWithHello(port, 99, 'x'));
  ASSERT_TRUE(stranger);
  int rejected = 0;
  std::string last;
  EXPECT_FALSE(hub.accept(7, Deadline(300), rejected, last)) << "no connection for token 7";
  EXPECT_EQ(rejected, 1);
  EXPECT_EQ(last, "wrong token");
  // A short hello followed by a close.
  {
    SockAddr a = loopback(port);
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    ASSERT_EQ(::connect(fd.get(), a.sa(), a.len), 0);
    ASSERT_EQ(::send(fd.get(), "abc", 3, MSG_NOSIGNAL), 3);
  }
  EXPECT_FALSE(hub.accept(7, Deadline(300), rejected, last));
  EXPECT_EQ(rejected, 2);
  EXPECT_EQ(last, "closed before hello");
  hub.remove(7);
}

TEST(ListenerHub, ClosesWithItsLastConnector) {
  ListenerHub hub(loopback(0));
  const uint16_t port = hub.add(1);
  hub.add(2);
  hub.remove(1);
  Fd still(dialWithHello(port, 2, 'k'));
  EXPECT_TRUE(still) << "open while connector 2 is registered";
  hub.remove(2);
  Fd refused(dialWithHello(port, 2, 'k'));
  EXPECT_FALSE(refused) << "the port is closed once no connector is registered";
  EXPECT_NE(hub.add(3), 0) << "a new connector opens a new listener";
  hub.remove(3);
}

}  // namespace
}  // namespace rdmabench::transport::socket
