#pragma once
// The rules of `rdmabench check` (docs/check.md), as pure functions over a CheckResult: each
// adds its findings (failing or not) and notes. Thread-safety: pure.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "check/expect.h"
#include "check/history.h"
#include "check/result.h"

namespace rdmabench::check {

// Ports: not ACTIVE, physical state not LinkUp, an Ethernet port's netdev not up. No device at
// all fails with `requireRdma`; a device named with -d that is not there always fails.
void judgeInventory(CheckResult& r, const std::vector<std::string>& named, bool requireRdma);

// Error-class counters that rose in the window by more than their limit (`limits`, by name;
// default 0) fail: one finding per port naming each counter and its rise; a counter that went
// backwards is a note (reset or wrap).
void judgeCounters(CheckResult& r, const std::map<std::string, uint64_t>& limits = {});

// A measurement that failed, was cut at its deadline or saw wrong data fails.
void judgeMeasurements(CheckResult& r);

// The figures the baseline and --expect judge: per measured port lat_p50_us, lat_p99_us,
// bw_mb_s and the rate of every congestion counter; the node's mean stolen %.
std::vector<Figure> collectFigures(const CheckResult& r);

// --expect: every expectation against every measured port.
void judgeExpectations(CheckResult& r, const std::vector<Expectation>& expects);

// --baseline: every figure against `history` by the rule (rule.h); a figure without enough
// history is not judged and the notes say so once.
void judgeBaseline(CheckResult& r, const History& history);

// Failing findings first (in the order they were added), then the others.
void orderFindings(CheckResult& r);

// "7.9 us", "1234 MB/s": the figure's value for a finding line.
std::string formatValue(const Figure& f, double v);

}  // namespace rdmabench::check
