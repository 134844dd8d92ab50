// Command-line parsing of the N-rank subcommands (cli/coll_options.h): defaults, the options
// each subcommand takes, launcher options, and one-line errors naming option, value and range.
#include "cli/coll_options.h"

#include <gtest/gtest.h>

#include <variant>

#include "common/error.h"

namespace rdmabench::cli {
namespace {

std::string usageError(const std::string& test, const std::vector<std::string>& args) {
  try {
    parseCollectiveCommand(test, args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(CollOptions, AllreduceDefaultsAreOsuSweep) {
  CollCommand c = parseCollectiveCommand("allreduce", {});
  EXPECT_EQ(c.collectiveParams().test, report::Test::kAllreduce);
  EXPECT_EQ(c.collectiveParams().algo, "auto");  // the command's default (docs/cli.md)
  EXPECT_EQ(c.common().transport, "socket");
  EXPECT_EQ(c.collectiveParams().sizes.front(), 4u);  // one float32 element
  EXPECT_EQ(c.collectiveParams().sizes.back(), 1u << 20);
  EXPECT_EQ(c.collectiveParams().iterations, 0u);  // OSU's defaults per size
  EXPECT_FALSE(c.collectiveParams().check);
  EXPECT_EQ(c.format, "table");
  EXPECT_FALSE(c.progress.has_value());  // automatic (collective::chooseProgress)
}

// osu_allreduce: count = size / element size, sizes below one element skipped. Rows are never
// labelled with more bytes than are reduced, and a 0 B allreduce never runs (newcomer trial).
TEST(CollOptions, AllreduceSizesRoundToWholeElementsAsOsu) {
  CollCommand c = parseCollectiveCommand("allreduce", {"-s", "2,6,8,9"});
  EXPECT_EQ(c.collectiveParams().sizes, (std::vector<uint64_t>{4, 8}));
  ASSERT_EQ(c.notes.size(), 2u);
  EXPECT_EQ(c.notes[0],
            "--size 2: below one float32 element (4 B): skipped, as osu_allreduce does");
  EXPECT_EQ(c.notes[1],
            "--size: not a whole number of float32 elements (4 B): rounded down to 6 -> 4, 9 -> "
            "8 (count = size / 4, as osu_allreduce)");
  EXPECT_NE(usageError("allreduce", {"-s", "3", "--dtype", "float64"})
                .find("--size 3: below one float64 element (8 B): nothing to reduce"),
            std::string::npos);
  EXPECT_NE(usageError("allreduce", {"-m", "0:2"}).find("--msg-sizes 0,1,2: below one float32"),
            std::string::npos);
  EXPECT_TRUE(parseCollectiveCommand("allreduce", {"-m", "4:64"}).notes.empty());
  EXPECT_EQ(usageError("allreduce", {"-m", "0:8G"}),
            "-m/--msg-sizes 0:8G: MAX 8589934592 bytes is above the limit of 1073741824 bytes "
            "(1G per rank)");
}

// --quiet on every N-rank command, as on lat/bw (newcomer trial); not part of the run id.
TEST(CollOptions, QuietOnEveryCommand) {
  for (const char* t : {"barrier", "allreduce", "ring", "pairs", "congestion"}) {
    EXPECT_TRUE(parseCollectiveCommand(t, {"--quiet"}).quiet) << t;
    EXPECT_FALSE(parseCollectiveCommand(t, {}).quiet) << t;
  }
}

// Newcomer trial: ring --np 1 printed an empty table; -o '' wrote to stdout; --plot over -o.
TEST(CollOptions, OutputMistakesAreUsageErrors) {
  EXPECT_NE(usageError("ring", {"--np", "1"}).find("--np 1: ring measures"), std::string::npos);
  EXPECT_NE(usageError("barrier", {"-o", ""}).find("--output '': empty file name"),
            std::string::npos);
  EXPECT_NE(usageError("pairs", {"-o", "x.svg", "--plot", "./x.svg"})
                .find("--plot ./x.svg and --output x.svg: the same file"),
            std::string::npos);
  EXPECT_NE(usageError("allreduce", {"--full", "-f", "imb"}).find("--full: adds OSU's"),
            std::string::npos);
  // Ring's osu layout has no -f columns: --full was accepted without effect.
  EXPECT_EQ(usageError("ring", {"-f", "osu", "--full"}).substr(0, 40),
            "--full with ring: OSU's -f columns (min,");
  EXPECT_EQ(usageError("barrier", {"-f", "osu", "--full"}), "");
}

// Newcomer trial: -t socket -d X was accepted and -d ignored; without -t the options are kept
// for the check against the transport chosen at run time (tools/rdmabench/collectives.cc).
TEST(CollOptions, TransportOptionsTheTransportDoesNotReadAreRefused) {
  for (const char* t : {"barrier", "allreduce", "ring", "pairs", "congestion"}) {
    EXPECT_EQ(usageError(t, {"-t", "socket", "-d", "mlx5_0"}),
              "-d/--device mlx5_0: only for -t verbs or -t ofi; -t socket does not use it")
        << t;
    EXPECT_EQ(usageError(t, {"-t", "ofi", "-x", "3"}),
              "-x/--gid-index 3: only for -t verbs; -t ofi does not use it")
        << t;
    EXPECT_EQ(usageError(t, {"-t", "verbs", "--provider", "tcp"}),
              "--provider tcp: only for -t ofi; -t verbs does not use it")
        << t;
    EXPECT_EQ(usageError(t, {"-t", "socket", "--ib-port", "2"}),
              "--ib-port 2: only for -t verbs; -t socket does not use it")
        << t;
    EXPECT_EQ(usageError(t, {"-t", "ofi", "-d", "lo", "--provider", "tcp"}), "") << t;
  }
  CollCommand c = parseCollectiveCommand("barrier", {"-d", "mlx5_0", "--ib-port", "2"});
  ASSERT_EQ(c.transportOptions.size(), 2u);
  EXPECT_EQ(c.transportOptions[0].spelling, "-d/--device mlx5_0");
  EXPECT_THROW(checkTransportOptions(c.transportOptions, "socket", &c.common().transportNote),
               UsageError);
  EXPECT_NO_THROW(checkTransportOptions(c.transportOptions, "verbs", &c.common().transportNote));
  // Sizes are named as typed (it read "--size 2147483648").
  EXPECT_EQ(usageError("allreduce", {"-s", "8,2G"}),
            "--size 2G: larger than the limit of 1073741824 bytes (1G per rank)");
  EXPECT_EQ(usageError("ring", {"-s", "65M"}), "--size 65M: out of range 1..64M");
}

TEST(CollOptions, ValuesReachTheirFields) {
  CollCommand c = parseCollectiveCommand(
      "allreduce",
      {"--algo", "ring",     "--dtype",    "int64",      "-m",     "64:4K",       "-n",
       "7",      "--warmup", "2",          "--check",    "--np",   "3",           "--timeout",
       "2.5",    "-f",       "json",       "-o",         "x.json", "--use-event", "on",
       "-t",     "ofi",      "--provider", "tcp;ofi_rxm"});
  EXPECT_EQ(c.collectiveParams().algo, "ring");
  EXPECT_EQ(c.collectiveParams().dtype, collective::DType::kInt64);
  EXPECT_EQ(c.collectiveParams().sizes,
            (std::vector<uint64_t>{64, 128, 256, 512, 1024, 2048, 4096}));
  EXPECT_EQ(c.collectiveParams().iterations, 7u);
  EXPECT_EQ(c.collectiveParams().warmup, 2);
  EXPECT_TRUE(c.collectiveParams().check);
  EXPECT_EQ(c.launch.np, 3);
  EXPECT_EQ(c.collectiveParams().timeoutMs, 2500);
  EXPECT_EQ(c.format, "json");
  EXPECT_EQ(c.outputPath, "x.json");
  EXPECT_EQ(c.progress, transport::ProgressMode::kEvent);
  EXPECT_EQ(c.common().transport, "ofi");
  EXPECT_EQ(c.collectiveParams().device.provider, "tcp;ofi_rxm");
  CollCommand r = parseCollectiveCommand("ring", {"-s", "4K", "--fail-on-outlier"});
  EXPECT_EQ(r.collectiveParams().ringBytes, 4096u);
  EXPECT_TRUE(r.failOnOutlier);
  CollCommand b = parseCollectiveCommand("barrier", {"-D", "0.5"});
  EXPECT_EQ(b.collectiveParams().algo, "dissemination");
  EXPECT_DOUBLE_EQ(b.collectiveParams().durationSec, 0.5);
}

TEST(CollOptions, BadValuesAreOneLineErrorsNamingTheOption) {
  EXPECT_NE(usageError("allreduce", {"--algo", "bogus"}).find("--algo bogus: unknown"),
            std::string::npos);
  EXPECT_NE(usageError("barrier", {"--algo", "tree"}).find("--algo tree: unknown"),
            std::string::npos);
  EXPECT_NE(usageError("allreduce", {"-n", "0"}).find("--iters"), std::string::npos);
  EXPECT_NE(usageError("allreduce", {"-s", "4K", "-m", "4:8"}).find("--size and --msg-sizes"),
            std::string::npos);
  EXPECT_NE(usageError("allreduce", {"-s", "2G"}).find("--size 2G: larger than the limit"),
            std::string::npos);
  EXPECT_NE(usageError("barrier", {"-D", "1", "-n", "5"}).find("--duration and --iters"),
            std::string::npos);
  EXPECT_NE(usageError("ring", {"-s", "0"}).find("out of range 1..64M"), std::string::npos);
  EXPECT_NE(usageError("barrier", {"-f", "perftest"}).find("perftest has no collective layout"),
            std::string::npos);
  EXPECT_NE(usageError("allreduce", {"-t", "carrier-pigeon"}).find("--transport carrier-pigeon"),
            std::string::npos);
  EXPECT_NE(usageError("allreduce", {"--use-event", "maybe"}).find("--use-event maybe"),
            std::string::npos);
  EXPECT_NE(usageError("allreduce", {"--np", "0"}).find("--np"), std::string::npos);
  EXPECT_NE(
      usageError("barrier", {"--dtype", "int32"}).find("unknown option '--dtype' for 'barrier'"),
      std::string::npos);  // allreduce-only option
  for (const char* test : {"barrier", "allreduce", "ring"})
    EXPECT_EQ(usageError(test, {"--timeout", "0"}).find('\n'), std::string::npos) << test;
}

// --clock on every N-rank command (issue #26): the value reaches CollCommand::clock, the default
// is auto, and a bad value is the one-line error of lat/bw naming option, value and choices.
TEST(CollOptions, ClockOnEveryCommand) {
  for (const std::string test : {"barrier", "allreduce", "ring", "pairs", "congestion"}) {
    EXPECT_EQ(parseCollectiveCommand(test, {}).clock, "auto") << test;
    for (const std::string clock : {"auto", "tsc", "monotonic"})
      EXPECT_EQ(parseCollectiveCommand(test, {"--clock", clock}).clock, clock) << test;
    EXPECT_EQ(usageError(test, {"--clock", "bogus"}),
              "--clock bogus: unknown clock (valid: auto, tsc, monotonic)")
        << test;
  }
}

// Ranks started by hand with different clocks would time different things: --clock is part of the
// run description, so their run ids differ and the store refuses the second job.
TEST(CollOptions, ClockDefinesTheRunId) {
  EXPECT_NE(parseCollectiveCommand("barrier", {"--clock", "tsc"}).launch.defaultRunId,
            parseCollectiveCommand("barrier", {"--clock", "monotonic"}).launch.defaultRunId);
}

TEST(CollOptions, PairsValuesAndErrors) {
  CollCommand d = parseCollectiveCommand("pairs", {});
  EXPECT_EQ(d.pairsParams().latBytes, 8u);
  EXPECT_EQ(d.pairsParams().bwBytes, 1u << 20);
  EXPECT_EQ(d.pairsParams().window, 16u);
  EXPECT_FALSE(d.failOnOutlier);
  CollCommand c = parseCollectiveCommand(
      "pairs", {"-s", "64", "--bw-size", "256K", "-w", "8", "--bw-iters", "3", "--outlier-k", "7",
                "--fail-on-outlier", "--plot", "m.SVG", "-f", "csv"});
  EXPECT_EQ(c.pairsParams().latBytes, 64u);
  EXPECT_EQ(c.pairsParams().bwBytes, 256u << 10);
  EXPECT_EQ(c.pairsParams().window, 8u);
  EXPECT_EQ(c.pairsParams().bwIters, 3u);
  EXPECT_EQ(c.pairsParams().outlierK, 7);
  EXPECT_TRUE(c.failOnOutlier);
  EXPECT_EQ(c.plotPath, "m.SVG");
  EXPECT_EQ(c.pairsParams().bounds.maxLatUs, 0);  // no bound unless given
  CollCommand bounds = parseCollectiveCommand("pairs", {"--max-lat", "50", "--min-bw", "9000.5"});
  EXPECT_DOUBLE_EQ(bounds.pairsParams().bounds.maxLatUs, 50);
  EXPECT_DOUBLE_EQ(bounds.pairsParams().bounds.minBwMBs, 9000.5);
  EXPECT_EQ(parseCollectiveCommand("pairs", {"--sizes", "1K"}).pairsParams().latBytes, 1024u);
  EXPECT_EQ(usageError("pairs", {"--bw-size", "0"}), "--bw-size 0: out of range 1..256M");
  EXPECT_EQ(usageError("pairs", {"-s", "65M"}), "--lat-size 65M: out of range 1..64M");
  EXPECT_EQ(usageError("pairs", {"--plot", "m.pdf"}), "--plot m.pdf: must end in .png or .svg");
  EXPECT_EQ(usageError("pairs", {"-f", "osu"}),
            "--format osu: no pairs layout (valid: table, json, csv)");
  EXPECT_NE(usageError("pairs", {"-w", "0"}).find("--window"), std::string::npos);
  EXPECT_NE(usageError("pairs", {"-s", "8", "--sizes", "8"}).find("only one"), std::string::npos);
  EXPECT_NE(usageError("ring", {"--bw-size", "1K"}), "");  // pairs-only option
  EXPECT_EQ(usageError("pairs", {"--np", "1"}),
            "--np 1: pairs measures every pair of ranks and needs at least 2");
}

TEST(CollOptions, CongestionValuesAndErrors) {
  CollCommand d = parseCollectiveCommand("congestion", {});
  EXPECT_DOUBLE_EQ(d.congestionParams().victims, 0.2);
  EXPECT_EQ(d.congestionParams().pattern, collective::CongestionPattern::kIncast);
  EXPECT_EQ(d.congestionParams().seed, 1u);
  EXPECT_EQ(d.congestionParams().latBytes, 8u);
  EXPECT_EQ(d.congestionParams().bwBytes, 128u << 10);
  EXPECT_EQ(d.congestionParams().window, 8u);
  CollCommand c = parseCollectiveCommand(
      "congestion",
      {"--victims",    "0.5",        "--pattern", "alltoall", "--seed", "42",         "--bw-size",
       "64K",          "--agg-size", "1M",        "-w",       "2",      "--bw-iters", "7",
       "--phase-time", "30",         "--np",      "4",        "-f",     "csv"});
  EXPECT_DOUBLE_EQ(c.congestionParams().victims, 0.5);
  EXPECT_EQ(c.congestionParams().pattern, collective::CongestionPattern::kAlltoall);
  EXPECT_EQ(c.congestionParams().seed, 42u);
  EXPECT_EQ(c.congestionParams().bwBytes, 64u << 10);
  EXPECT_EQ(c.congestionParams().aggBytes, 1u << 20);
  EXPECT_EQ(c.congestionParams().window, 2u);
  EXPECT_EQ(c.congestionParams().bwIters, 7u);
  EXPECT_DOUBLE_EQ(c.congestionParams().phaseSec, 30);
  EXPECT_EQ(c.format, "csv");
  // pairs keeps its own window default.
  EXPECT_EQ(parseCollectiveCommand("pairs", {}).pairsParams().window, 16u);
  EXPECT_NE(usageError("congestion", {"--np", "4"}).find("at least 2 victims and 2 aggressors"),
            std::string::npos);
  EXPECT_NE(usageError("congestion", {"--victims", "0"}).find("--victims 0"), std::string::npos);
  // Neither is in seconds; a word is not a number, not "out of range".
  EXPECT_EQ(usageError("congestion", {"--victims", "2"}), "--victims 2: out of range 0..1");
  EXPECT_EQ(usageError("congestion", {"--victims", "abc"}),
            "--victims 'abc': not a number (expected 0..1)");
  EXPECT_EQ(usageError("pairs", {"--outlier-k", "-1"}), "--outlier-k -1: out of range 0..1000");
  EXPECT_EQ(usageError("pairs", {"--outlier-k", "nan"}),
            "--outlier-k 'nan': not a number (expected 0..1000)");
  EXPECT_EQ(usageError("pairs", {"--max-lat", "0"}),
            "--max-lat 0: out of range 0.001..1000000000 microseconds");
  EXPECT_EQ(usageError("pairs", {"--min-bw", "fast"}),
            "--min-bw 'fast': not a number (expected 0.001..1000000000 MB/s)");
  EXPECT_EQ(usageError("congestion", {"--phase-time", "x"}),
            "--phase-time 'x': not a number (expected 1..86400 seconds)");
  // The largest seed is a seed, not "out of range".
  EXPECT_EQ(parseCollectiveCommand("congestion", {"--seed", "18446744073709551615"})
                .congestionParams()
                .seed,
            UINT64_MAX);
  EXPECT_NE(usageError("congestion", {"--seed", "18446744073709551616"}).find("out of range"),
            std::string::npos);
  EXPECT_NE(usageError("congestion", {"--pattern", "x"}).find("--pattern x: unknown"),
            std::string::npos);
  EXPECT_NE(usageError("congestion", {"--agg-size", "0"}).find("--agg-size 0: out of range"),
            std::string::npos);
  EXPECT_NE(usageError("congestion", {"-f", "imb"}).find("no congestion layout"),
            std::string::npos);
  EXPECT_NE(usageError("congestion", {"-D", "1"}).find("-D"), std::string::npos);
  // Fixed counts: neither -D nor --max-time is an option of pairs or congestion.
  EXPECT_NE(usageError("congestion", {"--max-time", "5"}).find("--max-time"), std::string::npos);
  EXPECT_NE(usageError("pairs", {"--max-time", "5"}).find("--max-time"), std::string::npos);
}

// Each command gets its own parameter struct, with only its own fields.
TEST(CollOptions, OneParameterStructPerCommand) {
  for (const char* test : {"barrier", "allreduce", "ring"}) {
    CollCommand c = parseCollectiveCommand(test, {});
    ASSERT_TRUE(std::holds_alternative<collective::CollectiveParams>(c.params)) << test;
    EXPECT_EQ(toString(c.common().test), std::string(test));
  }
  CollCommand p = parseCollectiveCommand("pairs", {"-n", "5"});
  ASSERT_TRUE(std::holds_alternative<collective::PairsParams>(p.params));
  EXPECT_EQ(p.common().test, report::Test::kPairs);
  EXPECT_EQ(p.common().iterations, 5u);
  CollCommand c = parseCollectiveCommand("congestion", {"--timeout", "3"});
  ASSERT_TRUE(std::holds_alternative<collective::CongestionParams>(c.params));
  EXPECT_EQ(c.common().test, report::Test::kCongestion);
  EXPECT_EQ(c.common().timeoutMs, 3000);
  EXPECT_THROW(c.pairsParams(), std::bad_variant_access);
}

TEST(CollOptions, HelpListsEveryGroup) {
  CollCommand c = parseCollectiveCommand("allreduce", {"--help"});
  EXPECT_TRUE(c.help);
  for (const char* s : {"--algo", "--np", "--rendezvous", "--provider", "--format"})
    EXPECT_NE(c.helpText.find(s), std::string::npos) << s;
}

// Issue 22 item 4: ranks started by hand on several hosts differ in per-rank and per-host
// options (--bind, --ifname, --cpu, --device) and output options; they must share one run id.
TEST(CollOptions, RunIdIsTheMeasurementOnly) {
  auto id = [](const std::string& test, const std::vector<std::string>& args) {
    return parseCollectiveCommand(test, args).launch.defaultRunId;
  };
  const std::string a = id("barrier", {"--world-size", "2", "--rank", "0", "-n", "5"});
  EXPECT_EQ(a, id("barrier", {"--world-size", "2", "--rank", "1", "-n", "5"}));
  EXPECT_EQ(a, id("barrier", {"--world-size", "2", "--rank=1", "--iters=5"}));
  EXPECT_EQ(a,
            id("barrier",
               {"--rank",    "1",        "-n",        "5",    "--world-size", "2",
                "--bind",    "10.0.0.2", "--cpu",     "3",    "--numa",       "off",
                "--timeout", "30",       "-f",        "json", "-o",           "/tmp/x.json",
                "-d",        "mlx5_1",   "--ib-port", "2",    "--rendezvous", "tcp://10.0.0.1:1234",
                "--token",   "t"}));
  EXPECT_EQ(a, id("barrier", {"--world-size", "2", "-n", "5", "--ifname", "eth0"}));
  EXPECT_NE(a, id("barrier", {"--world-size", "3", "--rank", "0", "-n", "5"}));
  EXPECT_NE(a, id("barrier", {"--world-size", "2", "--rank", "0", "-n", "6"}));
  EXPECT_NE(a, id("allreduce", {"--world-size", "2", "--rank", "0", "-n", "5"}));
  EXPECT_NE(a, id("barrier", {"--world-size", "2", "-n", "5", "-t", "ofi"}));
  EXPECT_EQ(a.rfind("cmd-", 0), 0u);
  EXPECT_EQ(a.size(), 4u + 16u);
  // What the id hashes travels in the join, so a refusal names both measurements.
  EXPECT_EQ(parseCollectiveCommand("allreduce", {"-m", "4:64", "--check", "--bind", "x"})
                .launch.runDescription,
            "allreduce --check --msg-sizes=4:64");
  EXPECT_EQ(defaultRunId("barrier"), defaultRunId("barrier"));
  EXPECT_NE(defaultRunId("barrier"), defaultRunId("barrier "));
}

// Issue 22 item 6: an N-rank command without a launcher and without --np is a usage error.
TEST(CollOptions, WorldOfOneNeedsExplicitNp) {
  launch::RankInfo single;
  single.source = "single";
  CollCommand none = parseCollectiveCommand("allreduce", {});
  try {
    requireWorld("allreduce", none, single);
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    for (const char* s : {"allreduce", "--np", "srun", "mpirun", "--np 1"})
      EXPECT_NE(m.find(s), std::string::npos) << s << " in " << m;
  }
  CollCommand one = parseCollectiveCommand("allreduce", {"--np", "1"});
  launch::RankInfo np = single;
  np.source = "np";
  EXPECT_NO_THROW(requireWorld("allreduce", one, np));
  launch::RankInfo slurm = single;
  slurm.source = "slurm";  // srun -n 1: the launcher said so
  EXPECT_NO_THROW(requireWorld("barrier", none, slurm));
  launch::RankInfo explicitOne = single;
  explicitOne.source = "explicit";  // --rank 0 --world-size 1
  EXPECT_NO_THROW(requireWorld("barrier", none, explicitOne));
  // ring and pairs of one rank measure nothing (an empty table): a usage error naming the
  // minimum, under any launcher (newcomer trial).
  try {
    requireWorld("ring", none, explicitOne);
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "ring: a world of 1 rank (explicit): ring needs at least 2 ranks");
  }
}

// Issue 22 item 5: no -t means the default rule (verbs where usable, else socket), decided by
// the command (cli::defaultTransport); -t is kept.
TEST(CollOptions, TransportGivenOrDefaultRule) {
  EXPECT_FALSE(parseCollectiveCommand("pairs", {}).transportGiven);
  CollCommand t = parseCollectiveCommand("pairs", {"-t", "socket"});
  EXPECT_TRUE(t.transportGiven);
  EXPECT_EQ(t.common().transport, "socket");
}

}  // namespace
}  // namespace rdmabench::cli
