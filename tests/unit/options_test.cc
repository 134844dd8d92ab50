// Command-line parsing: defaults, size modes and one-line errors naming option and range.
#include "cli/options.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace rdmabench::cli {
namespace {

std::string usageError(const std::string& test, const std::vector<std::string>& args) {
  try {
    parseClientCommand(test, args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ClientOptions, DefaultsAreLoopbackSweeps) {
  ClientCommand c = parseClientCommand("lat", {});
  EXPECT_TRUE(c.client.host.empty());
  EXPECT_FALSE(c.transportGiven);
  EXPECT_EQ(c.client.spec.sizes.front(), 0u);
  EXPECT_EQ(c.client.spec.sizes.back(), 65536u);
  EXPECT_EQ(c.client.port, 18515);
  ClientCommand b = parseClientCommand("bw", {"nodeA", "-t", "socket", "-s", "64K", "-w", "16"});
  EXPECT_EQ(b.client.host, "nodeA");
  EXPECT_EQ(b.client.spec.sizes, std::vector<uint64_t>{65536});
  EXPECT_EQ(b.client.spec.window, 16u);
}

// -f perftest without -n runs perftest's counts (perftest_parameters.c DEF_ITERS 1000,
// DEF_ITERS_WB 5000 for ib_write_bw), window mode in windows; -n, -D and other formats keep
// theirs.
TEST(ClientOptions, PerftestFormatUsesPerftestCounts) {
  auto iterations = [](const std::string& test, std::vector<std::string> args) {
    return parseClientCommand(test, args).client.spec.iterations;
  };
  EXPECT_EQ(iterations("lat", {"-f", "perftest"}), 1000u);
  EXPECT_EQ(iterations("bw", {"-f", "perftest", "--mode", "stream"}), 1000u);
  EXPECT_EQ(iterations("bw", {"-f", "perftest", "--mode", "stream", "--op", "write"}), 5000u);
  EXPECT_EQ(iterations("bw", {"-f", "perftest"}), 16u);  // 1000 messages in windows of 64
  EXPECT_EQ(iterations("bw", {"-f", "perftest", "--op", "write", "-w", "100"}), 50u);
  EXPECT_EQ(iterations("lat", {"-f", "perftest", "-n", "7"}), 7u);
  EXPECT_EQ(iterations("lat", {"-f", "perftest", "-D", "1"}), 0u);
  EXPECT_EQ(iterations("lat", {"-f", "osu"}), 0u);  // automatic: OSU's by size
  EXPECT_EQ(iterations("bw", {}), 0u);
}

TEST(ClientOptions, SizeModes) {
  auto c = parseClientCommand("lat", {"-m", "2:128"});
  EXPECT_EQ(c.client.spec.sizes, (std::vector<uint64_t>{2, 4, 8, 16, 32, 64, 128}));
  c = parseClientCommand("lat", {"-a"});
  EXPECT_EQ(c.client.spec.sizes.front(), 0u);
  EXPECT_EQ(c.client.spec.sizes.back(), 4u << 20);
  c = parseClientCommand("lat", {"-a", "--op", "write"});
  EXPECT_EQ(c.client.spec.sizes.front(), 1u);
}

TEST(ClientOptions, BadValuesNameOptionAndRange) {
  EXPECT_NE(usageError("lat", {"-n", "0"}).find("--iters 0: out of range 1.."), std::string::npos);
  EXPECT_NE(usageError("lat", {"-n", "-5"}).find("--iters"), std::string::npos);
  EXPECT_NE(usageError("lat", {"-m", "10:2"}).find("MIN 10 is larger than MAX 2"),
            std::string::npos);
  // -m names itself, the value typed and the limit (it said "--size 2147483648").
  EXPECT_EQ(usageError("lat", {"-m", "0:8G"}),
            "-m/--msg-sizes 0:8G: MAX 8589934592 bytes is above the limit of 2147483647 bytes "
            "(2 GiB - 1)");
  EXPECT_EQ(usageError("bw", {"-m", "2G"}).substr(0, 40),
            "-m/--msg-sizes 2G: MAX 2147483648 bytes ");
  EXPECT_EQ(usageError("lat", {"-m", "0:2147483647"}), "");
  EXPECT_NE(usageError("lat", {"-t", "carrier-pigeon"}).find("--transport carrier-pigeon"),
            std::string::npos);
  EXPECT_NE(usageError("bw", {"-w", "100000"}).find("--window 100000: out of range 1..4096"),
            std::string::npos);
  EXPECT_NE(usageError("lat", {"--mtu", "1500"}).find("--mtu 1500"), std::string::npos);
  EXPECT_NE(usageError("lat", {"--bogus"}).find("unknown option '--bogus' for 'lat'"),
            std::string::npos);
  EXPECT_NE(usageError("lat", {"-s", "4", "-a"}).find("only one"), std::string::npos);
  EXPECT_NE(usageError("lat", {"-f", "xml"}).find("--format xml"), std::string::npos);
  EXPECT_NE(usageError("lat", {"-s", "5G"}).find("--size"), std::string::npos);
  // A typo is "not a whole number", not "out of range"; a too-large size states the limit.
  EXPECT_NE(
      usageError("lat", {"-n", "1e9x"}).find("--iters '1e9x': not a whole number (expected 1.."),
      std::string::npos);
  EXPECT_NE(usageError("lat", {"-n", "99999999999999999999"}).find("out of range 1.."),
            std::string::npos);
  EXPECT_NE(usageError("lat", {"-s", "10T"}).find("larger than the limit of"), std::string::npos);
  // The size as typed, not in bytes (newcomer trial: "--size 3221225472"), also in a list.
  EXPECT_EQ(usageError("lat", {"-s", "3G"}),
            "--size 3G: larger than the limit of 2147483647 bytes (2 GiB - 1)");
  EXPECT_EQ(usageError("bw", {"-s", "8,2GiB"}),
            "--size 2GiB: larger than the limit of 2147483647 bytes (2 GiB - 1)");
}

// Newcomer trial: `-o ''` wrote to stdout and --full without -f osu did nothing, silently.
TEST(ClientOptions, EmptyOutputAndFullWithoutOsuAreUsageErrors) {
  EXPECT_NE(usageError("lat", {"-o", ""}).find("--output '': empty file name"), std::string::npos);
  EXPECT_NE(usageError("bw", {"--full"})
                .find("--full: adds OSU's -f columns and applies only to "
                      "--format osu (not --format table)"),
            std::string::npos);
  EXPECT_EQ(usageError("lat", {"-f", "osu", "--full", "-o", "-"}), "");
}

// Issue 13: --gbits and --full where the report has no place for them were accepted without
// effect; each is refused naming both options, and accepted where it changes the report.
TEST(ClientOptions, ReportOptionsWithoutEffectAreUsageErrors) {
  EXPECT_EQ(usageError("lat", {"--gbits", "-f", "osu"}).substr(0, 40),
            "--gbits: lat reports latency only; Gb/s ");
  EXPECT_EQ(usageError("lat", {"--gbits"}).substr(0, 33), "--gbits: lat reports latency only");
  EXPECT_EQ(usageError("bw", {"--gbits", "-f", "osu"}).substr(0, 60),
            "--gbits with --format osu: osu_bw's layout has MB/s only; Gb");
  EXPECT_EQ(usageError("bw", {"--gbits", "-f", "imb"}).substr(0, 54),
            "--gbits with --format imb: IMB's layout has MB/s only;");
  EXPECT_EQ(usageError("bw", {"--gbits", "--compare", "socket,ofi"}).substr(0, 24),
            "--gbits: the A/B table (");
  EXPECT_EQ(usageError("bw", {"-f", "osu", "--full"}).substr(0, 53),
            "--full with bw: OSU's -f columns (min, max latency, i");
  for (const char* f : {"table", "perftest", "json", "csv"})
    EXPECT_EQ(usageError("bw", {"--gbits", "-f", f}), "") << f;
  EXPECT_EQ(usageError("lat", {"-f", "osu", "--full"}), "");
}

// Issue 22 item 11: HOST:PORT and [IPV6]:PORT name the port; a bad one suggests -p.
TEST(ClientOptions, HostColonPort) {
  auto c = parseClientCommand("lat", {"node-a:5201", "-t", "socket"});
  EXPECT_EQ(c.client.host, "node-a");
  EXPECT_EQ(c.client.port, 5201);
  c = parseClientCommand("lat", {"[::1]:18600", "-t", "socket"});
  EXPECT_EQ(c.client.host, "::1");
  EXPECT_EQ(c.client.port, 18600);
  c = parseClientCommand("lat", {"fe80::1", "-t", "socket", "-p", "9"});
  EXPECT_EQ(c.client.host, "fe80::1");
  EXPECT_EQ(c.client.port, 9);
  c = parseClientCommand("lat", {"[::1]", "-t", "socket"});
  EXPECT_EQ(c.client.host, "::1");
  EXPECT_EQ(c.client.port, 18515);
  c = parseClientCommand("lat", {"node-a:5201", "-p", "5201", "-t", "socket"});
  EXPECT_EQ(c.client.port, 5201);
  EXPECT_NE(usageError("lat", {"node-a:http"}).find("give the port with -p PORT"),
            std::string::npos);
  EXPECT_NE(usageError("lat", {"node-a:5201", "-p", "18515"}).find("give only one"),
            std::string::npos);
}

TEST(ClientOptions, BandwidthModes) {
  // window is the default (osu_bw). Issue 22 item 8: the format only formats, so -f perftest
  // keeps window mode and what -n counts (it used to switch to stream mode).
  auto c = parseClientCommand("bw", {"-t", "socket", "-s", "8"});
  EXPECT_EQ(c.client.spec.mode, engine::BwMode::kWindow);
  EXPECT_EQ(c.client.spec.cqModeration, 1u);
  c = parseClientCommand("bw", {"-t", "socket", "-s", "8", "-n", "5", "-f", "perftest"});
  EXPECT_EQ(c.client.spec.mode, engine::BwMode::kWindow);
  EXPECT_EQ(c.client.spec.cqModeration, 1u);
  EXPECT_EQ(c.client.spec.iterationsFor(8), 5u);  // windows, as without -f perftest
  c = parseClientCommand("bw", {"-t", "socket", "-s", "8", "-f", "perftest", "--mode", "stream"});
  EXPECT_EQ(c.client.spec.mode, engine::BwMode::kStream);
  EXPECT_EQ(c.client.spec.cqModeration, 100u);  // perftest -Q 100, capped at the tx depth 128
  c = parseClientCommand("bw", {"-t", "socket", "-s", "8", "--mode", "stream", "--tx-depth", "16"});
  EXPECT_EQ(c.client.spec.streamDepth(), 16u);
  EXPECT_EQ(c.client.spec.cqModeration, 16u);
  EXPECT_EQ(c.client.spec.iterationsFor(8), 6400u);  // messages: the data of 100 windows of 64
  EXPECT_NE(usageError("bw", {"--mode", "burst"}).find("--mode burst: unknown"), std::string::npos);
  EXPECT_NE(usageError("bw", {"--mode", "stream", "-w", "8"})
                .find("--window: only for --mode "
                      "window"),
            std::string::npos);
  EXPECT_NE(usageError("bw", {"-t", "socket", "--op", "read", "-s", "64", "--check"})
                .find("--check: not available for `bw --op read`"),
            std::string::npos);
  // bw --op read is ib_read_bw now.
  c = parseClientCommand("bw", {"-t", "socket", "--op", "read", "-s", "64"});
  EXPECT_EQ(c.client.spec.op, engine::Op::kRead);
}

TEST(ClientOptions, BackendOptionGivenToAnotherTransportIsAUsageError) {
  EXPECT_EQ(usageError("lat", {"-t", "verbs", "--provider", "tcp"}),
            "--provider tcp: only for -t ofi; -t verbs does not use it");
  EXPECT_EQ(usageError("lat", {"-t", "ofi", "--mtu", "1024"}),
            "--mtu 1024: only for -t verbs; -t ofi does not use it");
  EXPECT_EQ(usageError("bw", {"-t", "socket", "--ep", "msg"}),
            "--ep msg: only for -t ofi; -t socket does not use it");
  EXPECT_EQ(usageError("lat", {"-t", "socket", "--rdma-cm"}),
            "-R/--rdma-cm: only for -t verbs; -t socket does not use it");
  EXPECT_EQ(usageError("lat", {"-t", "verbs", "--domain", "lo"}),
            "--domain lo: only for -t ofi; -t verbs does not use it");
  EXPECT_EQ(usageError("lat", {"-t", "ofi", "--gid-index", "3"}),
            "-x/--gid-index 3: only for -t verbs; -t ofi does not use it");
  EXPECT_EQ(usageError("lat", {"-t", "socket", "--ib-port", "1"}),
            "--ib-port 1: only for -t verbs; -t socket does not use it");
  // Newcomer trial: -d / --remote-device with -t socket were accepted and silently ignored.
  EXPECT_EQ(usageError("lat", {"-t", "socket", "-d", "mlx5_0"}),
            "-d/--device mlx5_0: only for -t verbs or -t ofi; -t socket does not use it");
  EXPECT_EQ(usageError("bw", {"-t", "socket", "--remote-device", "mlx5_1"}),
            "--remote-device mlx5_1: only for -t verbs or -t ofi; -t socket does not use it");
  EXPECT_EQ(usageError("lat", {"-t", "socket", "-x", "auto"}),
            "-x/--gid-index auto: only for -t verbs; -t socket does not use it");
  // An unknown -t is named as such, not as a transport that does not read -d.
  EXPECT_EQ(usageError("lat", {"-t", "tcp", "-d", "mlx5_0"}),
            "--transport tcp: unknown (valid: socket, verbs, ofi)");
  // -d is verbs' device and ofi's domain: both read it.
  EXPECT_EQ(usageError("lat", {"-t", "ofi", "-d", "lo"}), "");
  EXPECT_EQ(usageError("lat", {"-t", "verbs", "-d", "mlx5_0", "--remote-device", "mlx5_1"}), "");
}

TEST(ClientOptions, BackendOptionsOfTheChosenTransportAreAccepted) {
  auto c = parseClientCommand("lat",
                              {"-t", "ofi", "--provider", "tcp", "--ep", "msg", "--domain", "lo"});
  EXPECT_EQ(c.client.localDevice.provider, "tcp");
  EXPECT_EQ(c.client.localDevice.endpointType, "msg");
  c = parseClientCommand(
      "lat", {"-t", "verbs", "--mtu", "1024", "--gid-index", "1", "--rdma-cm", "--ib-port", "1"});
  EXPECT_EQ(c.client.localDevice.mtu, 1024u);
  EXPECT_TRUE(c.client.localDevice.rdmaCm);
  // Without -t the transport is chosen at run time; --compare variants differ by design.
  EXPECT_EQ(usageError("lat", {"--mtu", "1024"}), "");
  EXPECT_EQ(usageError("lat", {"--compare", "socket,ofi", "--provider", "tcp"}), "");
}

// Without -t, once the transport is known: an option it does not read is refused, naming the
// option, its value and why the transport was chosen (lat -d mlx5_0 with no RDMA device here).
std::string autoError(const std::vector<std::string>& args, const std::string& transport) {
  try {
    checkAutoTransport(parseClientCommand("lat", args), transport, "auto: " + transport + " (why)");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ClientOptions, TransportOptionsWithoutDashTAreCheckedAgainstTheAutoChoice) {
  EXPECT_EQ(autoError({"-s", "8", "-d", "mlx5_0", "-x", "9999"}, "socket"),
            "-d/--device mlx5_0: only for -t verbs or -t ofi, not for the transport chosen "
            "without -t (auto: socket (why)); give -t verbs to measure with it, or drop the "
            "option");
  EXPECT_EQ(autoError({"-x", "3"}, "socket").substr(0, 42),
            "-x/--gid-index 3: only for -t verbs, not f");
  EXPECT_EQ(autoError({"-R"}, "socket").substr(0, 33), "-R/--rdma-cm: only for -t verbs, ");
  EXPECT_EQ(autoError({"--provider", "tcp"}, "verbs").substr(0, 35),
            "--provider tcp: only for -t ofi, no");
  // What the chosen transport reads, and options every transport reads, pass.
  EXPECT_EQ(autoError({"-d", "mlx5_0", "-x", "3", "--mtu", "1024", "-R"}, "verbs"), "");
  EXPECT_EQ(autoError({"--inline", "64", "-e", "--tx-depth", "16"}, "socket"), "");
  // With -t the options are checked at parse time (above), not recorded for this check.
  EXPECT_TRUE(parseClientCommand("lat", {"-t", "verbs", "-d", "lo"}).transportOptions.empty());
}

TEST(ServerOptions, Parse) {
  auto s = parseServerCommand({"--port", "9999", "--once", "--max-bytes", "64M"});
  EXPECT_EQ(s.server.port, 9999);
  EXPECT_TRUE(s.server.once);
  EXPECT_EQ(s.server.maxBytes, 64u << 20);
  EXPECT_THROW(parseServerCommand({"--port", "70000"}), UsageError);
  EXPECT_THROW(parseServerCommand({"--max-bytes", "12"}), UsageError);
}

// The server times bw's target interval (peer_BW): it takes --clock as the clients do.
TEST(ServerOptions, Clock) {
  EXPECT_EQ(parseServerCommand({}).clock, "auto");
  EXPECT_EQ(parseServerCommand({"--clock", "monotonic"}).clock, "monotonic");
  try {
    parseServerCommand({"--clock", "hpet"});
    ADD_FAILURE() << "--clock hpet accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--clock hpet: unknown clock (valid: auto, tsc, monotonic)");
  }
}

// Issue 36 item 9: stream mode's -l without --cq-mod implies --cq-mod = -l; when -l is above the
// --tx-depth the error names -l, the option the user typed, never --cq-mod, which they did not
// type (tests/system/test_cli_depth_combos.sh checks ~380 combinations of both).
TEST(ClientOptions, PostListAboveTheTxDepthNamesOnlyPostList) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--mode", "stream", "-l", "64", "--tx-depth", "32"},
        std::vector<std::string>{"--mode", "stream", "--post-list", "64", "--tx-depth", "32"},
        std::vector<std::string>{"-t", "socket", "--mode", "stream", "--tx-depth", "32", "-l", "64",
                                 "-s", "8"}}) {
    const std::string e = usageError("bw", args);
    EXPECT_EQ(e, "--post-list 64: out of range 1..32 (the --tx-depth)") << e;
  }
  // -l 129 against the default stream depth of 128.
  EXPECT_EQ(usageError("bw", {"--mode", "stream", "-l", "129"}),
            "--post-list 129: out of range 1..128 (the --tx-depth)");
  // --cq-mod typed: the error names it.
  EXPECT_EQ(usageError("bw", {"--mode", "stream", "--cq-mod", "200"}),
            "--cq-mod 200: out of range 1..128 (the --tx-depth)");
  // -l within the depth: no error.
  EXPECT_EQ(usageError("bw", {"--mode", "stream", "-l", "32", "--tx-depth", "32"}), "");
}

}  // namespace
}  // namespace rdmabench::cli
