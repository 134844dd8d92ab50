// Every allreduce algorithm, the barrier and the ring ping-pong, over every usable transport,
// for N in {1, 2, 3, 4, 5, 7, 8, 16} ranks forked on this host (launch::runLocal, the code
// behind `--np`), with data checks: a child exits non-zero when any rank's result is wrong.
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
};

std::string caseName(const testing::TestParamInfo<Case>& i) {
  return i.param.transport + "_" + i.param.test + "_" + i.param.algo + "_" +
         std::to_string(i.param.ranks);
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

class Collective : public testing::TestWithParam<Case> {};

TEST_P(Collective, ResultsAreCorrect) {
  const Case& c = GetParam();
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
  p.ringBytes = 64;
  p.timeoutMs = 20'000;
  p.dtype = c.ranks % 2 ? DType::kInt32 : DType::kFloat64;
  p.op = c.ranks == 5 ? ReduceOp::kMax : ReduceOp::kSum;
  launch::RankInfo base;
  base.runId = "test-" + caseName({GetParam(), 0});
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

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, Collective, testing::ValuesIn(allCases()), caseName);

}  // namespace
}  // namespace rdmabench::collective
