// Socket integration tests of a connection that fails on one side: the first error completion
// is the operation that failed (a failed send is not reported as a flushed receive), and the
// engine's error names that operation and the peer.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <sys/socket.h>

#include "common/error.h"
#include "engine/progress.h"
#include "socket_test_util.h"
#include "transport/socket/framing.h"

namespace rdmabench::transport {
namespace {

using testing::Harness;

// The descriptor of `ep`'s connection in this process (`other` is its peer's endpoint). Peer
// names are the listening addresses: `ep`'s socket either connected to `ep`'s peer or was
// accepted on the address `other` names. -1 when none matches.
int socketOf(const Endpoint& ep, const Endpoint& other) {
  for (int fd = 0; fd < 4096; ++fd) {
    sockaddr_storage l{}, p{};
    socklen_t ll = sizeof(l), pl = sizeof(p);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&l), &ll) != 0) continue;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&p), &pl) != 0) continue;
    if (socket::formatSockaddr(reinterpret_cast<sockaddr*>(&l)) == other.peerName() ||
        socket::formatSockaddr(reinterpret_cast<sockaddr*>(&p)) == ep.peerName())
      return fd;
  }
  return -1;
}

struct BrokenSender {
  Harness h;
  std::vector<uint8_t> s = std::vector<uint8_t>(4096), r = std::vector<uint8_t>(4096);
  std::unique_ptr<MemoryRegion> ms = h.a->registerMemory(s.data(), s.size());
  std::unique_ptr<MemoryRegion> mr = h.a->registerMemory(r.data(), r.size());
  std::unique_ptr<MemoryRegion> target = h.b->registerMemory(r.data(), r.size());

  // A receive is outstanding on A (never answered) when A's next send fails: the socket can no
  // longer send (shutdown(SHUT_WR): EPIPE), but it still receives.
  BrokenSender() {
    EXPECT_EQ(h.ea->postRecv(*mr, 0, 64, 99), PostResult::kOk);
    const int fd = socketOf(*h.ea, *h.eb);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(shutdown(fd, SHUT_WR), 0);
  }
  void post(OpKind op) {
    PostResult res = op == OpKind::kWrite
                         ? h.ea->postWrite(*ms, 0, 64, target->exportRegion(), 0, 7, true)
                         : h.ea->postSend(*ms, 0, 64, 7, true);
    ASSERT_EQ(res, PostResult::kOk);
  }
};

TEST(SocketFailure, FailedSendComesFirstAndTheReceiveIsFlushed) {
  BrokenSender b;
  b.post(OpKind::kSend);
  std::vector<Completion> got;
  Deadline d(5000);
  while (got.size() < 2 && !d.expired()) {
    Completion buf[8];
    size_t n = b.h.a->poll(buf, 8);
    got.insert(got.end(), buf, buf + n);
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].op, OpKind::kSend);
  EXPECT_EQ(got[0].context, 7u);
  EXPECT_EQ(got[0].status, CompletionStatus::kError);
  const std::string text = b.h.a->errorText(got[0]);
  EXPECT_NE(text.find("sendmsg (send) to peer " + b.h.ea->peerName()), std::string::npos) << text;
  EXPECT_EQ(got[1].op, OpKind::kRecv);
  EXPECT_EQ(got[1].context, 99u);
  EXPECT_EQ(got[1].status, CompletionStatus::kFlushed);
}

TEST(SocketFailure, EngineErrorNamesTheFailedOperationAndThePeer) {
  for (OpKind op : {OpKind::kSend, OpKind::kWrite}) {
    BrokenSender b;
    b.post(op);
    engine::Progress p(*b.h.a, 5000, {}, b.h.ea->peerName(), transport::ProgressMode::kBusyPoll);
    p.setStage("size 64");
    std::string what;
    try {
      for (;;)
        p.pollOnce([](const Completion&) {});
    } catch (const TransportError& e) {
      what = e.what();
    }
    const std::string want = std::string(toString(op)) + " completion failed during size 64";
    EXPECT_EQ(what.rfind(want, 0), 0u) << what;
    EXPECT_NE(what.find("with peer " + b.h.ea->peerName()), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace rdmabench::transport
