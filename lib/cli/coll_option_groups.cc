// The option descriptions of the N-rank subcommands (coll_options.h collectiveOptionGroups):
// what --help, the man page, docs/cli.md and the bash completion show, and what the parser
// accepts.
#include <boost/program_options.hpp>

#include <string>

#include <fmt/format.h>

#include "cli/bw_method.h"
#include "cli/coll_options.h"
#include "cli/options.h"

namespace rdmabench::cli {

namespace po = boost::program_options;

bool fixedCounts(const std::string& test) {
  return test == "pairs" || test == "congestion";
}

po::options_description rankLaunchOptions(const std::string& title) {
  po::options_description launchOpts(title);
  launchOpts.add_options()("np", po::value<std::string>(), "fork N ranks on this host")(
      "rank", po::value<std::string>(), "this rank (with --world-size and --rendezvous)")(
      "world-size", po::value<std::string>(), "number of ranks")(
      "rendezvous", po::value<std::string>(),
      "auto (default: pmix under a PMIx server), pmix, tcp://HOST[:PORT] or HOST[:PORT] of rank "
      "0's store server, file:DIR (shared FS)")(
      "standalone-rendezvous", po::bool_switch(),
      "the server runs as `rdmabench rendezvous`; rank 0 does not host one")(
      "file-store", po::value<std::string>(), "rendezvous through files in DIR (shared FS)")(
      "run-id", po::value<std::string>(), "job identity (default: derived from the command)")(
      "token", po::value<std::string>(),
      "access token of the rendezvous store (default: $RDMABENCH_TOKEN, else under Slurm the "
      "job's secret, with --np or PMIx a random one; otherwise rank 0 refuses to host the store "
      "without one, --token '' accepts anyone; prefer the variable: options show in ps)");
  return launchOpts;
}

namespace {

std::string commandTitle(const std::string& test) {
  if (test == "barrier") return "Dissemination barrier latency (osu_barrier)";
  if (test == "allreduce")
    return "Allreduce latency and bandwidth (osu_allreduce, IMB Allreduce, nccl-tests "
           "all_reduce_perf)";
  if (test == "ring")
    return "Ring ping-pong: every rank with its right, then left neighbour; flags slow links and "
           "hosts";
  if (test == "congestion")
    return "Congestion impact (GPCNeT): victims run a random-ring latency and bandwidth test "
           "alone, then while aggressors run incast or all-to-all traffic; reports congested / "
           "isolated p50 and p99";
  return "All-pairs fabric map: latency and bandwidth of every ordered pair, in rounds of "
         "disjoint pairs; flags slow nodes and links";
}

// The options every command's "Test" group starts with.
void addCommonTestOptions(const std::string& test, po::options_description& general) {
  const bool fixed = fixedCounts(test);
  general.add_options()("help,h", "show this help")(
      "transport,t", po::value<std::string>(),
      "socket | verbs | ofi (default: verbs when an RDMA device is usable, else socket)")(
      "iters,n", po::value<std::string>(),
      fixed ? (test == "pairs" ? "latency iterations per ordered pair (default 1000)"
                               : "victims' latency iterations per phase (default 1000)")
            : "measured iterations per size (default: OSU's)")(
      "warmup", po::value<std::string>(),
      fixed ? "latency warmup iterations; bandwidth warmup is min(N, 2) (default 100)"
            : "warmup iterations per size (default: OSU's)")(
      "timeout", po::value<std::string>(),
      "longest wait without progress and for other ranks, seconds (default 10)")(
      "clock", po::value<std::string>(),
      "measurement clock of the timed loops auto | tsc | monotonic (default auto: the TSC when "
      "invariant)");
  // No per-size timing for the fixed counts of pairs and congestion.
  if (!fixed)
    general.add_options()(
        "duration,D", po::value<std::string>(),
        "seconds per size: iterations calibrated from the warmup (at least 10), instead of -n")(
        "max-time", po::value<std::string>(),
        "with the default -n, a size runs fewer iterations when its warmup says it would take "
        "longer than this, seconds (IMB's -time; default 10, 0 = off)");
}

void addBarrierOptions(po::options_description& general) {
  general.add_options()("algo", po::value<std::string>(),
                        "dissemination | sharp (in-network, NVIDIA SHARP; default "
                        "dissemination)");
}

void addAllreduceOptions(po::options_description& general) {
  general.add_options()("algo", po::value<std::string>(),
                        "tree | ring | rd | rabenseifner | auto | sharp (default auto: the "
                        "cost model's pick per size, never sharp)")(
      "dtype", po::value<std::string>(), "int32 | int64 | float32 | float64 (default float32)")(
      "op", po::value<std::string>(), "sum | min | max (default sum)")(
      "size,s", po::value<std::string>(),
      "message size, bytes (K/M suffixes); a comma list runs each in turn (8,16)")(
      "msg-sizes,m", po::value<std::string>(), "OSU-style MIN:MAX sweep (default 4:1M)")(
      "check,c", po::bool_switch(), "verify every result against the local computation");
}

void addRingOptions(po::options_description& general) {
  general.add_options()("size,s", po::value<std::string>(),
                        "one message size, bytes, 1..64M (K/M suffixes) (default 1024)")(
      "outlier-k", po::value<std::string>(),
      "outlier threshold: baseline + k x max(MAD, baseline/10) (default 5)")(
      "fail-on-outlier", po::bool_switch(), "exit non-zero when a link is an outlier");
}

void addPairsOptions(po::options_description& general) {
  general.add_options()("lat-size,s", po::value<std::string>(),
                        "latency ping-pong size, bytes, 1..64M (K/M suffixes) (default 8)")(
      "sizes", po::value<std::string>(), "same as --lat-size")(
      "bw-size", po::value<std::string>(), "bandwidth message size, bytes (default 1M)")(
      "window,w", po::value<std::string>(),
      "bandwidth messages in flight per iteration (default 16)")(
      "bw-iters", po::value<std::string>(),
      "measured bandwidth iterations per pair; stream mode sends --bw-iters x 16 messages "
      "(default 10)")("op", po::value<std::string>(), kOpHelp)(
      "mode", po::value<std::string>(), (std::string(kModeHelp) + " (default window)").c_str())(
      "cq-mod", po::value<std::string>(), kCqModHelp)("post-list,l", po::value<std::string>(),
                                                      kPostListHelp)(
      "outlier-k", po::value<std::string>(),
      "outlier threshold: median + k x max(MAD, median/10), nodes first (default 5)")(
      "fail-on-outlier", po::bool_switch(),
      "exit 1 when a node, a link, a cut between two groups of nodes or a bound fails")(
      "max-lat", po::value<std::string>(),
      "a link whose latency median is above this many microseconds is a finding")(
      "min-bw", po::value<std::string>(),
      "a link whose bandwidth is below this many MB/s (10^6 B/s) is a finding")(
      "plot", po::value<std::string>(), "heat map of both matrices to FILE.png or FILE.svg");
}

void addCongestionOptions(po::options_description& general) {
  general.add_options()("victims", po::value<std::string>(),
                        "fraction of the ranks that are victims, the rest aggressors (default "
                        "0.2, as GPCNeT; victims = ceil(fraction x ranks) >= 2, aggressors >= 2)")(
      "pattern", po::value<std::string>(), "aggressor traffic: incast | alltoall (default incast)")(
      "seed", po::value<std::string>(),
      "seed of the victim/aggressor split and the random ring (default 1)")(
      "lat-size,s", po::value<std::string>(), "victims' latency message size (default 8)")(
      "bw-size", po::value<std::string>(),
      "victims' bandwidth message size (default 128K, GPCNeT's 131072 B)")(
      "bw-iters", po::value<std::string>(), "victims' bandwidth iterations (default 100)")(
      "window,w", po::value<std::string>(),
      "messages in flight per neighbour (victims' bandwidth) and per aggressor stream "
      "(default 8)")("agg-size", po::value<std::string>(), "aggressor message size (default 128K)")(
      "phase-time", po::value<std::string>(),
      "longest the isolated or the congested phase may last, seconds (default 300)");
}

// The N-rank commands' launch group: the shared one plus their data-plane address options.
po::options_description launchOptions() {
  po::options_description launchOpts = rankLaunchOptions(
      "Launch and rendezvous (default: PMIx server / mpirun / Slurm / PMI "
      "environment, else one rank)");
  launchOpts.add_options()("bind", po::value<std::string>(),
                           "data-plane address of this rank (default: the "
                           "address that reaches the rendezvous)")(
      "ifname", po::value<std::string>(),
      "interfaces whose IPv4 address the ranks use (data plane; rank 0's store under PMIx), as "
      "NCCL_SOCKET_IFNAME: eth0 / eth,ib (prefixes) / ^docker (not these) / =eth0 (exact) "
      "(default: $RDMABENCH_IFNAME, else the first up non-loopback interface)");
  return launchOpts;
}

po::options_description deviceOptions(const std::string& test) {
  po::options_description device("Device / transport");
  // pairs runs lat / bw's engines: their send queue depth and stream depth (cli/bw_method.h).
  if (test == "pairs")
    device.add_options()(
        "tx-depth", po::value<std::string>(),
        "send queue depth, and stream mode's posts in flight (128 when not given, as bw)");
  device.add_options()("device,d", po::value<std::string>(), "verbs device / ofi domain")(
      "provider", po::value<std::string>(), "libfabric provider (default tcp;ofi_rxm)")(
      "gid-index,x", po::value<std::string>(), "verbs GID index")(
      "ib-port", po::value<std::string>(), "verbs port (default 1)")(
      "use-event,e", po::value<std::string>()->implicit_value("on"),
      (std::string(kUseEventHelp) +
       " (default: yield when more ranks run on this host than it has cores, else off)")
          .c_str())(
      "cpu", po::value<std::string>(),
      "bind the ranks of each host to these CPUs, one CPU per rank in local rank order "
      "(cpuset list: 0-3,8)")("numa", po::value<std::string>(),
                              "auto | N | off: bind every rank to the device's NUMA node (auto, "
                              "keeps a launcher's binding), to node N, or not (default auto)");
  return device;
}

po::options_description outputOptions(const std::string& test) {
  po::options_description output("Output");
  output.add_options()("format,f", po::value<std::string>(),
                       fixedCounts(test) ? "table | json | csv" : "table | json | csv | osu | imb")(
      "output,o", po::value<std::string>(), "write the report (rank 0) to FILE")(
      "quiet", po::bool_switch(), "no warning lines on stderr (errors are always printed)");
  if (!fixedCounts(test))
    output.add_options()("full", po::bool_switch(),
                         "OSU -f columns (min, max, iterations) in --format osu");
  return output;
}

}  // namespace

OptionGroups collectiveOptionGroups(const std::string& test) {
  po::options_description general(
      fmt::format("Usage: rdmabench {} [options]\n{}.\n\nTest", test, commandTitle(test)));
  addCommonTestOptions(test, general);
  if (test == "barrier") addBarrierOptions(general);
  if (test == "allreduce") addAllreduceOptions(general);
  if (test == "ring") addRingOptions(general);
  if (test == "pairs") addPairsOptions(general);
  if (test == "congestion") addCongestionOptions(general);
  return OptionGroups{general, launchOptions(), deviceOptions(test), outputOptions(test)};
}

}  // namespace rdmabench::cli
