// `rdmabench compare` and `rdmabench plot` (docs/compare.md): read rdmabench JSON, OSU, IMB-MPI1
// and perftest outputs, line them up by test and message size, print the differences (MPI
// overhead when one side ran under MPI), and plot them through gnuplot.

#include <sys/stat.h>
#include <boost/program_options.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "cli/help_gen.h"
#include "cli/options.h"
#include "common/error.h"
#include "common/json_read.h"
#include "common/output.h"
#include "common/units.h"
#include "compare/compare.h"
#include "compare/parse.h"
#include "compare/plot.h"
#include "compare/text_util.h"
#include "tools/rdmabench/commands.h"

namespace rdmabench {
namespace {

namespace po = boost::program_options;

// "800x600" -> width, height (16..10000 pixels each).
void parsePixels(const std::string& text, compare::PlotOptions& plot) {
  size_t x = text.find_first_of("xX");
  if (x == std::string::npos)
    throw UsageError(fmt::format("--size {}: expected WIDTHxHEIGHT in pixels, e.g. 800x600", text));
  plot.width = static_cast<int>(cli::parseUnsigned(text.substr(0, x), "--size width", 16, 10000));
  plot.height =
      static_cast<int>(cli::parseUnsigned(text.substr(x + 1), "--size height", 16, 10000));
}

bool sameFile(const std::string& a, const std::string& b) {
  if (a == b) return true;
  struct stat sa {
  }, sb{};
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// -o, --plot and --script are written after the inputs are read: naming an input (by path,
// symlink or hard link) or each other would overwrite it with the table, the image or the
// script. UsageError naming both options and the path. Empty paths and stdout ("-") pass.
void checkOutputsApart(const std::vector<std::string>& inputs,
                       const std::vector<std::pair<std::string, std::string>>& outputs) {
  auto same = [](const std::string& a, const std::string& b) {
    if (sameFile(a, b)) return true;
    std::error_code e1, e2;
    const auto ca = std::filesystem::weakly_canonical(std::filesystem::absolute(a, e1), e1);
    const auto cb = std::filesystem::weakly_canonical(std::filesystem::absolute(b, e2), e2);
    return !e1 && !e2 && ca == cb;
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [option, path] = outputs[i];
    if (path.empty() || path == "-") continue;
    for (const std::string& in : inputs)
      if (same(path, in))
        throw UsageError(
            fmt::format("{} {}: the same file as the input {} (it would be overwritten)", option,
                        escapeForLog(path, 200), escapeForLog(in, 200)));
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[j].second.empty() && outputs[j].second != "-" && same(path, outputs[j].second))
        throw UsageError(fmt::format(
            "{} {} and {} {}: the same file (one would overwrite the other)", option,
            escapeForLog(path, 200), outputs[j].first, escapeForLog(outputs[j].second, 200)));
  }
}

void printNotes(const std::vector<std::string>& notes) {
  for (const std::string& n : notes)
    std::cerr << "rdmabench: note: " << n << "\n";
}

void render(const compare::PlotScript& script, const compare::PlotOptions& plot,
            const std::string& scriptPath) {
  if (!scriptPath.empty()) {
    std::ofstream f(scriptPath);
    f << script.text;
    if (!f) throw UsageError(fmt::format("--script {}: cannot write", scriptPath));
  }
  printNotes(script.skipped);
  compare::renderPlot(script, plot);
}

void inputOptions(po::options_description& desc) {
  desc.add_options()("max-input", po::value<std::string>(),
                     "refuse inputs larger than SIZE bytes (K/M/G suffixes; default 1G)")(
      "cpu-mhz", po::value<std::string>(),
      "CPU frequency in MHz of a perftest -C run: its cycles are divided by it to give us")(
      "verbose,v", po::bool_switch(), "list every input line skipped or ignored, and why");
}

compare::ReadOptions readOptions(const po::variables_map& vm) {
  compare::ReadOptions o;
  if (vm.count("max-input")) {
    o.maxBytes = parseSize(vm["max-input"].as<std::string>(), "--max-input");
    if (o.maxBytes == 0)
      throw UsageError(fmt::format("--max-input {}: must be at least 1 byte",
                                   vm["max-input"].as<std::string>()));
  }
  if (vm.count("cpu-mhz")) {
    const std::string& text = vm["cpu-mhz"].as<std::string>();
    std::optional<double> mhz = compare::detail::parseNumber(text);
    if (!mhz || *mhz < 1 || *mhz > 100000)
      throw UsageError(fmt::format("--cpu-mhz {}: expected a CPU frequency in MHz, 1..100000",
                                   escapeForLog(text, 40)));
    o.cpuMhz = mhz;
  }
  return o;
}

// Reads every input; their notes (lines skipped, prefixes stripped, ...) go to stderr and into
// `notes`.
std::vector<std::vector<compare::Series>> readAll(const std::vector<std::string>& paths,
                                                  const po::variables_map& vm,
                                                  std::vector<std::string>& notes) {
  compare::ReadOptions options = readOptions(vm);
  bool verbose = vm.count("verbose") && vm["verbose"].as<bool>();
  std::vector<std::vector<compare::Series>> files;
  for (const std::string& p : paths) {
    compare::ParsedInput in = compare::readFile(p, options);
    for (std::string& n : compare::readNotes(in, p, verbose)) {
      std::cerr << "rdmabench: note: " << n << "\n";
      notes.push_back(std::move(n));
    }
    files.push_back(std::move(in.series));
  }
  return files;
}

void plotOptions(po::options_description& desc) {
  desc.add_options()("size", po::value<std::string>(),
                     "plot size WIDTHxHEIGHT in pixels (default 800x600)")(
      "title", po::value<std::string>(), "plot title")("script", po::value<std::string>(),
                                                       "also write the gnuplot script to FILE");
}

void readPlotOptions(const po::variables_map& vm, compare::PlotOptions& plot, std::string& script) {
  plot.autoHeight = !vm.count("size");
  if (vm.count("size")) parsePixels(vm["size"].as<std::string>(), plot);
  if (vm.count("title")) plot.title = vm["title"].as<std::string>();
  if (vm.count("script")) script = vm["script"].as<std::string>();
}

}  // namespace

cli::OptionGroups compareOptions() {
  po::options_description desc(
      "Usage: rdmabench compare FILE... [--baseline FILE] [options]\n"
      "Lines up results by test and message size: rdmabench --format json, OSU 5.x-7.x, "
      "IMB-MPI1\nand perftest output (detected). One column per input, then the difference to "
      "the baseline;\n\"MPI overhead\" when one input ran under MPI (OSU, IMB) and the other did "
      "not.\n\nOptions");
  desc.add_options()("help,h", "show this help")("baseline,b", po::value<std::string>(),
                                                 "the reference input (default: the first FILE)")(
      "format,f", po::value<std::string>(), "table | json | csv (default table)")(
      "output,o", po::value<std::string>(), "write the comparison to FILE")(
      "test", po::value<std::string>(),
      "compare only this test (latency, bandwidth, bibw, "
      "allreduce, barrier, ...)")("plot", po::value<std::string>(),
                                  "also plot the compared inputs to FILE.png|FILE.svg")(
      "np", po::value<std::string>(),
      "use the tables of N processes/ranks when a file holds several (IMB -npmin); also "
      "asserts that an OSU collective ran N processes (OSU does not print it)")(
      "section", po::value<std::string>(),
      "use table K of a file that holds several tables of a test (compare lists them)");
  inputOptions(desc);
  plotOptions(desc);
  return {desc};
}

cli::OptionGroups plotCommandOptions() {
  po::options_description desc(
      "Usage: rdmabench plot FILE... -o OUT.png|OUT.svg [options]\n"
      "Latency (log-log) or bandwidth vs message size through gnuplot, one line per input "
      "(inputs\nas for `rdmabench compare`; one panel per test kind).\n\nOptions");
  desc.add_options()("help,h", "show this help")("output,o", po::value<std::string>(),
                                                 "the image: FILE.png or FILE.svg (required)")(
      "test", po::value<std::string>(), "plot only this test (latency, bandwidth, ...)");
  inputOptions(desc);
  plotOptions(desc);
  return {desc};
}

int runCompareCommand(const std::vector<std::string>& args) {
  const cli::OptionGroups groups = compareOptions();
  po::options_description hidden;
  hidden.add_options()("files", po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(groups[0]).add(hidden);
  po::positional_options_description pos;
  pos.add("files", -1);
  po::variables_map vm = cli::parseOptions("compare", all, pos, args);
  if (vm.count("help")) {
    std::cout << cli::renderHelp(groups);
    return 0;
  }
  std::vector<std::string> paths;
  if (vm.count("files")) paths = vm["files"].as<std::vector<std::string>>();
  compare::CompareOptions options;
  if (vm.count("baseline")) {
    std::string base = vm["baseline"].as<std::string>();
    size_t i = 0;
    while (i < paths.size() && !sameFile(paths[i], base))
      ++i;
    if (i == paths.size()) paths.insert(paths.begin(), base), i = 0;
    options.baselineFile = i;
  }
  if (paths.size() < 2)
    throw UsageError(fmt::format("compare: needs at least two inputs (got {})", paths.size()));
  std::string format = vm.count("format") ? vm["format"].as<std::string>() : "";
  if (!format.empty() && format != "table" && format != "json" && format != "csv")
    throw UsageError(
        fmt::format("--format {}: unknown for compare (valid: table, json, csv)", format));
  // `-o x.json` without -f: JSON, not a text table in a .json file.
  format = cli::formatForOutput(
      format, vm.count("output") ? cli::parseOutputPath(vm["output"].as<std::string>()) : "");
  if (vm.count("test")) options.test = vm["test"].as<std::string>();
  if (vm.count("np"))
    options.np =
        static_cast<int>(cli::parseUnsigned(vm["np"].as<std::string>(), "--np", 1, 1u << 24));
  if (vm.count("section"))
    options.section = static_cast<int>(
        cli::parseUnsigned(vm["section"].as<std::string>(), "--section", 1, 1u << 20));
  compare::PlotOptions plot;
  std::string script;
  readPlotOptions(vm, plot, script);
  if (vm.count("plot")) {
    plot.output = vm["plot"].as<std::string>();
    // The ending and the directory are checked before any work (and before the table).
    compare::terminalFor(plot.output, "--plot");
    compare::checkPlotOutput(plot.output, "--plot");
  }
  const std::string outputPath =
      vm.count("output") ? cli::parseOutputPath(vm["output"].as<std::string>()) : "";
  checkOutputsApart(paths,
                    {{"--output", outputPath}, {"--plot", plot.output}, {"--script", script}});

  std::vector<std::string> readNotes;
  std::vector<std::vector<compare::Series>> files = readAll(paths, vm, readNotes);
  compare::Comparison comparison = compare::compareSeries(files, options);
  comparison.notes.insert(comparison.notes.begin(), readNotes.begin(), readNotes.end());

  // The plot script is built before the table is printed: a comparison with nothing to plot
  // (barrier only) is refused up front, saying why.
  compare::PlotScript plotScript;
  if (!plot.output.empty()) {
    std::vector<compare::Series> series;
    for (const compare::Group& g : comparison.groups) {
      series.insert(series.end(), g.inputs.begin(), g.inputs.end());
      if (!g.sized) continue;
      for (size_t k = 0; k < g.differences.size(); ++k) {
        const compare::Difference& d = g.differences[k];
        if (!d.mpiOverhead) continue;
        compare::OverheadCurve c;
        c.test = g.test;
        c.unit = d.unit;
        size_t mpi = compare::isMpi(g.inputs[d.of].source) ? d.of : d.to;
        size_t fabric = mpi == d.of ? d.to : d.of;
        // Short (the curves above carry the full names): "OSU 5.3.2 vs rdmabench socket send".
        auto brief = [](const compare::Series& x) {
          std::string name = compare::sourceName(x.source);
          // Appended piecewise (GCC 12 -O3 warned -Wrestrict on `" " + std::string`, a false
          // positive in the inlined operator+, in the README's Release build).
          if (!x.toolVersion.empty() && x.source != compare::Source::kRdmabench)
            name.append(" ").append(x.toolVersion);
          if (!x.transport.empty())
            name.append(" ").append(x.transport.substr(0, x.transport.find(' ')));
          if (!x.variant.empty()) name.append(" [").append(x.variant).append("]");
          return name;
        };
        c.key = fmt::format("{} vs {}", brief(g.inputs[mpi]), brief(g.inputs[fabric]));
        for (const compare::ComparedRow& r : g.rows)
          if (r.cells[k].absolute)
            c.points.push_back({r.bytes, *r.cells[k].absolute, r.cells[k].percent});
        plot.overheads.push_back(std::move(c));
      }
    }
    try {
      plotScript = compare::gnuplotScript(series, plot);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--plot {}: {}", escapeForLog(plot.output, 200), e.what()));
    }
  }

  ResultOutput output(outputPath);
  compare::writeComparison(comparison, format, output.stream());
  output.finish();
  if (!plot.output.empty()) render(plotScript, plot, script);
  return 0;
}

int runPlotCommand(const std::vector<std::string>& args) {
  const cli::OptionGroups groups = plotCommandOptions();
  po::options_description hidden;
  hidden.add_options()("files", po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(groups[0]).add(hidden);
  po::positional_options_description pos;
  pos.add("files", -1);
  po::variables_map vm = cli::parseOptions("plot", all, pos, args);
  if (vm.count("help")) {
    std::cout << cli::renderHelp(groups);
    return 0;
  }
  if (!vm.count("files")) throw UsageError("plot: give at least one input FILE");
  if (!vm.count("output")) throw UsageError("plot: -o FILE.png|FILE.svg is required");
  compare::PlotOptions plot;
  plot.output = vm["output"].as<std::string>();
  compare::terminalFor(plot.output, "-o");
  compare::checkPlotOutput(plot.output, "-o");
  std::string script;
  readPlotOptions(vm, plot, script);
  checkOutputsApart(vm["files"].as<std::vector<std::string>>(),
                    {{"-o", plot.output}, {"--script", script}});
  std::string test = vm.count("test") ? vm["test"].as<std::string>() : "";
  std::vector<compare::Series> series;
  std::vector<std::string> notes;
  for (auto& file : readAll(vm["files"].as<std::vector<std::string>>(), vm, notes))
    for (compare::Series& s : file)
      if (test.empty() || s.test == test) series.push_back(std::move(s));
  if (series.empty()) throw UsageError(fmt::format("--test {}: no input has it", test));
  render(compare::gnuplotScript(series, plot), plot, script);
  return 0;
}

}  // namespace rdmabench
