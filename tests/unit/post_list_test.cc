// The batch contract (transport.h: prepare / postBatch) and `bw --post-list` on the null
// transport (transport/null_device.h): counts and payload checks, no timing.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "common/error.h"
#include "engine/bandwidth.h"
#include "engine/buffers.h"
#include "engine/spec.h"
#include "transport/null_device.h"

namespace rdmabench {
namespace {

struct NullLink {
  std::unique_ptr<transport::Device> device = transport::openNullDevice({});
  std::unique_ptr<transport::Endpoint> endpoint = transport::openNullEndpoint(*device);
  engine::AlignedBuffer buffer{engine::BufferLayout::forMaxMessage(4096).total()};
  std::unique_ptr<transport::MemoryRegion> region =
      device->registerMemory(buffer.data(), buffer.size());
  std::vector<engine::Link> links;
  NullLink() {
    engine::Link l;
    l.endpoint = endpoint.get();
    l.region = region.get();
    l.remote = region->exportRegion();
    l.layout = engine::BufferLayout::forMaxMessage(4096);
    links.push_back(l);
  }
};

TEST(PostList, PrepareRefusesRangesOutsideTheRegion) {
  NullLink n;
  transport::RemoteRegion remote = n.region->exportRegion();
  EXPECT_THROW(n.endpoint->prepare(transport::OpKind::kSend, *n.region, n.buffer.size(), 1),
               UsageError);
  EXPECT_THROW(
      n.endpoint->prepare(transport::OpKind::kWrite, *n.region, 0, 8, &remote, remote.length - 4),
      UsageError);
  EXPECT_THROW(n.endpoint->prepare(transport::OpKind::kRead, *n.region, 0, 8), UsageError);
}

TEST(PostList, BatchPostsCompleteInOrderOnlyWhenSignaled) {
  NullLink n;
  transport::RemoteRegion remote = n.region->exportRegion();
  auto op = n.endpoint->prepare(transport::OpKind::kWrite, *n.region, 0, 8, &remote, 64);
  std::vector<transport::BatchPost> posts;
  for (uint64_t i = 0; i < 10; ++i)
    posts.push_back({i, i % 3 == 2});
  EXPECT_EQ(n.endpoint->postBatch(op, posts.data(), 10), 10u);
  transport::Completion c[16];
  ASSERT_EQ(n.device->poll(c, 16), 3u);
  EXPECT_EQ(c[0].context, 2u);
  EXPECT_EQ(c[1].context, 5u);
  EXPECT_EQ(c[2].context, 8u);
}

engine::BandwidthResult runNull(engine::DataOp op, engine::BwMode mode, uint32_t postList,
                                bool check, uint32_t cqMod = 16, uint32_t depth = 64) {
  NullLink n;
  engine::Progress progress(*n.device, 10'000, {}, "self", transport::ProgressMode::kBusyPoll);
  engine::BandwidthParams p;
  p.op = op;
  p.mode = mode;
  p.bytes = 64;
  p.iterations = mode == engine::BwMode::kStream ? 1000 : 10;
  p.warmup = mode == engine::BwMode::kStream ? 100 : 2;
  p.window = depth;
  p.cqModeration = cqMod;
  p.postList = postList;
  p.bidirectional = true;  // the self connection is its own peer
  p.check = check;
  return engine::runBandwidth(*n.device, n.links, progress, p);
}

TEST(PostList, StreamAndWindowCountEveryMessageWithAnyPostList) {
  for (engine::DataOp op : {engine::DataOp::kWrite, engine::DataOp::kSend})
    for (uint32_t list : {1u, 7u, 32u, 64u}) {
      // (--check's verification pass needs a second side: socket/ofi system tests cover it.)
      engine::BandwidthResult s = runNull(op, engine::BwMode::kStream, list, false);
      EXPECT_EQ(s.messages, 1000u) << list;
      EXPECT_EQ(s.messagesBothWays, 2000u) << list;
      engine::BandwidthResult w = runNull(op, engine::BwMode::kWindow, list, false);
      EXPECT_EQ(w.messages, 640u) << list;
    }
}

// --cq-mod 100 with a depth of 128: batches that leave less than a batch of room must still
// end in a signaled post, or the stream waits forever for a completion never asked for.
TEST(PostList, CqModerationThatDoesNotDivideTheRoomCannotDeadlock) {
  for (uint32_t list : {1u, 17u, 31u, 32u, 64u, 100u, 128u}) {
    engine::BandwidthResult s =
        runNull(engine::DataOp::kWrite, engine::BwMode::kStream, list, false, 100, 128);
    EXPECT_EQ(s.messages, 1000u) << list;
  }
}

TEST(PostList, OutOfRangeIsAUsageErrorNamingTheLimit) {
  EXPECT_THROW(runNull(engine::DataOp::kWrite, engine::BwMode::kStream, 65, false), UsageError);
  engine::TestSpec s;
  s.test = engine::TestKind::kBandwidth;
  s.sizes = {8};
  s.mode = engine::BwMode::kStream;
  s.postList = 129;
  try {
    s.validate();
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--post-list 129: out of range 1..128 (the --tx-depth)");
  }
}

TEST(PostList, TravelsOnTheWireOnlyWhenNotOne) {
  engine::TestSpec s;
  s.test = engine::TestKind::kBandwidth;
  s.sizes = {8};
  s.mode = engine::BwMode::kStream;
  EXPECT_FALSE(s.toJson().contains("post_list"));
  s.postList = 32;
  EXPECT_EQ(engine::TestSpec::fromJson(s.toJson()).postList, 32u);
}

}  // namespace
}  // namespace rdmabench
