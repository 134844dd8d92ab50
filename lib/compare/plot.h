#pragma once
// Plots through gnuplot (Debian's gnuplot-nox): latency / collective time vs size (log-log) and
// bandwidth vs size (log x, linear y), one line per input series. Several test kinds give one
// panel each (gnuplot multiplot). Size-less series (barrier) and 0-byte points cannot sit on a
// log size axis and are left out (listed in PlotScript::skipped).
// Thread-safety: pure functions, except renderPlot, which runs a child process.

#include <optional>
#include <string>
#include <vector>

#include "compare/dataset.h"

namespace rdmabench::compare {

// The MPI overhead of one input against another, per size, for its own panel.
struct OverheadCurve {
  std::string key;   // legend: "[2] OSU 5.3.2 (MPI) vs [1] rdmabench socket"
  std::string test;  // test kind (panel title)
  std::string unit;  // "us" or "MB/s lost"
  struct Point {
    uint64_t bytes = 0;
    double absolute = 0;  // in `unit`
    std::optional<double> percent;
  };
  std::vector<Point> points;
};

struct PlotOptions {
  std::string output;       // path ending in .png or .svg (case-insensitive)
  int width = 800;          // pixels
  int height = 600;         // pixels
  std::string title;        // optional overall title
  bool autoHeight = false;  // grow the height to 380 px per panel (when no --size was given)
  std::vector<OverheadCurve> overheads;  // compare --plot: one extra panel per curve's test
};

struct PlotScript {
  std::string text;                  // complete gnuplot script, data inline ($dN << EOD)
  int panels = 0;                    // sub-plots
  std::vector<std::string> skipped;  // one-line reasons for series/points left out
};

// "pngcairo" for .png, "svg" for .svg; UsageError naming `option` (-o, --plot) and the valid
// endings otherwise, or the control character a gnuplot string cannot hold (gnuplotOutputPath).
std::string terminalFor(const std::string& output, const std::string& option = "-o");

// Checks, before any work, that `output` can be written: its directory exists and is writable.
// UsageError naming `option` and the path otherwise.
void checkPlotOutput(const std::string& output, const std::string& option);

// The legend text of a series: variant label, tool (and version), transport, process count and
// MPI or not, e.g. "rdmabench socket [tcp] (no MPI)", "IMB-MPI1 2021.11 Allreduce, 4 procs (MPI)".
std::string seriesKey(const Series& s);

// Size-axis tics in B / KiB / MiB / GiB for sizes lo..hi (bytes > 0): a gnuplot
// `set xtics (...)` command.
std::string sizeTics(uint64_t lo, uint64_t hi);

// Builds the script for `series` (in order; one panel per distinct Series::test, in order of
// first appearance). Throws UsageError when nothing is left to plot (e.g. only barrier).
PlotScript gnuplotScript(const std::vector<Series>& series, const PlotOptions& options);

// The gnuplot program used: $RDMABENCH_GNUPLOT if set, else "gnuplot" found on $PATH. Returns
// the path, or "" when it cannot be found (or is not executable).
std::string findGnuplot();

// Writes the script to a temporary file, runs gnuplot on it (60 s deadline, Ctrl-C aware) and
// checks that options.output exists and is not empty. Throws Error "plot: gnuplot not found
// ... (install Debian's gnuplot-nox package)" when it is missing, Error with gnuplot's first
// error line when it fails, TimeoutError when it hangs, InterruptedError on Ctrl-C.
void renderPlot(const PlotScript& script, const PlotOptions& options);

}  // namespace rdmabench::compare
