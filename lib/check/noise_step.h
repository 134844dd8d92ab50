#pragma once
// Step 4 of `rdmabench check` (docs/check.md): a short `rdmabench noise` over every allowed core
// of this node, run through lib/noise as the command runs it (one rank per core, here threads
// over an in-process store): the share of each core stolen by other work and its top sources
// (threads by name, interrupts, softirqs, steal) from /proc.
// Errors: lib/noise's (SystemError when a thread cannot be pinned, InterruptedError).
// Thread-safety: call from one thread; it starts one thread per core and joins them.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rdmabench::check {

struct CoreNoise {
  int cpu = -1;
  double stolenPct = 0;
  double detoursPerSec = 0;
  double maxUs = 0;
  std::vector<std::string> sources;  // "stress-ng (pid 812): 48.0% of cpu 1", noisiest first
};

struct NoiseStep {
  double seconds = 0;        // loop time per core
  double meanStolenPct = 0;  // over the cores
  std::vector<CoreNoise> cores;
  std::vector<std::string> findings;  // lib/noise's outlier lines
  nlohmann::json report;              // the whole `noise -f json` document
};

// Runs the detour loop for `seconds` on every allowed core at once.
NoiseStep runNoiseStep(double seconds, const std::string& host);

// The step as the report's JSON member "noise" ({seconds, mean_stolen_pct, cores: [{cpu,
// stolen_pct, detours_per_s, max_us, sources}], findings, report}), and back (ProtocolError for
// a document that is not one; check's step child sends it to the parent this way).
nlohmann::json toJson(const NoiseStep& n);
NoiseStep noiseStepFromJson(const nlohmann::json& j);

}  // namespace rdmabench::check
