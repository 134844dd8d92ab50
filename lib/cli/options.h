#pragma once
// Command-line parsing for the rdmabench subcommands (Boost.Program_options), kept in the
// library so it is unit-tested. Every bad value becomes a one-line UsageError naming the
// option, the value and the accepted range. docs/cli.md documents every option.

#include <boost/program_options.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/placement.h"
#include "engine/pair.h"

namespace rdmabench::cli {

struct OutputOptions {
  std::string format = "table";  // report::formatNames()
  std::string path;              // -o FILE; empty = stdout
  bool gigabits = false;         // --gbits: also show Gb/s (10^9 bit/s)
  bool full = false;             // --full: OSU -f style extra columns
  bool quiet = false;            // --quiet: no progress line on stderr
};

// One transport/provider combination of an A/B comparison.
struct Variant {
  std::string transport;  // socket | verbs | ofi
  std::string provider;   // ofi only
  std::string label;      // "socket", "ofi:tcp;ofi_rxm"
};

struct ClientCommand {
  engine::ClientOptions client;
  // Two or more: run the same test once per variant and print one A/B table
  // (--provider A --provider B, or --compare verbs,ofi:tcp;ofi_rxm,socket).
  std::vector<Variant> variants;
  OutputOptions output;
  bool transportGiven = false;  // -t given; else the caller picks the best usable transport
  std::string clock = "auto";   // --clock auto | tsc | monotonic (common/measure_clock.h)
  PlacementRequest placement;   // --cpu LIST / --numa auto|off|N (common/placement.h)
  bool help = false;
  std::string helpText;
};

// Runs Boost.Program_options for subcommand `command` and turns its exceptions into one-line
// UsageErrors ("rdmabench lat: unrecognised option '--x' (see `rdmabench lat --help`)").
boost::program_options::variables_map parseOptions(
    const std::string& command, const boost::program_options::options_description& desc,
    const boost::program_options::positional_options_description& positional,
    const std::vector<std::string>& args);

// The HOST argument of lat / bw: "HOST:PORT" and "[IPV6]:PORT" set `port` too ("[IPV6]" and a
// bare IPv6 address do not); UsageError suggesting -p for a bad port, and when -p (`portGiven`)
// names another port.
void splitHostPort(std::string& host, uint16_t& port, bool portGiven);

// `test` is "lat" or "bw"; `args` excludes the program and subcommand names.
ClientCommand parseClientCommand(const std::string& test, const std::vector<std::string>& args);

struct ServerCommand {
  engine::ServerOptions server;
  bool help = false;
  std::string helpText;
};

ServerCommand parseServerCommand(const std::vector<std::string>& args);

// Parses --compare's list: comma-separated `transport` or `ofi:provider` items, at least two.
// UsageError names the bad item.
std::vector<Variant> parseCompareList(std::string_view text);

// Unsigned integer option in [min, max]; UsageError "--iters 0: out of range 1..1000000000", or
// "--iters '1e9x': not a whole number (expected 1..1000000000)" for anything but digits.
uint64_t parseUnsigned(std::string_view text, std::string_view option, uint64_t min, uint64_t max);
// Decimal number in [min, max] (strtod syntax); UsageError "--outlier-k -1: out of range
// 0..1000", or "--outlier-k 'abc': not a number (expected 0..1000)"; `unit` ("seconds", or ""
// for none) follows the range in both.
double parseNumber(std::string_view text, std::string_view option, double min, double max,
                   std::string_view unit);
// Seconds as a decimal number in [min, max]: parseNumber with unit "seconds".
double parseSeconds(std::string_view text, std::string_view option, double min, double max);

// The transport `rdmabench lat` uses when -t is not given: verbs when a device with an active
// port exists, else socket. `note` says why (for the run header); `verbsBuilt` (optional) is
// set to whether the verbs backend is compiled into this binary at all.
std::string defaultTransport(std::string& note, bool* verbsBuilt = nullptr);

}  // namespace rdmabench::cli
