// The untimed helpers of the collective timed loops (bench_run.h).
#include <algorithm>
#include <cstring>
#include <iterator>

#include <nlohmann/json.hpp>

#include "collective/allreduce.h"
#include "collective/bench_run.h"
#include "collective/run_info.h"
#include "engine/iterations.h"

namespace rdmabench::collective {

using nlohmann::json;

namespace {

constexpr uint64_t kMaxIterations = 100'000'000;  // -D's ceiling, as the point-to-point engines

}  // namespace

// docs: bench.h
AcrossRanks reduceAcrossRanks(Communicator& c, const RankResult& r) {
  auto reduce = [&c](std::initializer_list<double> in, ReduceOp op, double* out) {
    const size_t k = in.size();
    std::memcpy(c.data(), std::data(in), k * sizeof(double));
    allreduce(c, "tree", k, DType::kFloat64, op);
    std::memcpy(out, c.data() + k * sizeof(double), k * sizeof(double));
  };
  AcrossRanks a;
  reduce({r.meanUs}, ReduceOp::kMin, &a.minUs);
  reduce({r.meanUs}, ReduceOp::kMax, &a.maxUs);
  double sums[2];
  reduce({r.meanUs, static_cast<double>(r.wrong)}, ReduceOp::kSum, sums);
  a.sumUs = sums[0];
  a.wrong = static_cast<uint64_t>(sums[1]);
  return a;
}

namespace detail {

void BenchRun::enter(std::string s, int warmup) {
  // Errors outside the waits (the store's news of a dead rank) name the stage too.
  stage = s + (warmup < 0 ? "" : warmup ? ", warmup" : ", measuring");
  c.setStage(std::move(s));
  if (warmup >= 0) c.setWarmup(warmup != 0);
}

void BenchRun::begin() {
  if (root()) reporter->begin(collectiveRunInfo(c, p, info, extra, placement));
}

uint64_t itersFor(const CollectiveParams& p, uint64_t bytes) {
  return engine::osuIterations(p.iterations, bytes, engine::kCollectiveIterations);
}

uint64_t warmupFor(const CollectiveParams& p, uint64_t bytes) {
  return engine::osuWarmup(p.warmup, bytes, engine::kCollectiveIterations);
}

uint64_t calibratedWarmupFor(const CollectiveParams& p, uint64_t bytes) {
  const uint64_t warm = warmupFor(p, bytes);
  return p.durationSec > 0 ? std::max<uint64_t>(warm, 10) : warm;
}

uint64_t budgetedIterations(const CollectiveParams& p, uint64_t fixed, int64_t perIterNs) {
  const double per = static_cast<double>(perIterNs) / 1e9;
  if (p.durationSec > 0)
    return engine::iterationsForDuration(fixed, per, p.durationSec, kMaxIterations);
  if (p.iterations == 0) return engine::budgetedIterations(fixed, per, p.maxTimeSec);
  return fixed;
}

int64_t agreeMax(Communicator& c, int64_t v) {
  std::memcpy(c.data(), &v, sizeof v);
  allreduce(c, "tree", 1, DType::kInt64, ReduceOp::kMax);
  int64_t out = 0;
  std::memcpy(&out, c.data() + sizeof v, sizeof out);
  return out;
}

SlowestPerIteration::SlowestPerIteration(Communicator& c, uint64_t iterations) : c_(c) {
  buffer_.reserve(static_cast<size_t>(std::min(iterations, kSlowestBuffer)));
  if (c_.rank() == 0) set_.reserve(static_cast<size_t>(iterations));
}

bool SlowestPerIteration::add(int64_t ns) {
  buffer_.push_back(ns);
  if (buffer_.size() < kSlowestBuffer) return false;
  reduce();
  return true;
}

stats::Summary SlowestPerIteration::finish() {
  reduce();
  return set_.summarize();
}

void SlowestPerIteration::reduce() {
  for (size_t off = 0; off < buffer_.size(); off += kSlowestChunk) {
    const size_t k = std::min<size_t>(kSlowestChunk, buffer_.size() - off);
    std::memcpy(c_.data(), buffer_.data() + off, k * sizeof(int64_t));
    allreduce(c_, "tree", k, DType::kInt64, ReduceOp::kMax);
    if (c_.rank() == 0)
      for (size_t i = 0; i < k; ++i) {
        int64_t v = 0;
        std::memcpy(&v, c_.data() + (k + i) * sizeof(int64_t), sizeof v);
        set_.add(v);
      }
  }
  buffer_.clear();
}

json deschedAcrossRanks(Communicator& c, const DeschedDelta& d, double yieldCpuShare) {
  const bool yielding = yieldCpuShare > 0;
  const double in[4] = {!yielding && d.lostCpu() ? 1.0 : 0.0,
                        static_cast<double>(d.involuntarySwitches), d.stealUs, d.runDelayUs};
  std::memcpy(c.data(), in, sizeof in);
  allreduce(c, "tree", 4, DType::kFloat64, ReduceOp::kMax);
  double out[4];
  std::memcpy(out, c.data() + sizeof in, sizeof out);
  const double shortfall = sharedCpuShortfallUs(c, d, yieldCpuShare);
  if (out[0] == 0 && shortfall <= 0) return nullptr;
  json j{{"involuntary_switches", static_cast<int64_t>(out[1])}, {"steal_us", out[2]}};
  if (out[3] >= 0) j["run_delay_us"] = out[3];
  if (shortfall > 0) j["cpu_shortfall_us"] = shortfall;
  return j;
}

double ranksCpuUs(const DeschedDelta& d, double yieldCpuShare) {
  return d.cpuUs + d.irqUs * yieldCpuShare / std::max(1, d.allowedCpus);
}

double sharedCpuShortfallUs(Communicator& c, const DeschedDelta& d, double yieldCpuShare) {
  const bool yielding = yieldCpuShare > 0;
  // The yielding ranks' run time and share; a rank without schedstat makes the sum negative.
  const double share[2] = {yielding ? (d.cpuUs < 0 ? -1e18 : ranksCpuUs(d, yieldCpuShare)) : 0.0,
                           yielding ? d.wallUs * yieldCpuShare : 0.0};
  std::memcpy(c.data(), share, sizeof share);
  allreduce(c, "tree", 2, DType::kFloat64, ReduceOp::kSum);
  double shared[2];
  std::memcpy(shared, c.data() + sizeof share, sizeof shared);
  return sharedCpusLost(shared[0], shared[1]) ? shared[1] - shared[0] : 0.0;
}

json deschedOfRank(const DeschedDelta& d, double yieldCpuShare, double shortfallUs) {
  if (yieldCpuShare > 0 ? shortfallUs <= 0 : !d.lostCpu()) return nullptr;
  json j = d.toJson();
  if (yieldCpuShare > 0) j["cpu_shortfall_us"] = shortfallUs;
  return j;
}

report::CollectiveRow rowAcrossRanks(int n, const AcrossRanks& a, uint64_t bytes,
                                     const stats::Summary& sm) {
  report::CollectiveRow row;
  row.ranks = n;
  row.tMinUs = a.minUs;
  row.tMaxUs = a.maxUs;
  row.tAvgUs = a.sumUs / n;
  row.slowestP50Us = sm.p50;
  row.slowestP99Us = sm.p99;
  row.slowestMaxUs = sm.max;
  if (row.tAvgUs > 0 && bytes > 0) {
    row.algbwGBs = static_cast<double>(bytes) / (row.tAvgUs * 1e-6) / 1e9;
    row.busbwGBs = row.algbwGBs * 2.0 * (n - 1) / n;
  }
  row.wrong = a.wrong;
  return row;
}

}  // namespace detail
}  // namespace rdmabench::collective
