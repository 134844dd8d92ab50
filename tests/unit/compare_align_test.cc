// Unit tests of lib/compare's output side: aligning series by size, the difference / ratio /
// MPI-overhead arithmetic, the output formats and the gnuplot script. Fixtures: tests/fixtures
// (hand-written). The parsers: compare_test.cc.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "compare/compare.h"
#include "compare/parse.h"
#include "compare/plot.h"
#include "compare_fixtures.h"

namespace rdmabench::compare {
namespace {

namespace fs = std::filesystem;
using test_util::parseFixture;

TEST(CompareMath, DifferenceAndMpiOverhead) {
  Cell d = difference(Metric::kLatency, false, false, 16.07, 11.01);
  EXPECT_NEAR(*d.absolute, 5.06, 1e-9);
  EXPECT_NEAR(*d.percent, 5.06 / 11.01 * 100, 1e-9);
  // Latency overhead: MPI - fabric, whichever is the baseline.
  Cell m1 = difference(Metric::kLatency, true, true, 12.0, 10.0);
  Cell m2 = difference(Metric::kLatency, true, false, 10.0, 12.0);
  EXPECT_DOUBLE_EQ(*m1.absolute, 2.0);
  EXPECT_DOUBLE_EQ(*m2.absolute, 2.0);
  EXPECT_DOUBLE_EQ(*m1.percent, 20.0);
  EXPECT_DOUBLE_EQ(*m2.percent, 20.0);
  // Bandwidth: MB/s lost = fabric - MPI, % of fabric.
  Cell b = difference(Metric::kBandwidth, true, true, 900.0, 1000.0);
  EXPECT_DOUBLE_EQ(*b.absolute, 100.0);
  EXPECT_DOUBLE_EQ(*b.percent, 10.0);
  Cell z = difference(Metric::kBandwidth, false, false, 5.0, 0.0);
  EXPECT_FALSE(z.percent);
  EXPECT_FALSE(z.ratio);
  // The ratio is always [of] / [to]: a SHARP run at 2 us against a tree at 5 us gives 0.4.
  EXPECT_NEAR(*d.ratio, 16.07 / 11.01, 1e-12);
  EXPECT_DOUBLE_EQ(*difference(Metric::kLatency, false, false, 2.0, 5.0).ratio, 0.4);
  EXPECT_DOUBLE_EQ(*m2.ratio, 10.0 / 12.0);
  EXPECT_DOUBLE_EQ(*b.ratio, 0.9);
}

Series makeSeries(const std::string& label, Source source, Metric metric, const std::string& test,
                  const std::vector<std::pair<uint64_t, double>>& points) {
  Series s;
  s.label = s.path = label;
  s.source = source;
  s.metric = metric;
  s.test = test;
  for (auto [b, v] : points)
    s.points.push_back(Point{b, v, {}, {}, {}});
  return s;
}

TEST(CompareAlign, MpiOverheadAndSizesOnlyInOneInput) {
  auto osu = makeSeries("osu", Source::kOsu, Metric::kLatency, "latency",
                        {{1, 11.0}, {2, 12.0}, {4, 15.0}});
  auto rb = makeSeries("rb", Source::kRdmabench, Metric::kLatency, "latency",
                       {{0, 9.0}, {1, 10.0}, {2, 10.0}});
  Comparison c = compareSeries({{osu}, {rb}}, {1, ""});
  ASSERT_EQ(c.groups.size(), 1u);
  const Group& g = c.groups[0];
  EXPECT_EQ(g.baseline, 1u);
  ASSERT_EQ(g.differences.size(), 1u);
  EXPECT_TRUE(g.differences[0].mpiOverhead);
  EXPECT_EQ(g.differences[0].label, "MPI overhead");
  ASSERT_EQ(g.rows.size(), 4u);  // 0, 1, 2, 4: union
  EXPECT_EQ(g.rows[0].bytes, 0u);
  EXPECT_FALSE(g.rows[0].values[0]);
  EXPECT_FALSE(g.rows[0].complete());
  EXPECT_DOUBLE_EQ(*g.rows[1].cells[0].absolute, 1.0);
  EXPECT_DOUBLE_EQ(*g.rows[1].cells[0].percent, 10.0);
  EXPECT_DOUBLE_EQ(*g.rows[2].cells[0].absolute, 2.0);
  EXPECT_FALSE(g.rows[3].cells[0].absolute);
  EXPECT_EQ(g.rows[3].bytes, 4u);

  std::ostringstream table;
  writeComparison(c, "table", table);
  EXPECT_NE(table.str().find("MPI_overhead[1]us"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("only in [1]"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("only in [2]"), std::string::npos) << table.str();

  std::ostringstream js;
  writeComparison(c, "json", js);
  auto doc = nlohmann::json::parse(js.str());
  EXPECT_EQ(doc["groups"][0]["differences"][0]["label"], "MPI overhead");
  EXPECT_EQ(doc["groups"][0]["rows"][1]["bytes"], 1);
  EXPECT_DOUBLE_EQ(doc["groups"][0]["rows"][1]["differences"][0]["absolute"].get<double>(), 1.0);
  EXPECT_TRUE(doc["groups"][0]["rows"][0]["values"][0].is_null());
  EXPECT_EQ(doc["groups"][0]["rows"][0]["only_in"], nlohmann::json::array({1}));

  std::ostringstream csv;
  writeComparison(c, "csv", csv);
  std::string line;
  size_t lines = 0;
  std::istringstream in(csv.str());
  while (std::getline(in, line))
    ++lines;
  EXPECT_EQ(lines, 1u + 4u * 2u);  // header + (sizes x inputs)
  EXPECT_THROW(writeComparison(c, "osu", csv), UsageError);
}

TEST(CompareAlign, BandwidthLostAndPlainDifference) {
  auto osu = makeSeries("osu", Source::kOsu, Metric::kBandwidth, "bandwidth", {{1024, 900.0}});
  auto rb = makeSeries("rb", Source::kRdmabench, Metric::kBandwidth, "bandwidth", {{1024, 1000.0}});
  auto pt = makeSeries("pt", Source::kPerftest, Metric::kBandwidth, "bandwidth", {{1024, 1100.0}});
  Comparison c = compareSeries({{rb}, {osu}, {pt}});
  const Group& g = c.groups[0];
  ASSERT_EQ(g.differences.size(), 2u);
  EXPECT_EQ(g.differences[0].unit, "MB/s lost");
  EXPECT_DOUBLE_EQ(*g.rows[0].cells[0].absolute, 100.0);
  EXPECT_DOUBLE_EQ(*g.rows[0].cells[0].percent, 10.0);
  EXPECT_FALSE(g.differences[1].mpiOverhead);
  EXPECT_DOUBLE_EQ(*g.rows[0].cells[1].absolute, 100.0);  // 1100 - 1000
}

TEST(CompareAlign, RatioInEveryFormat) {
  Comparison c = compareSeries({{makeSeries("tree.json", Source::kRdmabench, Metric::kCollective,
                                            "allreduce", {{8, 5.0}, {16, 6.0}})},
                                {makeSeries("sharp.json", Source::kRdmabench, Metric::kCollective,
                                            "allreduce", {{8, 2.0}, {16, 3.0}})}});
  std::ostringstream table, js, csv;
  writeComparison(c, "table", table);
  EXPECT_NE(table.str().find("# ratio [2]: [2] / [1]"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("ratio[2]"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("-60.00     0.400"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("-50.00     0.500"), std::string::npos) << table.str();
  writeComparison(c, "json", js);
  auto doc = nlohmann::json::parse(js.str());
  EXPECT_DOUBLE_EQ(doc["groups"][0]["rows"][0]["differences"][0]["ratio"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(doc["groups"][0]["rows"][1]["differences"][0]["ratio"].get<double>(), 0.5);
  writeComparison(c, "csv", csv);
  EXPECT_NE(csv.str().find("diff_percent,diff_ratio,note\n"), std::string::npos) << csv.str();
  EXPECT_NE(csv.str().find(",-60,0.4,"), std::string::npos) << csv.str();
}

TEST(CompareAlign, FixturesVerbsVsTcp) {
  Comparison c = compareSeries(
      {parseFixture("osu_latency_verbs_rxm.txt"), parseFixture("osu_latency_tcp_rxm.txt")});
  const Group& g = c.groups[0];
  EXPECT_EQ(g.rows.size(), 23u);
  EXPECT_FALSE(g.differences[0].mpiOverhead);  // both MPI: a plain difference
  EXPECT_NEAR(*g.rows[0].cells[0].absolute, 16.07 - 11.01, 1e-9);
}

TEST(CompareAlign, ImbAgainstOsuCollectives) {
  // IMB ran Allreduce at 2 and 4 processes, OSU prints no count: compare refuses to guess.
  EXPECT_THROW(compareSeries({parseFixture("imb_pingpong_allreduce_barrier.txt"),
                              parseFixture("osu_allreduce.txt"), parseFixture("osu_barrier.txt")}),
               UsageError);
  CompareOptions np4;
  np4.np = 4;
  Comparison c = compareSeries({parseFixture("imb_pingpong_allreduce_barrier.txt"),
                                parseFixture("osu_allreduce.txt"), parseFixture("osu_barrier.txt")},
                               np4);
  ASSERT_EQ(c.groups.size(), 2u);
  EXPECT_EQ(c.groups[0].test, "allreduce");
  EXPECT_EQ(c.groups[0].inputs.size(), 2u);  // IMB np4, OSU
  EXPECT_EQ(c.groups[0].inputs[0].processes, 4);
  EXPECT_EQ(c.groups[1].test, "barrier");
  EXPECT_FALSE(c.groups[1].sized);
  EXPECT_NEAR(*c.groups[1].rows[0].cells[0].absolute, 0.0, 1e-9);  // 4.17 vs 4.17
  bool noted = false;
  for (const auto& n : c.notes)
    noted = noted || n.find("latency has no counterpart") != n.npos;
  EXPECT_TRUE(noted);
  CompareOptions onlyAllreduce;
  onlyAllreduce.test = "allreduce";
  onlyAllreduce.section = 2;  // the np 2 table
  Comparison only = compareSeries(
      {parseFixture("imb_pingpong_allreduce_barrier.txt"), parseFixture("osu_allreduce.txt")},
      onlyAllreduce);
  EXPECT_EQ(only.groups[0].inputs[0].processes, 2);
  EXPECT_EQ(only.groups.size(), 1u);
}

TEST(CompareAlign, MismatchesAreClearErrors) {
  auto lat = makeSeries("a.txt", Source::kOsu, Metric::kLatency, "latency", {{1, 1.0}});
  auto bw = makeSeries("b.txt", Source::kOsu, Metric::kBandwidth, "bandwidth", {{1, 1.0}});
  try {
    compareSeries({{lat}, {bw}});
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("latency cannot be compared with bandwidth"),
              std::string::npos)
        << e.what();
  }
  auto far = makeSeries("c.txt", Source::kRdmabench, Metric::kLatency, "latency", {{1024, 1.0}});
  try {
    compareSeries({{lat}, {far}});
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no message size in common"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("c.txt has 1024 B"), std::string::npos) << e.what();
  }
  EXPECT_THROW(compareSeries({{lat}}), UsageError);
  EXPECT_THROW(compareSeries({{lat}, {lat}}, {0, "allreduce"}), UsageError);
}

TEST(ComparePlot, ScriptShape) {
  auto a = parseFixture("osu_latency_verbs_rxm.txt");
  auto b = parseFixture("osu_bw_verbs_rxm.txt");
  auto bar = parseFixture("osu_barrier.txt");
  PlotOptions o;
  o.output = "out.svg";
  PlotScript s = gnuplotScript({a[0], b[0], bar[0]}, o);
  EXPECT_EQ(s.panels, 2);
  EXPECT_NE(s.text.find("set terminal svg size 800,600"), std::string::npos);
  EXPECT_NE(s.text.find("set multiplot layout 2,1"), std::string::npos);
  EXPECT_NE(s.text.find("4194304 1315.29"), std::string::npos);
  EXPECT_NE(s.text.find("set logscale y 10"), std::string::npos);
  EXPECT_EQ(s.skipped.size(), 1u);  // the barrier
  EXPECT_EQ(terminalFor("X.PNG"), "pngcairo");
  EXPECT_THROW(terminalFor("x.jpg"), UsageError);
  o.output = "it's.png";
  EXPECT_NE(gnuplotScript({a[0]}, o).text.find("set output './it''s.png'"), std::string::npos);
  EXPECT_THROW(gnuplotScript({bar[0]}, o), UsageError);
}

TEST(ComparePlot, RendersPngOfTheRequestedSize) {
  if (findGnuplot().empty()) GTEST_SKIP() << "gnuplot not installed (Debian: gnuplot-nox)";
  fs::path out =
      fs::temp_directory_path() / ("rdmabench-plot-test-" + std::to_string(getpid()) + ".png");
  PlotOptions o;
  o.output = out.string();
  o.width = 640;
  o.height = 400;
  renderPlot(gnuplotScript(parseFixture("osu_latency_verbs_rxm.txt"), o), o);
  std::ifstream in(out, std::ios::binary);
  unsigned char h[24] = {};
  in.read(reinterpret_cast<char*>(h), sizeof h);
  ASSERT_EQ(in.gcount(), 24);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(h) + 1, 3), "PNG");
  auto be32 = [&](int at) {
    return (uint32_t{h[at]} << 24) | (uint32_t{h[at + 1]} << 16) | (uint32_t{h[at + 2]} << 8) |
           uint32_t{h[at + 3]};
  };
  EXPECT_EQ(be32(16), 640u);
  EXPECT_EQ(be32(20), 400u);
  fs::remove(out);
}

TEST(ComparePlot, MissingGnuplotIsOneLineError) {
  setenv("RDMABENCH_GNUPLOT", "/nonexistent/gnuplot", 1);
  PlotOptions o;
  o.output = "/tmp/never.png";
  try {
    renderPlot(gnuplotScript(parseFixture("osu_latency_verbs_rxm.txt"), o), o);
    unsetenv("RDMABENCH_GNUPLOT");
    FAIL() << "no throw";
  } catch (const Error& e) {
    unsetenv("RDMABENCH_GNUPLOT");
    std::string m = e.what();
    EXPECT_NE(m.find("gnuplot not found"), std::string::npos) << m;
    EXPECT_NE(m.find("gnuplot-nox"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace rdmabench::compare
