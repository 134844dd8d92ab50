// `rdmabench compare` on real OSU 5.3.2 and IMB-MPI1 2021.11 outputs made on this machine
// (tests/fixtures/README.md says how each was made): sections matched by process count, launcher
// prefixes for every format, IMB units by version, per-table attribution, rows cut short, like
// for like, plot keys and axis, and the input bounds of issue 24 (row cap, FIFO, negatives).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "compare/compare.h"
#include "compare/parse.h"
#include "compare/plot.h"

#include "compare_fixtures.h"
#include "fixtures.h"

namespace rdmabench::compare {
namespace {

namespace fs = std::filesystem;

using rdmabench::testing::fixture;  // tests/unit/fixtures.h
using test_util::errorOf;           // tests/unit/compare_fixtures.h

ParsedInput read(const std::string& name) {
  return readText(fixture(name), name);
}

const Series& find(const std::vector<Series>& all, const std::string& test,
                   std::optional<int> np = std::nullopt) {
  for (const Series& s : all)
    if (s.test == test && (!np || s.processes == np)) return s;
  ADD_FAILURE() << "no " << test << " series";
  return all.front();
}

std::optional<double> valueAt(const Series& s, uint64_t bytes) {
  for (const Point& p : s.points)
    if (p.bytes == bytes) return p.value;
  return std::nullopt;
}

// Every line of `text` behind `prefix` (the rank's stdout).
std::string prefixed(const std::string& text, const std::string& prefix) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    out += prefix + line + "\n";
  return out;
}

// --- 1. Sections --------------------------------------------------------------------------

// IMB -npmin 2 at 4 ranks: Allreduce and Barrier at 2 and then 4 processes. The figures of the
// 4-process tables (read off the file by hand): barrier t_avg 10927.73 us, allreduce 4 B
// 50066.22 us; the 2-process ones: 23904.58 and 23613.76.
TEST(CompareSections, ImbNpminIsMatchedByProcessCountNeverTheFirstTable) {
  ParsedInput imb = read("imb2021_np4_npmin2_coll.txt");
  ParsedInput osu = read("osu532_barrier_np4.txt");
  // OSU prints no process count: nothing says which IMB barrier to use -> one-line refusal
  // listing both tables and the options.
  std::string why = errorOf([&] { compareSeries({imb.series, osu.series}); });
  EXPECT_NE(why.find("holds 2 barrier tables"), std::string::npos) << why;
  EXPECT_NE(why.find("2 processes"), std::string::npos) << why;
  EXPECT_NE(why.find("4 processes"), std::string::npos) << why;
  EXPECT_NE(why.find("--np N or --section K"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos);

  CompareOptions np4;
  np4.np = 4;
  np4.test = "barrier";
  Comparison c = compareSeries({imb.series, osu.series}, np4);
  ASSERT_EQ(c.groups.size(), 1u);
  const Group& g = c.groups[0];
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.inputs[0].processes, 4);
  EXPECT_NEAR(*g.rows[0].values[0], 10927.73, 1e-9);
  EXPECT_NEAR(*g.rows[0].values[1], 859.52, 1e-9);

  // A series that says its count (an rdmabench collective JSON: ranks 4) picks the table itself.
  Series rb = find(osu.series, "barrier");
  rb.source = Source::kRdmabench;
  rb.processes = 4;
  rb.section = 1;
  Comparison auto4 = compareSeries({imb.series, {rb}}, CompareOptions{0, "barrier", {}, {}});
  EXPECT_NEAR(*auto4.groups[0].rows[0].values[0], 10927.73, 1e-9);
  // ... and allreduce at 4 B likewise: 50066.22, not the 2-process 23613.76.
  Series ra = find(imb.series, "allreduce", 4);
  ra.source = Source::kRdmabench;
  ra.path = ra.label = "rb.json";
  ra.section = 1;
  Comparison ar = compareSeries({imb.series, {ra}}, CompareOptions{0, "allreduce", {}, {}});
  ASSERT_EQ(ar.groups[0].inputs.size(), 2u);
  EXPECT_NEAR(*ar.groups[0].rows[1].values[0], 50066.22, 1e-9);
  // A 2-rank rdmabench run gets the 2-process tables.
  ra.processes = 2;
  Comparison ar2 = compareSeries({imb.series, {ra}}, CompareOptions{0, "allreduce", {}, {}});
  EXPECT_NEAR(*ar2.groups[0].rows[1].values[0], 23613.76, 1e-9);
  // An 8-rank run has no match: refused, never another count.
  ra.processes = 8;
  why = errorOf([&] { compareSeries({imb.series, {ra}}, CompareOptions{0, "allreduce", {}, {}}); });
  EXPECT_NE(why.find("no allreduce table at 8 processes"), std::string::npos) << why;
  // --section picks by table number (the refusal lists them).
  CompareOptions sec;
  sec.test = "allreduce";
  sec.section = 1;
  ra.processes.reset();
  Comparison s1 = compareSeries({imb.series, {ra}}, sec);
  EXPECT_EQ(s1.groups[0].inputs[0].processes, 2);
}

TEST(CompareSections, SingleTableOfAnotherCountIsRefused) {
  ParsedInput imb = read("imb2021_np4_npmin2.txt");  // PingPong np2 only: Allreduce np4 timed out
  Series rb = find(imb.series, "barrier", 4);
  rb.source = Source::kRdmabench;
  rb.processes = 2;
  rb.section = 1;
  ParsedInput osu = read("osu532_allreduce_np4.txt");
  Series o = osu.series[0];
  // The allreduce of the IMB file is the 2-process table only; a 4-rank input is refused.
  Series four = o;
  four.source = Source::kRdmabench;
  four.processes = 4;
  std::string why = errorOf([&] {
    compareSeries({imb.series, {four}}, CompareOptions{0, "allreduce", {}, {}});
  });
  EXPECT_NE(why.find("ran 2 processes"), std::string::npos) << why;
}

// --- 2. Launcher prefixes, every format, the same code -----------------------------------

TEST(ComparePrefixes, ImbBehindTagAndTimestampIsRead) {
  ParsedInput tag = read("imb2021_np4_npmin2_coll_tag.txt");  // --tag-output --timestamp-output
  EXPECT_EQ(tag.report.launcher, "mpirun --timestamp-output");
  ASSERT_EQ(tag.series.size(), 4u);
  EXPECT_EQ(find(tag.series, "allreduce", 4).points.size(), 12u);
  ParsedInput tag2 = read("imb2021_np4_npmin2_tag.txt");  // --tag-output
  EXPECT_EQ(tag2.report.launcher, "mpirun --tag-output");
  EXPECT_EQ(find(tag2.series, "barrier", 4).points.size(), 1u);
  ParsedInput ts = read("imb2021_np2_timestamp.txt");
  EXPECT_EQ(find(ts.series, "bandwidth").points.size(), 11u);  // 0..512 B, then a time-out
}

TEST(ComparePrefixes, EveryLauncherOnEveryFormatGivesTheSameNumbers) {
  struct Input {
    std::string name;
  };
  for (const std::string name : {"osu532_latency_ob1_tcp.txt", "imb2021_np4_npmin2_coll.txt",
                                 "perftest_send_lat.txt", "imb2021_np2_uniband_biband.txt"}) {
    std::string plain = fixture(name);
    std::vector<Series> want = readText(plain, name).series;
    for (const std::string prefix :
         {"[1,0]<stdout>:", "Wed Dec  2 04:22:04 2026[1,0]<stdout>:",
          "Wed Dec  2 04:22:04 2026<stdout>:", "0: ", "[0] ", "node01: ", "node-7.cluster: "}) {
      ParsedInput got = readText(prefixed(plain, prefix), name);
      SCOPED_TRACE(name + " behind " + prefix);
      ASSERT_EQ(got.series.size(), want.size());
      EXPECT_FALSE(got.report.launcher.empty());
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(got.series[i].points.size(), want[i].points.size());
        for (size_t k = 0; k < want[i].points.size(); ++k)
          EXPECT_EQ(got.series[i].points[k].value, want[i].points[k].value);
      }
    }
  }
  // rdmabench JSON too (the same filter feeds the JSON reader).
  const std::string json =
      "{\"tool\":\"rdmabench\",\"run\":{\"test\":\"lat\",\"transport\":\"socket\"},\n"
      "\"rows\":[{\"bytes\":8,\"latency_us\":{\"mean\":2.5,\"min\":2,\"max\":3}}]}\n";
  ParsedInput j = readText(prefixed(json, "node01: ") + "node02: noise\n", "j.json");
  ASSERT_EQ(j.series.size(), 1u);
  EXPECT_DOUBLE_EQ(j.series[0].points[0].value, 2.5);
  EXPECT_EQ(j.report.launcher, "pdsh");
  EXPECT_EQ(j.report.ignored, 1u);
}

// --- 3. IMB units by version --------------------------------------------------------------

// imb41_uniband_biband_edited.txt is the real 2021.11 output with the 4.1 Update 1 banner and
// every Mbytes/sec divided by 1.048576 (what IMB 4.1 prints): read back, it must give the 2021
// figures (10^6 B/s) within the 2-decimal rounding.
TEST(CompareImbUnits, Imb41MbytesAreMebibytesAndConverted) {
  ParsedInput old = read("imb41_uniband_biband_edited.txt");
  ParsedInput now = read("imb2021_np2_uniband_biband.txt");
  for (const char* test : {"bandwidth", "bibw"}) {
    const Series& o = find(old.series, test);
    const Series& n = find(now.series, test);
    EXPECT_EQ(o.toolVersion, "4.1 Update 1");
    EXPECT_EQ(n.toolVersion, "2021.11");
    EXPECT_NE(o.note.find("2^20"), std::string::npos) << o.note;
    EXPECT_TRUE(n.note.empty()) << n.note;
    ASSERT_EQ(o.points.size(), n.points.size());
    for (size_t i = 0; i < n.points.size(); ++i)
      EXPECT_NEAR(o.points[i].value, n.points[i].value, 0.006) << test << " " << n.points[i].bytes;
  }
  EXPECT_NEAR(*valueAt(find(old.series, "bibw"), 512), 3.59 * 1.048576, 1e-9);  // printed 3.59
  // No banner: the assumption is named.
  std::string text = fixture("imb2021_np2_uniband_biband.txt");
  text = text.substr(text.find("# Benchmarking Uniband"));
  ParsedInput bare = readText(text, "bare.txt");
  EXPECT_NE(bare.series[0].note.find("taken as 10^6 B/s"), std::string::npos)
      << bare.series[0].note;
}

// --- 4. Attribution per table -------------------------------------------------------------

TEST(CompareAttribution, ConcatenatedRdmabenchAndImbKeepTheirOwn) {
  const std::string rb =
      "#------------------------------------------------------------\n"
      "#    rdmabench 0.1.0, IMB-MPI1 layout (no MPI)\n"
      "#------------------------------------------------------------\n"
      "#---------------------------------------------------\n"
      "# Benchmarking Allreduce \n# #processes = 4 \n"
      "#---------------------------------------------------\n"
      "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
      "            4          100        10.00        12.00        11.00\n\n";
  const std::string imb = fixture("imb2021_np4_npmin2_coll.txt");
  for (bool rbFirst : {true, false}) {
    ParsedInput in = readText(rbFirst ? rb + imb : imb + rb, "both.txt");
    ASSERT_EQ(in.series.size(), 5u);
    int rdmabench = 0, mpi = 0;
    for (const Series& s : in.series) {
      bool isRb = s.points.size() == 1 && s.test == "allreduce";
      EXPECT_EQ(s.source, isRb ? Source::kRdmabench : Source::kImb) << s.label;
      EXPECT_EQ(s.toolVersion, isRb ? "0.1.0" : "2021.11") << s.label;
      (isRb ? rdmabench : mpi)++;
    }
    EXPECT_EQ(rdmabench, 1);
    EXPECT_EQ(mpi, 4);
  }
}

// --- 5. Rows cut short --------------------------------------------------------------------

TEST(CompareTruncated, LastRowCutMidNumberIsDroppedWithANote) {
  ParsedInput cut = read("osu532_latency_cut.txt");  // ends in "2048                1"
  const Series& s = cut.series[0];
  EXPECT_FALSE(valueAt(s, 2048).has_value());
  EXPECT_NEAR(*valueAt(s, 1024), 20580.38, 1e-9);
  EXPECT_EQ(cut.report.truncated, 1u);
  bool noted = false;
  for (const std::string& n : readNotes(cut, "cut.txt", false))
    noted = noted || (n.find("cut short") != n.npos && n.find("2048") != n.npos);
  EXPECT_TRUE(noted);
  // Fewer columns than the header (IMB PingPong row with 2 of 4 fields), newline or not.
  std::string imb = fixture("imb2021_np4_npmin2.txt");
  size_t at = imb.find("         1024           50       351.79");
  ASSERT_NE(at, std::string::npos);
  ParsedInput i = readText(imb.substr(0, at) + "         1024           50\n", "imb.txt");
  EXPECT_FALSE(valueAt(find(i.series, "latency"), 1024).has_value());
  EXPECT_EQ(i.report.truncated, 1u);
  // The real killed IMB run: complete lines are kept.
  ParsedInput killed = read("imb2021_pingpong_killed.txt");
  EXPECT_GE(killed.series[0].points.size(), 1u);
}

// --- 6. Like for like ---------------------------------------------------------------------

TEST(CompareLikeForLike, RoundTripIsHalvedAndStreamIsRefused) {
  ParsedInput osu = read("osu532_latency_ob1_tcp.txt");
  const std::string rtt =
      "{\"tool\":\"rdmabench\",\"run\":{\"test\":\"lat\",\"transport\":\"ofi\",\"op\":\"read\","
      "\"round_trip\":true},\"rows\":[{\"bytes\":1024,\"latency_us\":{\"mean\":30,\"min\":20,"
      "\"max\":40}}]}";
  ParsedInput rb = readText(rtt, "read.json");
  Comparison c = compareSeries({osu.series, rb.series});
  const Group& g = c.groups[0];
  EXPECT_NE(g.inputs[1].column.find("/ 2"), std::string::npos) << g.inputs[1].column;
  for (const ComparedRow& r : g.rows)
    if (r.bytes == 1024) {
      EXPECT_DOUBLE_EQ(*r.values[1], 15.0);
      EXPECT_NEAR(*r.cells[0].absolute, 20580.38 - 15.0, 1e-9);
    }
  std::ostringstream out;
  writeComparison(c, "table", out);
  EXPECT_NE(out.str().find("RTT/2"), std::string::npos) << out.str();

  ParsedInput bw = read("osu532_bw_ob1_tcp.txt");
  const std::string stream =
      "{\"tool\":\"rdmabench\",\"run\":{\"test\":\"bw\",\"transport\":\"socket\",\"extra\":{"
      "\"mode\":"
      "\"stream\"}},\"rows\":[{\"bytes\":1024,\"mb_per_s\":100}]}";
  std::string why = errorOf([&] { compareSeries({bw.series, readText(stream, "s.json").series}); });
  EXPECT_NE(why.find("stream bandwidth"), std::string::npos) << why;
}

TEST(CompareLikeForLike, TransportsAndNegativeOverheadAreNamed) {
  auto lat = [](const std::string& transport, double v) {
    return "{\"tool\":\"rdmabench\",\"run\":{\"test\":\"lat\",\"transport\":\"" + transport +
           "\",\"local_host\":\"a\"},\"rows\":[{\"bytes\":1024,\"latency_us\":{\"mean\":" +
           std::to_string(v) + "}}]}";
  };
  ParsedInput osu = read("osu532_latency_ob1_tcp.txt");
  Comparison c = compareSeries({osu.series, readText(lat("socket", 30000), "s.json").series,
                                readText(lat("verbs", 10), "v.json").series});
  bool transportNote = false;
  for (const std::string& n : c.notes)
    transportNote = transportNote || n.find("ran transport socket but [3] ran verbs") != n.npos;
  EXPECT_TRUE(transportNote);
  std::ostringstream out;
  writeComparison(c, "table", out);
  // 1024 B: OSU 20580.38 us, socket 30000 us: negative MPI overhead -> the note.
  EXPECT_NE(out.str().find("rdmabench slower than MPI here: different path?"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("transport socket"), std::string::npos);
  EXPECT_NE(out.str().find("OSU 5.3.2"), std::string::npos);
}

// --- 7. Plots and smaller items -----------------------------------------------------------

TEST(ComparePlotReal, KeysAxisOverheadPanelAndErrors) {
  ParsedInput osu = read("osu532_latency_ob1_tcp.txt");
  PlotOptions o;
  o.output = "x.png";
  OverheadCurve curve;
  curve.key = "[1] OSU - [2] rdmabench";
  curve.test = "latency";
  curve.unit = "us";
  curve.points.push_back({1024, 5.0, 25.0});
  o.overheads.push_back(curve);
  PlotScript s = gnuplotScript(osu.series, o);
  EXPECT_EQ(s.panels, 2);
  EXPECT_NE(s.text.find("'OSU 5.3.2 (MPI)'"), std::string::npos) << s.text;
  EXPECT_EQ(s.text.find("osu532_latency"), std::string::npos);  // no file names in keys
  EXPECT_NE(s.text.find("\"1 MiB\" 1048576"), std::string::npos) << s.text;
  EXPECT_NE(s.text.find("\"16 B\" 16"), std::string::npos);
  EXPECT_NE(s.text.find("MiB"), std::string::npos);
  EXPECT_EQ(s.text.find("kiB"), std::string::npos);
  EXPECT_NE(s.text.find("set key below"), std::string::npos);
  EXPECT_NE(s.text.find("MPI overhead (%)"), std::string::npos);
  EXPECT_NE(s.text.find("1024 5 25"), std::string::npos);
  // Errors name the option and the path.
  EXPECT_NE(errorOf([] { terminalFor("x.jpg", "--plot"); }).find("--plot x.jpg"),
            std::string::npos);
  std::string dir = errorOf([] { checkPlotOutput("/nonexistent/x.png", "--plot"); });
  EXPECT_NE(dir.find("--plot /nonexistent/x.png"), std::string::npos) << dir;
  // Barrier only: the reason is said.
  std::string bar = errorOf([&] { gnuplotScript(read("osu532_barrier_np4.txt").series, o); });
  EXPECT_NE(bar.find("barrier has no message sizes"), std::string::npos) << bar;
  // A/B variant labels name the series.
  Series v = osu.series[0];
  v.source = Source::kRdmabench;
  v.variant = "tcp";
  v.toolVersion.clear();
  v.transport = "ofi";
  EXPECT_EQ(seriesKey(v), "rdmabench ofi [tcp] (no MPI)");
}

TEST(CompareInputs, MissingFileIsAUsageError) {
  std::string why = errorOf([] { readFile("/nonexistent/in.txt"); });
  EXPECT_NE(why.find("/nonexistent/in.txt: cannot open"), std::string::npos) << why;
  EXPECT_THROW(readFile("/nonexistent/in.txt"), UsageError);
}

// Issue 24 item 8: a FIFO nobody writes to is refused within the deadline, never a hang.
TEST(CompareInputs, FifoWithoutWriterIsRefusedInTime) {
  std::string path =
      (fs::temp_directory_path() / ("rdmabench-fifo-" + std::to_string(getpid()))).string();
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  ReadOptions o;
  o.idleTimeoutMs = 300;
  auto t0 = std::chrono::steady_clock::now();
  std::string why = errorOf([&] { readFile(path, o); });
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  unlink(path.c_str());
  EXPECT_NE(why.find("nothing to read for 0.3 s"), std::string::npos) << why;
  EXPECT_LT(s, 30.0);  // bounded; the deadline is 0.3 s
}

// Issue 24 item 8: negative values are refused naming file:line.
TEST(CompareInputs, NegativeLatencyIsRefusedNamingTheLine) {
  std::string text = fixture("osu532_latency_ob1_tcp.txt");
  size_t at = text.find("51239.59");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 8, "-5");
  std::string why = errorOf([&] { readText(text, "neg.txt"); });
  EXPECT_NE(why.find("neg.txt:3: negative latency -5"), std::string::npos) << why;
  std::string json =
      "{\"tool\":\"rdmabench\",\"run\":{\"test\":\"bw\"},\"rows\":[{\"bytes\":8,\"mb_per_s\":-1}]}";
  why = errorOf([&] { readText(json, "neg.json"); });
  EXPECT_NE(why.find("neg.json row 1: negative bandwidth"), std::string::npos) << why;
}

// Issue 24 item 7: memory per input is bounded by a row cap, with a clear error.
TEST(CompareInputs, RowCapBoundsMemory) {
  std::string text = "# OSU MPI Latency Test v5.3.2\n# Size          Latency (us)\n";
  for (int i = 1; i <= 200; ++i)
    text += std::to_string(i) + " 1.5\n";
  ReadOptions o;
  o.maxRows = 100;
  std::string why = errorOf([&] { readText(text, "big.txt", o); });
  EXPECT_NE(why.find("big.txt: more than 100 result rows"), std::string::npos) << why;
  o.maxRows = 200;
  EXPECT_EQ(readText(text, "big.txt", o).series[0].points.size(), 200u);
}

// The same rules on rdmabench's own outputs made here (tests/fixtures/rdmabench_*): their JSON
// says ranks 4 (run.extra.ranks), so the 4-process IMB tables are chosen: barrier 10927.73 vs
// rdmabench 209.18265 us; allreduce 4 B 50066.22 vs 217.31669166666666 us.
TEST(CompareRealRdmabench, FourRankJsonPicksTheFourProcessImbTables) {
  ParsedInput imb = read("imb2021_np4_npmin2_coll.txt");
  ParsedInput bar = read("rdmabench_barrier_np4.json");
  ParsedInput ar = read("rdmabench_allreduce_np4.json");
  EXPECT_EQ(bar.series[0].processes, 4);
  Comparison c = compareSeries({imb.series, ar.series, bar.series});
  ASSERT_EQ(c.groups.size(), 2u);
  for (const Group& g : c.groups) {
    ASSERT_EQ(g.inputs.size(), 2u) << g.test;
    EXPECT_EQ(g.inputs[0].processes, 4) << g.test;
    const ComparedRow& r = g.test == "barrier" ? g.rows[0] : g.rows[1];  // rows[0] is 0 B
    double imbValue = g.test == "barrier" ? 10927.73 : 50066.22;
    double rbValue = g.test == "barrier" ? 209.18265 : 217.31669166666666;
    EXPECT_NEAR(*r.values[0], imbValue, 1e-9) << g.test;
    EXPECT_NEAR(*r.values[1], rbValue, 1e-9) << g.test;
    EXPECT_NEAR(*r.cells[0].absolute, imbValue - rbValue, 1e-6) << g.test;
    EXPECT_NEAR(*r.cells[0].percent, (imbValue - rbValue) / rbValue * 100, 1e-6) << g.test;
  }
}

TEST(CompareRealRdmabench, ConcatenatedImbLayoutsKeepTheirAttribution) {
  const std::string rb = fixture("rdmabench_allreduce_np4_imb.txt");
  const std::string imb = fixture("imb2021_np4_npmin2_coll.txt");
  for (bool rbFirst : {true, false}) {
    ParsedInput in = readText(rbFirst ? rb + imb : imb + rb, "both.txt");
    int rdmabench = 0, mpi = 0;
    for (const Series& s : in.series) {
      if (s.source == Source::kRdmabench) {
        ++rdmabench;
        EXPECT_EQ(s.toolVersion, "0.1.0");
        EXPECT_NEAR(*valueAt(s, 4), 182.45, 1e-9);
      } else {
        ++mpi;
        EXPECT_EQ(s.source, Source::kImb);
        EXPECT_EQ(s.toolVersion, "2021.11");
      }
    }
    EXPECT_EQ(rdmabench, 1) << rbFirst;
    EXPECT_EQ(mpi, 4) << rbFirst;
    // Compared against each other: the rdmabench table is "no MPI", the IMB one "MPI".
    std::vector<Series> rbOnly, imbOnly;
    for (const Series& s : in.series)
      (s.source == Source::kRdmabench ? rbOnly : imbOnly).push_back(s);
    Comparison c = compareSeries({imbOnly, rbOnly}, CompareOptions{0, "allreduce", {}, {}});
    EXPECT_TRUE(c.groups[0].differences[0].mpiOverhead);
    std::ostringstream out;
    writeComparison(c, "table", out);
    EXPECT_NE(out.str().find("IMB-MPI1 2021.11"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("(no MPI)"), std::string::npos) << out.str();
  }
}

TEST(CompareRealRdmabench, ReadRoundTripHalvedStreamRefusedTransportsNamed) {
  ParsedInput osu = read("osu532_latency_ob1_tcp.txt");
  ParsedInput rd = read("rdmabench_lat_ofi_read.json");  // lat -t ofi --op read: round trip
  Comparison c = compareSeries({osu.series, rd.series});
  for (const ComparedRow& r : c.groups[0].rows)
    if (r.bytes == 1024) {
      EXPECT_NEAR(*r.values[1], 35365.66178 / 2, 1e-6);
      EXPECT_NEAR(*r.cells[0].absolute, 20580.38 - 35365.66178 / 2, 1e-6);
    }
  std::string why = errorOf([&] {
    compareSeries(
        {read("osu532_bw_ob1_tcp.txt").series, read("rdmabench_bw_socket_stream.json").series});
  });
  EXPECT_NE(why.find("stream bandwidth"), std::string::npos) << why;
  EXPECT_NO_THROW(compareSeries(
      {read("osu532_bw_ob1_tcp.txt").series, read("rdmabench_bw_socket.json").series}));
  Comparison t = compareSeries({osu.series, read("rdmabench_lat_socket.json").series, rd.series});
  bool named = false;
  for (const std::string& n : t.notes)
    named = named || n.find("ran transport socket send but [3] ran ofi read") != n.npos;
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace rdmabench::compare
