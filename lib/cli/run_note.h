#pragma once
// The note printed on stderr before a lat/bw run that will move a lot of data: `bw -s 1G -n 1`
// is 64 windows of 1 GiB, minutes on a 10 Gb/s link with one row at the very end and nothing
// before. perftest and OSU print nothing and just run; rdmabench still runs (valid input is
// never refused) but says first what it will move and how long that takes at least.
// Thread-safety: pure functions.

#include <cstdint>
#include <string>

#include "engine/spec.h"

namespace rdmabench::cli {

// Runs that move at least this many bytes (both directions, warmup included) get the note.
inline constexpr double kLargeRunBytes = 100e9;  // 100 GB: >= 80 s at 10 Gb/s

// Bytes a run of `spec` moves over the network: for each size, bytes x messages per iteration
// (bw window: the window; stream: 1) x (iterations + warmup) x connections x directions (lat: 2,
// ping and pong; bw: 2 when bidirectional). In double: the product can pass 2^64. 0 for -D
// (its length is the clock's).
double plannedBytes(const engine::TestSpec& spec);

// The one-line note ("rdmabench: note: this run moves 206.2 GB ...") or empty: below
// kLargeRunBytes, -D, or automatic counts bounded by --max-time (`maxTimeSec` > 0).
std::string largeRunNote(const engine::TestSpec& spec, double maxTimeSec);

// Ranks per allowed CPU above which an N-rank run is warned about before it starts.
inline constexpr int kRanksPerCpuWarning = 8;

// The warning for `ranks` ranks on one host with `cpus` allowed CPUs (`what`: "--np 1000" or
// "1000 ranks on this host"), or empty up to kRanksPerCpuWarning ranks per CPU: `barrier --np
// 1000` on 2 CPUs was accepted and failed after 27 s. Every rank waits its turn for a CPU at
// each step, so the figures are the scheduler's and ranks may exceed --timeout (`timeoutSec`);
// without `eventMode` it names -e on, which scales furthest (ranks sleep until data arrives).
std::string oversubscriptionWarning(const std::string& what, int ranks, int cpus, bool eventMode,
                                    double timeoutSec);

}  // namespace rdmabench::cli
