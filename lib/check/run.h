#pragma once
// `rdmabench check` from parsed options to a judged result (docs/check.md). Steps, each within
// its share of --budget: inventory (sysfs), counters before, loopback measurement per port (or
// port pair), counters after, noise; then --expect, --baseline and --record.
// Errors: HistoryError (exit 3) for a --baseline history that cannot be used, before anything
// is measured; SystemError when a step cannot start (fork, threads); InterruptedError.
// A failing measurement or a down port is a finding, not an exception.
// Thread-safety: call from the main thread (it forks, then starts threads).

#include <string>

#include "check/options.h"
#include "check/result.h"

namespace rdmabench::check {

// Budget shares (fractions of --budget; the rest is reserve for start-up, the report and the
// history, and lateness on a loaded host).
inline constexpr double kMeasureShare = 0.55, kNoiseShare = 0.12;
// Minimum seconds a port pair's measurement needs (two engine runs, each with its device open
// and connection set-up); below it the step is skipped.
inline constexpr double kMinMeasureSec = 3;
inline constexpr double kMinNoiseSec = 0.5;

CheckResult runCheck(const CheckCommand& cmd, const std::string& commandLine);

// Appends `r` to cmd.recordDir's history (HistoryError when it cannot).
void recordRun(const CheckCommand& cmd, CheckResult& r);

}  // namespace rdmabench::check
