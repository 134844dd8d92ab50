#pragma once
// Step 2 of `rdmabench check` (docs/check.md): the port counters of the test window. Every file
// of ports/N/counters/ and ports/N/hw_counters/ (and, for an Ethernet port, the netdev's
// statistics/) is read before and after the measuring steps; each counter's delta over the window
// and its rate are reported, and its class decides the rule:
//  - error (symbol_error, link_downed, port_rcv_errors, retry / sequence errors, drops...): any
//    rise fails the check;
//  - congestion (port_xmit_wait, ECN marks, CNPs, pause frames, RNR NAKs): reported, judged only
//    against the node's baseline;
//  - traffic (packets, bytes, everything else): reported only.
// The names come from what the device exposes (they differ by driver: mlx5, rxe, irdma, hfi1...);
// classifyCounter() decides by the words in the name, so a driver's new counter gets a class
// without a code change. Thread-safety: pure functions; readCounters reads sysfs.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "check/inventory.h"

namespace rdmabench::check {

enum class CounterClass { kError, kCongestion, kTraffic };
const char* toString(CounterClass c);  // "error", "congestion", "traffic"

// The class of a counter by its file name (without directory), e.g. "symbol_error" -> kError,
// "np_cnp_sent" -> kCongestion, "port_xmit_data" -> kTraffic.
CounterClass classifyCounter(const std::string& name);

// One reading of a port's counters, keyed "counters/NAME", "hw_counters/NAME" or
// "netdev/NAME" (the netdev's statistics/NAME).
struct CounterSnapshot {
  int64_t monoNs = 0;  // CLOCK_MONOTONIC when read
  std::map<std::string, uint64_t> values;
};

// Reads every counter file of `port` under `root` (files that do not parse as a number, or
// cannot be read, are left out: some hw_counters are write-only or need privileges).
CounterSnapshot readCounters(const std::string& root, const PortState& port);

struct CounterDelta {
  std::string key;  // "hw_counters/rcvd_seq_err"
  CounterClass cls = CounterClass::kTraffic;
  uint64_t before = 0, after = 0;
  uint64_t delta = 0;    // after - before; 0 when the counter went backwards (reset / wrap)
  bool reset = false;    // after < before
  double perSecond = 0;  // delta / window
};

// The deltas of every counter present in both snapshots, in key order. `seconds`: the window.
std::vector<CounterDelta> counterDeltas(const CounterSnapshot& before,
                                        const CounterSnapshot& after);

}  // namespace rdmabench::check
