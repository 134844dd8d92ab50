// `rdmabench noise`: detour statistics, the outlier rule and the collective cost model on
// synthetic traces with known answers.
#include <gtest/gtest.h>

#include <cmath>

#include "noise/detour.h"
#include "noise/model.h"
#include "noise/outliers.h"
#include "noise/report.h"

namespace rdmabench::noise {
namespace {

// Detours of `len` ns every `period` ns, the first at `period / 2`, over `loop` ns.
DetourTrace periodic(int64_t loop, int64_t period, int64_t len) {
  DetourTrace t;
  t.loopNs = loop;
  t.thresholdNs = 1000;
  for (int64_t s = period / 2; s + len <= loop; s += period) {
    t.detours.push_back({s, len});
    ++t.count;
    t.stolenNs += len;
    t.maxNs = std::max(t.maxNs, len);
  }
  return t;
}

TEST(NoiseStats, SummarizePeriodicTrace) {
  // 200 us every 10 ms for 1 s: 100 detours/s, 2% stolen (the injector).
  DetourTrace t = periodic(1'000'000'000, 10'000'000, 200'000);
  DetourStats s = summarize(t);
  EXPECT_EQ(s.count, 100u);
  EXPECT_DOUBLE_EQ(s.perSecond, 100.0);
  EXPECT_DOUBLE_EQ(s.stolenPct, 2.0);
  EXPECT_DOUBLE_EQ(s.maxUs, 200.0);
  EXPECT_DOUBLE_EQ(s.p50Us, 200.0);
  EXPECT_DOUBLE_EQ(s.p999Us, 200.0);
}

TEST(NoiseStats, DefaultThreshold) {
  EXPECT_EQ(defaultThresholdNs(10), 1000);
  EXPECT_EQ(defaultThresholdNs(400), 2000);
}

TEST(NoiseStats, DetourLoopAccountsConsistently) {
  // Whatever interrupts it, the loop ends on time and its count, sum and list agree.
  DetourTrace t = runDetourLoop(20'000'000, 1000, medianClockStepNs(10'000));
  EXPECT_GE(t.loopNs, 20'000'000);
  EXPECT_GT(t.iterations, 1000u);
  EXPECT_EQ(t.detours.size(), t.count);
  int64_t sum = 0;
  for (const auto& d : t.detours) {
    EXPECT_GT(d.lengthNs, 1000);
    sum += d.lengthNs;
  }
  EXPECT_EQ(sum, t.stolenNs);
}

TEST(NoiseFwq, SpreadOfQuantumTimes) {
  // Known answer: three quiet quanta of 100 us and one hit by a 100 us detour.
  FwqTrace t;
  t.ns = {100'000, 100'000, 200'000, 100'000};
  FwqStats s = summarizeFwq(t);
  EXPECT_EQ(s.quanta, 4u);
  EXPECT_DOUBLE_EQ(s.minUs, 100);
  EXPECT_DOUBLE_EQ(s.medianUs, 100);
  EXPECT_DOUBLE_EQ(s.maxUs, 200);
  EXPECT_DOUBLE_EQ(s.meanUs, 125);
  EXPECT_DOUBLE_EQ(s.noiseRatio, 0.25);
  // A real run calibrates its work to the quantum: the fastest quantum is near 100 us (the
  // minimum over hundreds of quanta is robust to load; a factor of 2 covers frequency changes).
  FwqTrace real = runFwq(100, 50'000'000);
  FwqStats r = summarizeFwq(real);
  EXPECT_GE(r.quanta, 10u);
  EXPECT_GT(r.minUs, 50);
  EXPECT_LT(r.minUs, 200);
  EXPECT_GE(r.noiseRatio, 0);
}

TEST(NoiseOutliers, MedianPlusKMad) {
  // Eight quiet cores and one at 2%: median 0.1, MAD 0.01, spread max(0.01, 0.01, 0.05) = 0.05,
  // threshold 0.1 + 5 x 0.05 = 0.35.
  std::vector<double> v{0.1, 0.11, 0.09, 0.1, 2.0, 0.1, 0.12, 0.08, 0.1};
  OutlierRule r = flagNoisy(v, 5, kStolenPctFloor);
  EXPECT_TRUE(r.decided);
  EXPECT_DOUBLE_EQ(r.baseline, 0.1);
  EXPECT_NEAR(r.threshold, 0.35, 1e-12);
  ASSERT_EQ(r.outliers, (std::vector<size_t>{4}));
  EXPECT_EQ(r.ranked.front(), 4u);
  // Two cores: ranked, never decided.
  OutlierRule two = flagNoisy({0.1, 20}, 5, kStolenPctFloor);
  EXPECT_FALSE(two.decided);
  EXPECT_TRUE(two.outliers.empty());
  EXPECT_EQ(two.ranked, (std::vector<size_t>{1, 0}));
  // A quiet job: the floor keeps tiny differences from being outliers.
  EXPECT_TRUE(flagNoisy({0.001, 0.002, 0.001, 0.05}, 5, kStolenPctFloor).outliers.empty());
}

TEST(NoiseModel, HistogramExpectedMax) {
  LogHistogram h;
  for (int i = 0; i < 99; ++i)
    h.add(0);
  h.add(1000);
  // One draw: the mean, 10 ns. Many draws: the maximum, 1000 ns.
  EXPECT_NEAR(h.expectedMaxNs(1), 10.0, 1e-9);
  EXPECT_NEAR(h.expectedMaxNs(1e6), 1000.0, 1e-6);
  // Two draws: 1000 x (1 - 0.99^2).
  EXPECT_NEAR(h.expectedMaxNs(2), 1000 * (1 - 0.99 * 0.99), 1e-6);
  EXPECT_NEAR(h.probabilityDelayed(2), 1 - 0.99 * 0.99, 1e-12);
  EXPECT_DOUBLE_EQ(h.quantileNs(0.5), 0);
  EXPECT_DOUBLE_EQ(h.quantileNs(1), 1000);
  LogHistogram back = LogHistogram::fromJson(h.toJson(), "test");
  EXPECT_EQ(back.count(), 100u);
  EXPECT_NEAR(back.expectedMaxNs(2), h.expectedMaxNs(2), 1e-9);
  EXPECT_THROW(LogHistogram::fromJson(nlohmann::json::parse("[[99999,1,1]]"), "t"), std::exception);
}

TEST(NoiseModel, ReplayedDelaysOfPeriodicNoise) {
  // 10 us detours every 1 ms over 100 ms, work T = 1 us, calls started evenly over the 99 ms the
  // rank runs: a call meets a detour when one begins within its T, P = T x rate = 1 us x
  // 100 / 99 ms = 0.101%, and then waits the whole 10 us: mean delay 10.1 ns. The max over many
  // ranks is the detour, 10 us.
  DetourTrace t = periodic(100'000'000, 1'000'000, 10'000);
  LogHistogram h;
  addDelays(t, 1000, 200'000, h);
  EXPECT_EQ(h.count(), 200'000u);
  EXPECT_NEAR(h.probabilityDelayed(1), 100.0 * 1000 / 99'000'000, 0.00003);
  EXPECT_NEAR(h.expectedMaxNs(1), 10.1, 0.3);
  EXPECT_NEAR(h.expectedMaxNs(1e7), 10'000.0, 300.0);
  Prediction p = predict(h, 1'000'000, 1.0);
  EXPECT_NEAR(p.delayUs, 10.0, 0.3);
  EXPECT_NEAR(p.slowdown, 11.0, 0.3);
  // Without detours nothing is delayed.
  LogHistogram quiet;
  DetourTrace none;
  none.loopNs = 10'000'000;
  addDelays(none, 1000, 1000, quiet);
  EXPECT_EQ(quiet.count(), 1000u);
  EXPECT_DOUBLE_EQ(quiet.expectedMaxNs(1e6), 0);
}

TEST(NoiseReport, BuildNamesTheNoisyCoreAndSurvivesTheStore) {
  NoiseConfig cfg;
  cfg.predictTimesUs = {20};
  std::vector<RankResult> ranks;
  for (int r = 0; r < 4; ++r) {
    RankResult x;
    x.rank = r;
    x.host = r < 2 ? "n1" : "n2";
    x.cpu = r % 2;
    x.stats.seconds = 1;
    x.stats.stolenPct = r == 3 ? 2.0 : 0.01 * (r + 1);
    x.stats.perSecond = r == 3 ? 100 : 10;
    x.delays.resize(1);
    DetourTrace t = periodic(1'000'000'000, r == 3 ? 10'000'000 : 100'000'000, 200'000);
    for (const auto& d : t.detours)
      x.lengths.add(d.lengthNs);
    addDelays(t, 20'000, 100'000, x.delays[0]);
    // Through the store and back.
    ranks.push_back(RankResult::fromJson(nlohmann::json::parse(x.toJson().dump()), "t", 1));
  }
  NodeAttribution a;
  a.host = "n2";
  CpuSources cs;
  cs.cpu = 1;
  NoiseSource s;
  s.kind = "thread";
  s.text = "injector (pid 812): 2.00% of cpu 1";
  cs.top.push_back(s);
  a.cpus.push_back(cs);
  NoiseReport rep = buildReport(cfg, ranks, {NodeAttribution::fromJson(a.toJson(), "t")});
  EXPECT_EQ(rep.nodes.size(), 2u);
  EXPECT_TRUE(rep.warnings.empty());
  ASSERT_EQ(rep.coreRule.outliers, (std::vector<size_t>{3}));
  auto findings = noiseFindings(rep);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].find("node n2 cpu 1 (rank 3)"), std::string::npos);
  EXPECT_NE(findings[0].find("injector (pid 812)"), std::string::npos);
  ASSERT_EQ(rep.predictions.size(), 1u);
  EXPECT_EQ(rep.predictions[0].ranks, 4);
  EXPECT_GT(rep.predictions[0].delayUs, 0);
  for (const char* f : {"json", "table", "csv"}) {
    std::ostringstream out;
    writeNoise(out, f, rep);
    EXPECT_NE(out.str().find("n2"), std::string::npos) << f;
    if (std::string(f) == "json") {
      auto j = nlohmann::json::parse(out.str());
      EXPECT_EQ(j["outliers"]["cores"]["outliers"][0]["rank"], 3);
      EXPECT_EQ(j["ranks"][3]["sources"][0]["text"], s.text);
    }
  }
  // A threshold below twice the clock step is warned about.
  ranks[0].medianStepNs = 600;
  ranks[0].thresholdNs = 1000;
  NoiseReport warned = buildReport(cfg, ranks, {});
  ASSERT_EQ(warned.warnings.size(), 1u);
  EXPECT_NE(warned.warnings[0].find("below twice the loop's median step (600 ns, rank 0)"),
            std::string::npos);
  std::ostringstream err;
  writeNoiseError(err, "json", "boom \"x\"");
  EXPECT_EQ(nlohmann::json::parse(err.str())["error"], "boom \"x\"");
}

}  // namespace
}  // namespace rdmabench::noise
