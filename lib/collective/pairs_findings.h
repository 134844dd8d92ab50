#pragma once
// The findings of `rdmabench pairs` (docs/fabric-map.md, "Verdict") as text and JSON, the
// per-link flags, and the verdict they add up to. Findings: slow nodes and slow links
// (pairs_outliers.h), a cut between two clusters of links and links beyond --max-lat /
// --min-bw (pairs_verdict.h), for latency and bandwidth, ranked by severity (figure / baseline;
// for a bound: worst value / bound), worst first.
// Thread-safety: pure functions of their arguments.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collective/pairs.h"

namespace rdmabench::collective {

struct PairsFinding {
  std::string text;       // one line, e.g. "link 0 -> 3 h1 -> h4: latency 410.2 us vs 41.0 us ..."
  bool confirmed = true;  // false: the CPU time its measurements lost explains it (no verdict)
  double severity = 0;
  nlohmann::ordered_json json;  // {"figure","kind",...,"severity","verdict","text"}
};

// Every finding, worst first. Texts of unconfirmed ones end in "(no verdict: ...)".
std::vector<PairsFinding> pairsFindingList(const PairsResult& r);

// Texts of pairsFindingList. Empty when nothing was found.
std::vector<std::string> pairsFindings(const PairsResult& r);

// The flag of link src -> dst in one figure: "node" (src or dst is a slow node), "link" (a slow
// link), "cut" (a slow link of a cut), "bound" (beyond --max-lat / --min-bw), "" otherwise.
std::string pairsLinkFlag(const PairsResult& r, bool bandwidth, int src, int dst);

// What the findings add up to: kFail when any finding is confirmed ("pairs: N outlier(s): ..."),
// kNoVerdict when the CPU time their measurements lost explains every finding ("pairs: no
// outlier verdict: ..."), kPass otherwise (text empty). --fail-on-outlier exits 1 unless kPass.
struct PairsVerdictLine {
  enum Result { kPass, kFail, kNoVerdict } result = kPass;
  std::string text;
};
PairsVerdictLine pairsVerdictLine(const PairsResult& r);

}  // namespace rdmabench::collective
