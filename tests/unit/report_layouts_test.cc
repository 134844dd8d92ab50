// The text layouts of the reporters: osu (OSU 7), perftest, imb (IMB-MPI1) and table.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "report/report.h"
#include "report_fixtures.h"

namespace rdmabench::report {
namespace {

using namespace test_util;

// ---------------------------------------------------------------- osu

TEST(ReportOsu, LatencyMatchesOsu7Layout) {
  std::string text = run("osu", latencyRun(), {latencyRow(1, 1.67), latencyRow(4194304, 412.77)});
  // Lines below are shaped exactly as OSU 7.5 osu_latency prints them ("%-10d%18.2f").
  EXPECT_EQ(text,
            "\n"
            "# OSU MPI-free Latency Test (rdmabench 0.1.0, socket send)\n"
            "# Datatype: MPI_CHAR.\n"
            "# Size       Avg Latency(us)\n"
            "1                       1.67\n"
            "4194304               412.77\n");
}

TEST(ReportOsu, FullAddsMinMaxIterations) {
  ReportOptions options;
  options.full = true;
  std::string text = run("osu", latencyRun(), {latencyRow(8, 1.5, 10000)}, options);
  auto l = lines(text);
  ASSERT_EQ(l.size(), 5u) << text;
  EXPECT_EQ(l[3], "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations");
  EXPECT_EQ(l[4], "8                       1.50              1.02              3.56       10000");
}

TEST(ReportOsu, BandwidthAndBidirectionalTitles) {
  std::string bw = run("osu", bandwidthRun(),
                       {bandwidthRow(1, 3.45, 3.45e6), bandwidthRow(1024, 1893.21, 1.8e6)});
  EXPECT_EQ(bw,
            "\n"
            "# OSU MPI-free Bandwidth Test (rdmabench 0.1.0, socket send)\n"
            "# Datatype: MPI_CHAR.\n"
            "# Size      Bandwidth (MB/s)\n"
            "1                       3.45\n"
            "1024                 1893.21\n");
  std::string bibw = run("osu", bandwidthRun(true), {bandwidthRow(1, 6.9, 6.9e6)});
  EXPECT_TRUE(hasLine(bibw,
                      "# OSU MPI-free Bi-Directional Bandwidth Test (rdmabench 0.1.0, "
                      "socket send)"))
      << bibw;
}

TEST(ReportOsu, RoundTripIsNamedInTheTitle) {
  RunInfo info = latencyRun();
  info.op = "read";
  info.roundTrip = true;
  std::string text = run("osu", info, {latencyRow(8, 2.5)});
  EXPECT_TRUE(hasLine(text,
                      "# OSU MPI-free Latency Test (rdmabench 0.1.0, socket read, full "
                      "round trip)"))
      << text;
}

// ---------------------------------------------------------------- perftest

TEST(ReportPerftest, LatencyTableMatchesPerftestColumns) {
  std::string text = run("perftest", latencyRun(), {latencyRow(2, 1.06)});
  auto l = lines(text);
  const std::string dashes(87, '-');
  ASSERT_GE(l.size(), 6u) << text;
  EXPECT_EQ(l.front(), dashes);
  EXPECT_EQ(l[1], "                    Send Latency Test");
  EXPECT_EQ(l.back(), dashes);
  // perftest's header and row: " %-7lu %lu          %-7.2f        %-7.2f      %-7.2f  \t
  // %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f".
  EXPECT_EQ(l[l.size() - 3],
            " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
            "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ");
  EXPECT_EQ(l[l.size() - 2],
            " 2       1000          1.02           3.56         1.05     \t       1.06        "
            "\t0.04   \t\t1.20    \t\t3.56   ");
  EXPECT_EQ(l[l.size() - 4], dashes);
}

TEST(ReportPerftest, BandwidthTableInMegabytesAndGigabits) {
  std::vector<Row> rows{bandwidthRow(65536, 11234.56, 171425.0, 5000)};
  rows[0].messages = 320000;  // perftest's #iterations counts messages
  std::string mb = run("perftest", bandwidthRun(), rows);
  EXPECT_TRUE(hasLine(mb, "                    Send BW Test")) << mb;
  EXPECT_TRUE(hasLine(
      mb, " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"))
      << mb;
  // perftest's row: " %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t     %-7.6lf";
  // MB/sec = 2^20 B/s as perftest divides (11234.56 * 10^6 / 2^20 = 10714.11), peak not
  // computed = 0.00 (perftest -N), #iterations = messages.
  EXPECT_TRUE(hasLine(mb,
                      " 65536      320000           0.00               10714.11\t\t     "
                      "0.171425"))
      << mb;
  EXPECT_TRUE(hasLine(mb, " BW units        : MB/sec = 2^20 B/s (MiB/s, as perftest divides)"))
      << mb;
  // Issue 22 item 8: window mode in perftest's layout says which flag gives perftest's method;
  // a stream-mode run needs no such line.
  EXPECT_TRUE(hasLine(
      mb, " Note            : perftest streams: --mode stream gives ib_*_bw's method and figures"))
      << mb;
  RunInfo stream = bandwidthRun();
  stream.extra["mode"] = "stream";
  EXPECT_EQ(run("perftest", stream, rows).find("--mode stream"), std::string::npos);

  ReportOptions gbits;
  gbits.gigabits = true;
  std::string gb = run("perftest", bandwidthRun(), rows, gbits);
  EXPECT_TRUE(hasLine(
      gb, " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"))
      << gb;
  EXPECT_TRUE(hasLine(gb,
                      " 65536      320000           0.00               89.88  \t\t     "
                      "0.171425"))
      << gb;
}

TEST(ReportPerftest, TitlesFollowTheOperation) {
  RunInfo info = bandwidthRun(true);
  info.op = "write";
  EXPECT_TRUE(hasLine(run("perftest", info, {}),
                      "                    RDMA_Write Bidirectional "
                      "BW Test"));
}

// ---------------------------------------------------------------- imb

TEST(ReportImb, PingPongMatchesImbLayout) {
  // t and Mbytes/sec below are taken from a published IMB-MPI1 2021 PingPong log; the means are
  // chosen so that bytes / t rounds as IMB's did (Mbytes/sec = 10^6 B/s).
  std::string text = run("imb", latencyRun(),
                         {latencyRow(0, 1.66), latencyRow(8, 1.656), latencyRow(1024, 2.341053)});
  const std::string rule = "#" + std::string(51, '-');
  std::string expected = rule + "\n" +
                         "# Benchmarking PingPong \n"
                         "# #processes = 2 \n" +
                         rule + "\n" +
                         "       #bytes #repetitions      t[usec]   Mbytes/sec\n"
                         "            0         1000         1.66         0.00\n"
                         "            8         1000         1.66         4.83\n"
                         "         1024         1000         2.34       437.41\n"
                         "\n";
  ASSERT_GE(text.size(), expected.size());
  EXPECT_EQ(text.substr(text.size() - expected.size()), expected) << text;
  EXPECT_NE(text.find("# Calling sequence was:"), std::string::npos);
  EXPECT_NE(text.find("rdmabench lat --peer node-b -s 2"), std::string::npos);
}

TEST(ReportImb, BandwidthMapsToUnibandAndBiband) {
  std::string uni = run("imb", bandwidthRun(), {bandwidthRow(0, 0.0, 2189915.0, 1000)});
  EXPECT_TRUE(hasLine(uni, "# Benchmarking Uniband ")) << uni;
  EXPECT_TRUE(hasLine(uni, "       #bytes #repetitions   Mbytes/sec      Msg/sec")) << uni;
  EXPECT_TRUE(hasLine(uni, "            0         1000         0.00      2189915")) << uni;
  std::string bi = run("imb", bandwidthRun(true), {bandwidthRow(4096, 9000.5, 2.2e6)});
  EXPECT_TRUE(hasLine(bi, "# Benchmarking Biband ")) << bi;
  EXPECT_TRUE(hasLine(bi, "         4096          100      9000.50      2200000")) << bi;
}

// ---------------------------------------------------------------- table

TEST(ReportTable, LatencyHeaderBlockAndColumns) {
  std::string text = run("table", latencyRun(), {latencyRow(2, 1.06)});
  auto l = lines(text);
  EXPECT_NE(text.find("# rdmabench 0.1.0"), std::string::npos) << text;
  EXPECT_NE(text.find("socket"), std::string::npos);
  EXPECT_NE(text.find("node-a"), std::string::npos);
  EXPECT_NE(text.find("mtu=65536"), std::string::npos);
  EXPECT_NE(text.find("2026-01-02T03:04:05Z"), std::string::npos);
  EXPECT_NE(text.find("rdmabench lat --peer node-b -s 2"), std::string::npos);
  EXPECT_NE(text.find("RTT/2"), std::string::npos);
  // Column labels and one value per label, aligned on the right edge.
  std::string header, row;
  for (const auto& line : l) {
    if (line.find("t_min[us]") != std::string::npos) header = line;
    if (!line.empty() && line[0] != '#' && line.find("#bytes") == std::string::npos) row = line;
  }
  ASSERT_FALSE(header.empty()) << text;
  ASSERT_FALSE(row.empty()) << text;
  EXPECT_EQ(header.size(), row.size()) << "columns aligned";
  std::istringstream hs(header), rs(row);
  std::vector<std::string> labels, values;
  for (std::string w; hs >> w;)
    labels.push_back(w);
  for (std::string w; rs >> w;)
    values.push_back(w);
  std::vector<std::string> wantLabels{"#bytes",        "#iterations", "t_min[us]",   "t_max[us]",
                                      "t_typical[us]", "t_avg[us]",   "t_stdev[us]", "p50[us]",
                                      "p90[us]",       "p99[us]",     "p99.9[us]"};
  EXPECT_EQ(labels, wantLabels);
  std::vector<std::string> wantValues{"2",    "1000", "1.02", "3.56", "1.05", "1.06",
                                      "0.04", "1.05", "1.10", "1.20", "3.56"};
  EXPECT_EQ(values, wantValues);
}

TEST(ReportTable, RoundTripRenamesLatencyColumns) {
  RunInfo info = latencyRun();
  info.roundTrip = true;
  std::string text = run("table", info, {latencyRow(2, 1.06)});
  EXPECT_NE(text.find("rtt_min[us]"), std::string::npos) << text;
  EXPECT_NE(text.find("rtt_p99.9[us]"), std::string::npos) << text;
  EXPECT_EQ(
      text.find("t_min[us]") != std::string::npos && text.find("rtt_min[us]") == std::string::npos,
      false);
  EXPECT_NE(text.find("full round trip"), std::string::npos) << text;
}

TEST(ReportTable, BandwidthColumnsWithGigabitsAndPeer) {
  Row r = bandwidthRow(65536, 12000.0, 183105.5);
  r.peerMegabytesPerSec = 11990.0;
  ReportOptions options;
  options.gigabits = true;
  std::string text = run("table", bandwidthRun(), {r}, options);
  std::string header, row;
  for (const auto& line : lines(text)) {
    if (line.find("BW[MB/s]") != std::string::npos) header = line;
    if (!line.empty() && line.find('#') == std::string::npos) row = line;
  }
  std::istringstream hs(header), rs(row);
  std::vector<std::string> labels, values;
  for (std::string w; hs >> w;)
    labels.push_back(w);
  for (std::string w; rs >> w;)
    values.push_back(w);
  EXPECT_EQ(labels, (std::vector<std::string>{"#bytes", "#iterations", "BW[MB/s]", "BW[Gb/s]",
                                              "MsgRate[Mmsg/s]", "peer_BW[MB/s]"}))
      << text;
  EXPECT_EQ(values,
            (std::vector<std::string>{"65536", "100", "12000.00", "96.00", "0.183106", "11990.00"}))
      << text;
  EXPECT_NE(text.find("window 64"), std::string::npos) << text;

  std::string plain = run("table", bandwidthRun(), {bandwidthRow(1, 1.0, 1e6)});
  EXPECT_EQ(plain.find("Gb/s]"), std::string::npos);
  EXPECT_EQ(plain.find("peer_BW"), std::string::npos);
}

TEST(ReportTable, HistogramRowsGetAFootnote) {
  Row row = latencyRow(1024, 1.0);
  row.latency->exact = false;
  std::string text = run("table", latencyRun(), {latencyRow(2, 1.0), row});
  EXPECT_NE(text.find("0.78%"), std::string::npos) << text;
  EXPECT_NE(text.find("1024"), std::string::npos);
  EXPECT_EQ(run("table", latencyRun(), {latencyRow(2, 1.0)}).find("0.78%"), std::string::npos);
}

}  // namespace
}  // namespace rdmabench::report
