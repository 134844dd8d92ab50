// Every allreduce algorithm, the barrier and the ring ping-pong, over every usable transport,
// for N in {1, 2, 3, 4, 5, 7, 8, 16} ranks forked on this host (launch::runLocal, the code
// behind `--np`), with data checks: a child exits non-zero when any rank's result is wrong.
// TinySendQueue: --tx-depth 1 on the socket transport, so that posts return kRetry and the
// communicator makes progress from inside a post (the ring ping-pong posts from inside its
// completion handler: completions seen there must reach the handler, not be dropped).
#include <gtest/gtest.h>

#include <sstream>

#include "collective/bench.h"
#include "common/error.h"
#include "launch/launch.h"
#include "report/report.h"
#include "transport/transport.h"

namespace rdmabench::collective {
namespace {

struct Case {
  std::string transport;
  std::string test;
  std::string algo;
  int ranks;
  uint32_t txDepth = 0;     // 0 = the transport's default
  uint64_t ringBytes = 64;  // ring ping-pong message size
};

std::string nameOf(const Case& c) {
  std::string n = c.transport + "_" + c.test + "_" + c.algo + "_" + std::to_string(c.ranks);
  if (c.txDepth) n += "_tx" + std::to_string(c.txDepth) + "_" + std::to_string(c.ringBytes) + "B";
  return n;
}

std::string caseName(const testing::TestParamInfo<Case>& i) {
  return nameOf(i.param);
}

// gtest prints the parameter in every test line: the case name, not a byte dump.
[[maybe_unused]] void PrintTo(const Case& c, std::ostream* os) {
  *os << nameOf(c);
}

std::vector<Case> allCases() {
  std::vector<Case> cases;
  for (const char* t : {"socket", "ofi", "verbs"})
    for (int n : {1, 2, 3, 4, 5, 7, 8, 16}) {
      for (const char* a : {"tree", "ring", "rd", "rabenseifner", "auto"})
        cases.push_back({t, "allreduce", a, n});
      cases.push_back({t, "barrier", "dissemination", n});
      cases.push_back({t, "ring", "pingpong", n});
    }
  return cases;
}

std::vector<Case> tinyQueueCases() {
  std::vector<Case> cases;
  for (int n : {2, 3, 4, 5}) {
    for (uint64_t b : {1, 4096, 262144})
      cases.push_back({"socket", "ring", "pingpong", n, 1, b});
    cases.push_back({"socket", "allreduce", "ring", n, 1});
  }
  return cases;
}

class Collective : public testing::TestWithParam<Case> {};
class TinySendQueue : public testing::TestWithParam<Case> {};

void runCase(const Case& c) {
  transport::BackendStatus st = transport::probeBackend(c.transport);
  if (!st.usable) GTEST_SKIP() << c.transport << " not usable here: " << st.reason;
  CollectiveParams p;
  p.test = c.test;
  p.algo = c.algo == "dissemination" || c.algo == "pingpong" ? "tree" : c.algo;
  p.transport = c.transport;
  if (c.transport == "ofi") p.device.provider = "tcp;ofi_rxm";
  p.device.useEvent = true;              // many ranks on few cores
  p.sizes = {4, 100, 4096, 65536 + 12};  // odd sizes: uneven blocks
  p.iterations = 2;
  p.warmup = 1;
  p.check = true;
  p.ringBytes = c.ringBytes;
  p.device.txDepth = c.txDepth;
  p.timeoutMs = 20'000;
  p.dtype = c.ranks % 2 ? DType::kInt32 : DType::kFloat64;
  p.op = c.ranks == 5 ? ReduceOp::kMax : ReduceOp::kSum;
  launch::RankInfo base;
  base.runId = "test-" + nameOf(c);
  base.source = "np";
  base.host = "testhost";
  int rc = launch::runLocal(c.ranks, base, [&](const launch::RankInfo& info) {
    try {
      std::unique_ptr<rendezvous::TcpStoreServer> server;
      auto store = launch::connectStore(info, p.timeoutMs, server);
      CollectiveParams mine = p;
      mine.device.localHost = "127.0.0.1";
      std::ostringstream out;
      auto reporter = report::makeReporter("json", out);
      CollectiveOutcome o =
          runCollective(mine, info, *store, info.rank == 0 ? reporter.get() : nullptr);
      if (info.rank == 0) {
        reporter->end();
        std::string text = out.str();
        const std::string needRows =
            c.test == "ring" && c.ranks > 1 ? "\"link\"" : "\"collective\"";
        if (c.ranks > 1 || c.test != "ring")
          if (text.find(needRows) == std::string::npos) return 11;
      }
      store->leave(true, "");
      return o.wrong == 0 ? 0 : 10;
    } catch (const std::exception& e) {
      fprintf(stderr, "rank %d: %s\n", info.rank, e.what());
      return 1;
    }
  });
  EXPECT_EQ(rc, 0) << "10 = wrong elements, 11 = missing rows, 1 = error (see stderr)";
}

TEST_P(Collective, ResultsAreCorrect) {
  runCase(GetParam());
}
TEST_P(TinySendQueue, ResultsAreCorrectWhenPostsRetry) {
  runCase(GetParam());
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, Collective, testing::ValuesIn(allCases()), caseName);
INSTANTIATE_TEST_SUITE_P(Socket, TinySendQueue, testing::ValuesIn(tinyQueueCases()), caseName);

}  // namespace
}  // namespace rdmabench::collective
