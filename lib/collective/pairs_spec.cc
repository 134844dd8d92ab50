// pairs' test descriptions (pairs_spec.h).
#include "collective/pairs_spec.h"

namespace rdmabench::collective {

namespace {

engine::TestSpec commonSpec(const PairsParams& p, engine::TestKind kind, uint64_t bytes) {
  engine::TestSpec s;
  s.test = kind;
  s.transport = p.transport;
  s.op = p.op;
  s.sizes = {bytes};
  s.timeoutMs = p.timeoutMs;
  return s;
}

}  // namespace

engine::TestSpec pairsLatencySpec(const PairsParams& p) {
  engine::TestSpec s = commonSpec(p, engine::TestKind::kLatency, p.latBytes);
  s.iterations = p.iterations;
  s.warmup = p.warmup;
  return s;
}

engine::TestSpec pairsBandwidthSpec(const PairsParams& p) {
  engine::TestSpec s = commonSpec(p, engine::TestKind::kBandwidth, p.bwBytes);
  s.iterations = p.bwIters;
  s.mode = p.mode;
  s.window = p.window;
  s.txDepth = p.txDepth;
  s.cqModeration = p.cqModeration;
  s.postList = p.postList;
  return s;
}

void validatePairsSpecs(const PairsParams& p) {
  pairsLatencySpec(p).validate();
  pairsBandwidthSpec(p).validate();
}

PairBandwidthCounts pairBandwidthCounts(const PairsParams& p, const engine::ProbeCounts& k) {
  if (p.mode != engine::BwMode::kStream) return {k.bwIters, k.bwWarm};
  return {k.bwIters * p.window, k.bwWarm * p.window};
}

void recordEngineOptions(report::RunInfo& ri, const PairsParams& p, const PairBandwidthCounts& bw,
                         const transport::Device& device) {
  const engine::TestSpec spec = pairsBandwidthSpec(p);
  ri.window = spec.inFlight();
  if (p.op != engine::Op::kSend) ri.op = engine::toString(p.op);
  ri.roundTrip = p.op == engine::Op::kRead;
  nlohmann::json& x = ri.extra;
  if (spec.stream()) {
    x["mode"] = engine::toString(spec.mode);
    x["bw_messages"] = bw.iterations;
    x["bw_warmup_messages"] = bw.warmup;
  }
  if (spec.stream() || p.cqModeration != 1) x["cq_moderation"] = p.cqModeration;
  if (p.postList != 1) {
    x["post_list"] = p.postList;
    // Not one doorbell per batch on this transport/op: say what a batch is instead.
    std::string note = device.postListNote(engine::opKind(engine::dataOp(p.op)));
    if (!note.empty()) x["post_list_note"] = std::move(note);
  }
}

}  // namespace rdmabench::collective
