#pragma once
// Command-line parsing for the rdmabench subcommands (Boost.Program_options), kept in the
// library so it is unit-tested. Every bad value becomes a one-line UsageError naming the
// option, the value and the accepted range. docs/cli.md documents every option.

#include <boost/program_options.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/help_gen.h"
#include "common/error.h"
#include "common/placement.h"
#include "engine/pair.h"

namespace rdmabench::cli {

struct OutputOptions {
  std::string format = "table";  // report::formatNames()
  std::string path;              // -o FILE; empty = stdout
  bool gigabits = false;         // --gbits: also show Gb/s (10^9 bit/s)
  bool full = false;             // --full: OSU -f style extra columns
  bool quiet = false;            // --quiet: no progress line or large-run note on stderr
};

// One transport/provider combination of an A/B comparison.
struct Variant {
  std::string transport;  // socket | verbs | ofi
  std::string provider;   // ofi only
  std::string label;      // "socket", "ofi:tcp;ofi_rxm"
};

// An option given on the command line that only some transports read, as typed: "-d/--device
// mlx5_0", "-R/--rdma-cm" (givenTransportOptions, checkTransportOptions).
struct TransportOption {
  std::string spelling;
  bool verbs = false, ofi = false;  // the transports that read it
};

struct ClientCommand {
  engine::ClientOptions client;
  // Two or more: run the same test once per variant and print one A/B table
  // (--provider A --provider B, or --compare verbs,ofi:tcp;ofi_rxm,socket).
  std::vector<Variant> variants;
  OutputOptions output;
  bool transportGiven = false;  // -t given; else the caller picks the best usable transport
  bool progressGiven = false;   // -e given: the mode is used as asked (cli/loopback_progress.h)
  // Without -t: the transport-specific options given ("-d/--device mlx5_0"), each with the
  // transports that read it, for checkAutoTransport once the transport is known.
  std::vector<TransportOption> transportOptions;
  std::string clock = "auto";  // --clock auto | tsc | monotonic (common/measure_clock.h)
  PlacementRequest placement;  // --cpu LIST / --numa auto|off|N (common/placement.h)
  bool help = false;
  std::string helpText;
  OptionGroups helpGroups;  // with help: the descriptions helpText shows (cli/help_gen.h)
};

// A UsageError of lat / bw found once the options parsed, carrying the output they name, so
// the CLI can print the error document on stdout for -f json / -f csv (docs/cli.md, "Output
// files and failures").
class ClientUsageError : public UsageError {
 public:
  ClientUsageError(const std::string& message, OutputOptions out)
      : UsageError(message), output(std::move(out)) {}
  OutputOptions output;  // format "table" when -f was not given or is unknown
};

// Runs Boost.Program_options for subcommand `command` and turns its exceptions into one-line
// UsageErrors: "unknown option '--sise' for 'lat'; did you mean '--size'?" (or "... (see
// `rdmabench lat --help`)" when nothing is close), "rdmabench lat: <Boost's message> (see ...)".
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
  // --clock auto | tsc | monotonic: the clock of the server's timed side (bw: the target's
  // interval, reported as peer_BW), selected once at start-up; the sessions inherit it.
  std::string clock = "auto";
  bool help = false;
  std::string helpText;
  OptionGroups helpGroups;
};

ServerCommand parseServerCommand(const std::vector<std::string>& args);

// -e / --use-event, the same for every command: a bare flag means on; "on", "off" or "yield"
// given (docs/metrics.md "Progress modes").
inline constexpr const char* kUseEventHelp =
    "on | off | yield: on sleeps on completion events instead of busy polling (verbs: completion "
    "channel; socket: epoll; ofi: FI_WAIT_FD); yield busy-polls but calls sched_yield() after "
    "every empty poll, for more ranks than cores (Open MPI's mpi_yield_when_idle); a bare -e "
    "means on";
// The progress mode -e asks for: nullopt when -e is absent, else event (on), busy poll (off) or
// yield. A word that is none of them goes to `host` when it is given and still empty
// (`rdmabench lat -e nodeA`: Boost hands the next word to -e; then event mode), else UsageError
// "--use-event X: must be on, off or yield (a bare -e means on)".
std::optional<transport::ProgressMode> parseUseEvent(
    const boost::program_options::variables_map& vm, std::string* host);

// "8,16,1K": every size of a comma list, in order (K/M/G/T suffixes, common/units.h);
// UsageError from parseSize naming `option` and the bad item.
// With a `limit`, an item above it is refused naming the item as typed and the limit: "--size
// 3G: larger than the limit of 2147483647 bytes (2 GiB - 1)" (`limitText` is the parenthesis).
std::vector<uint64_t> parseSizeList(std::string_view text, std::string_view option,
                                    uint64_t limit = UINT64_MAX, std::string_view limitText = {});

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

// -o FILE as given ("-" is stdout). UsageError for an empty path: `-o ''` (an unset shell
// variable) would otherwise quietly write to stdout.
std::string parseOutputPath(const std::string& text, std::string_view option = "--output");
// --plot and -o naming one file (after resolving "." and ".."): UsageError, one would overwrite
// the other. Either empty: no check.
void checkDistinctOutputs(const std::string& output, const std::string& plot);
// The report format for -o `path` and -f `given` ("" = -f not given): a file name ending in
// .json or .csv (any case) picks json / csv when -f is absent, so `-o x.json` never holds a text
// table; -f naming another format than that suffix is a UsageError naming both (docs/cli.md).
// Any other name, stdout ("" or "-"): `given`, else "table".
std::string formatForOutput(const std::string& given, const std::string& path);
// --full applies to --format osu only: UsageError naming the format otherwise.
void checkFullFormat(bool full, const std::string& format);

// The transport `rdmabench lat` uses when -t is not given: verbs when a device with an active
// port exists, else socket. `note` says why (for the run header); `verbsBuilt` (optional) is
// set to whether the verbs backend is compiled into this binary at all.
std::string defaultTransport(std::string& note, bool* verbsBuilt = nullptr);

// Without -t, after defaultTransport chose `transport` (`note` says why): UsageError naming the
// first of cmd.transportOptions that `transport` does not read (`lat -d mlx5_0` where no RDMA
// device is usable would otherwise measure the socket transport and ignore -d), as `-t socket
// --provider tcp` is refused.
void checkAutoTransport(const ClientCommand& cmd, const std::string& transport,
                        const std::string& note);

// The options of `vm` that some transport does not read (-d, --remote-device, --ib-port, -x,
// --mtu, -R, --provider, --domain, --ep: those the command has), each spelled as typed with its
// value; none given: empty.
std::vector<TransportOption> givenTransportOptions(const boost::program_options::variables_map& vm);

// UsageError naming the first of `given` that `transport` does not read, so it is not silently
// ignored. `autoNote` null: the transport was named with -t ("-d/--device mlx5_0: only for -t
// verbs or -t ofi; -t socket does not use it"); else it was chosen without -t and *autoNote says
// why (the checkAutoTransport wording).
void checkTransportOptions(const std::vector<TransportOption>& given, const std::string& transport,
                           const std::string* autoNote);

}  // namespace rdmabench::cli
