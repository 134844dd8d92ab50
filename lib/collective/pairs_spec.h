#pragma once
// The point-to-point test descriptions of a pairs run (engine/spec.h TestSpec): pairs' latency is
// a `lat` of one size and its bandwidth a `bw` of one size between two ranks, so the options pairs
// shares with lat / bw are checked by the same TestSpec::validate (same limits, same messages)
// and mapped to the engines' parameters by the same engine/spec_params.h. Pure functions of the
// parameters; thread-safe.

#include "collective/params.h"
#include "engine/iterations.h"
#include "engine/spec.h"
#include "report/report.h"
#include "transport/transport.h"

namespace rdmabench::collective {

// `lat` of one size: --op, --lat-size, -n, --warmup, --timeout and the transport.
engine::TestSpec pairsLatencySpec(const PairsParams& p);

// `bw` of one size: --op, --bw-size, --mode, --window (window mode), --tx-depth (stream mode),
// --cq-mod, -l, --timeout and the transport; -n is the bandwidth iterations (--bw-iters).
engine::TestSpec pairsBandwidthSpec(const PairsParams& p);

// Both descriptions through TestSpec::validate: UsageError as lat / bw give it ("--cq-mod 32:
// out of range 1..16 (the window)", "--op tagged: only for -t ofi ...").
void validatePairsSpecs(const PairsParams& p);

// The bandwidth engine's counts of a pair: window mode `bwIters` windows after `bwWarm`; stream
// mode counts messages, the same messages as window mode's (--bw-iters x --window after
// warmup x --window; --window keeps its default 16 there).
struct PairBandwidthCounts {
  uint64_t iterations, warmup;
};
PairBandwidthCounts pairBandwidthCounts(const PairsParams& p, const engine::ProbeCounts& k);

// The run header's record of the engine options, as lat / bw record theirs (engine/pair.cc), but
// only where they differ from pairs' defaults so a default run's header is unchanged: op (and
// round_trip for read: the latency is the round trip, as ib_read_lat), the window or the stream's
// posts in flight (RunInfo::window), and in `extra` mode, bw_messages / bw_warmup_messages
// (stream), cq_moderation (stream, or not 1), post_list and the device's post_list_note (-l above
// 1).
void recordEngineOptions(report::RunInfo& ri, const PairsParams& p, const PairBandwidthCounts& bw,
                         const transport::Device& device);

}  // namespace rdmabench::collective
