#pragma once
// Command-line parsing of the N-rank subcommands (`barrier`, `allreduce`, `ring`, `pairs`,
// `congestion`), next to the point-to-point ones in cli/options.h so it is unit-tested
// (tests/unit/coll_options_test.cc).
// Every bad value is a one-line UsageError naming the option, the value and the accepted range;
// docs/cli.md and docs/collectives.md document every option.

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cli/help_gen.h"
#include "cli/options.h"
#include "collective/params.h"
#include "launch/launch.h"

namespace rdmabench::cli {

// One N-rank run as the command line asked for it.
struct CollCommand {
  // What each rank runs (sizes in bytes, timeouts in ms): one struct per command.
  std::variant<collective::CollectiveParams, collective::PairsParams, collective::CongestionParams>
      params;
  // The part every command has (transport, device, placement, iterations, timeout).
  collective::RankParams& common() {
    return std::visit([](auto& p) -> collective::RankParams& { return p; }, params);
  }
  const collective::RankParams& common() const {
    return std::visit([](const auto& p) -> const collective::RankParams& { return p; }, params);
  }
  // The command's own struct; std::bad_variant_access for another command's.
  collective::CollectiveParams& collectiveParams() {
    return std::get<collective::CollectiveParams>(params);
  }
  collective::PairsParams& pairsParams() { return std::get<collective::PairsParams>(params); }
  collective::CongestionParams& congestionParams() {
    return std::get<collective::CongestionParams>(params);
  }
  launch::LaunchOptions launch;  // --np / --rank / --world-size / --rendezvous / ...
  std::string format = "table";  // report::formatNames() except perftest
  std::string outputPath;        // -o FILE (rank 0 writes it); empty = stdout
  bool full = false;             // --full: OSU -f columns
  bool quiet = false;            // --quiet: no warning lines on stderr
  // --clock auto | tsc | monotonic: the measurement clock of every rank's timed loops
  // (common/measure_clock.h), selected before any rank forks or measures.
  std::string clock = "auto";
  bool failOnOutlier = false;  // ring / pairs --fail-on-outlier
  std::string plotPath;        // pairs --plot FILE.png|FILE.svg (rank 0 writes it)
  std::string bind;            // --bind: this rank's data-plane address
  // --ifname, else $RDMABENCH_IFNAME (launch/ifname.h, NCCL_SOCKET_IFNAME syntax): the interface
  // whose IPv4 address is this rank's data-plane address (unless --bind) and rank 0's published
  // store address under PMIx. "" = the default choice.
  std::string ifname;
  // Warnings of the parse (allreduce sizes rounded to whole elements): printed once, by the
  // launcher or rank 0, as "rdmabench: warning: ...".
  std::vector<std::string> notes;
  bool transportGiven = false;  // -t given; else the default rule (cli::defaultTransport)
  // Without -t: the transport-specific options given ("-d/--device mlx5_0"), for
  // checkTransportOptions once the transport is chosen (with -t they are checked at parse time).
  std::vector<TransportOption> transportOptions;
  // -e / --use-event: the progress mode asked for; nullopt = automatic (yield when more ranks
  // than cores share this host, else busy poll: collective::chooseProgress).
  std::optional<transport::ProgressMode> progress;
  bool help = false;  // --help: helpText holds the usage, nothing else set
  std::string helpText;
  OptionGroups helpGroups;  // with help: the descriptions helpText shows (cli/help_gen.h)
};

// The option groups of `test` ("barrier", "allreduce", "ring", "pairs", "congestion"), in the
// order --help shows them: Test (the command's own options), Launch and rendezvous, Device /
// transport, Output (cli/coll_option_groups.cc).
OptionGroups collectiveOptionGroups(const std::string& test);

// The launch options every N-rank command (and `noise`) has, under the heading `title`: --np,
// --rank, --world-size, --rendezvous, --standalone-rendezvous, --file-store, --run-id, --token.
// The collectives add --bind and --ifname; noise its own --ifname.
boost::program_options::options_description rankLaunchOptions(const std::string& title);

// Reads rankLaunchOptions' values from `vm` into `l` (not runDescription / defaultRunId).
// UsageError naming the option for a number out of range.
void parseRankLaunch(const boost::program_options::variables_map& vm, launch::LaunchOptions& l);

// pairs and congestion: fixed counts per measurement (-n, --bw-iters; no -D / --max-time) and
// their own layouts (table, json, csv).
bool fixedCounts(const std::string& test);

// `test` is "barrier", "allreduce", "ring", "pairs" or "congestion"; `args` excludes the program
// and subcommand names. UsageError for any bad option or value (also --algo sharp in a build
// without SHARP). Thread-safe (no shared state).
CollCommand parseCollectiveCommand(const std::string& test, const std::vector<std::string>& args);

// A run id shared by every rank of one job: FNV-1a (64-bit) of `description` (LaunchOptions::
// runDescription: the subcommand and the options that define the measurement, without per-rank
// and per-host ones such as --rank, --bind, --ifname, --cpu, --device, nor --timeout and the
// output options), printed "cmd-<16 hex digits>". Two different jobs on one rendezvous port then
// get different ids and the store refuses the second, naming the differing descriptions.
std::string defaultRunId(const std::string& description);

// Usage error (exit 2) for an N-rank command that would run a world of 1 rank by default: no
// launcher detected (info.source "single") and no --np. --np 1, --world-size 1 or a launcher's
// world of 1 are allowed. The message names --np, srun and mpirun.
void requireWorld(const std::string& test, const CollCommand& cmd, const launch::RankInfo& info);

}  // namespace rdmabench::cli
