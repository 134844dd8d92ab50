#pragma once
// Plots through gnuplot (Debian's gnuplot-nox): latency / collective time vs size (log-log) and
// bandwidth vs size (log x, linear y), one line per input series. Several test kinds give one
// panel each (gnuplot multiplot). Size-less series (barrier) and 0-byte points cannot sit on a
// log size axis and are left out (listed in PlotScript::skipped).
// Thread-safety: pure functions, except renderPlot, which runs a child process.

#include <string>
#include <vector>

#include "compare/dataset.h"

namespace rdmabench::compare {

struct PlotOptions {
  std::string output;  // path ending in .png or .svg (case-insensitive)
  int width = 800;     // pixels
  int height = 600;    // pixels
  std::string title;   // optional overall title
};

struct PlotScript {
  std::string text;                  // complete gnuplot script, data inline ($dN << EOD)
  int panels = 0;                    // sub-plots
  std::vector<std::string> skipped;  // one-line reasons for series/points left out
};

// "pngcairo" for .png, "svg" for .svg; UsageError naming -o and the valid endings otherwise.
std::string terminalFor(const std::string& output);

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
