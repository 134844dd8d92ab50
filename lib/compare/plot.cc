#include "compare/plot.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/json_read.h"
#include "common/text_escape.h"
#include "compare/text_util.h"

namespace rdmabench::compare {

namespace {

constexpr int64_t kGnuplotTimeoutMs = 60'000;

std::string axisLabel(Metric m) {
  switch (m) {
    case Metric::kLatency:
      return "Latency (us)";
    case Metric::kBandwidth:
      return "Bandwidth (MB/s = 10^6 B/s)";
    case Metric::kCollective:
      return "Time per call (us)";
  }
  return "";
}

}  // namespace

std::string terminalFor(const std::string& output, const std::string& option) {
  (void)gnuplotOutputPath(output, option);  // UsageError for a name gnuplot cannot hold
  std::string l = detail::lower(output);
  if (l.ends_with(".png")) return "pngcairo";
  if (l.ends_with(".svg")) return "svg";
  throw UsageError(fmt::format("{} {}: the plot file must end in .png or .svg", option,
                               escapeForLog(output, 200)));
}

void checkPlotOutput(const std::string& output, const std::string& option) {
  size_t slash = output.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : output.substr(0, slash));
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw UsageError(fmt::format("{} {}: cannot write the plot: directory {} does not exist",
                                 option, escapeForLog(output, 200), escapeForLog(dir, 200)));
  if (access(dir.c_str(), W_OK) != 0)
    throw UsageError(fmt::format("{} {}: cannot write the plot: directory {} is not writable",
                                 option, escapeForLog(output, 200), escapeForLog(dir, 200)));
  if (stat(output.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw UsageError(fmt::format("{} {}: cannot write the plot: it is a directory", option,
                                 escapeForLog(output, 200)));
}

std::string seriesKey(const Series& s) {
  std::string k = sourceName(s.source);
  if (!s.toolVersion.empty()) k += " " + s.toolVersion;
  if (s.source == Source::kRdmabench && !s.transport.empty()) k += " " + s.transport;
  // Appended piecewise: `" " + s.title.substr(9)` (literal + string&&) makes GCC 12 -O3 warn
  // -Wrestrict (a false positive, GCC PR105329).
  if (s.source == Source::kImb && s.title.starts_with("IMB-MPI1 "))
    k.append(" ").append(std::string_view(s.title).substr(9));
  if (!s.variant.empty()) k.append(" [").append(s.variant).append("]");
  if (s.processes) k += fmt::format(", {} procs", *s.processes);
  k += isMpi(s.source) ? " (MPI)" : " (no MPI)";
  return k;
}

std::string sizeTics(uint64_t lo, uint64_t hi) {
  if (lo == 0) lo = 1;
  if (hi < lo) hi = lo;
  int a = 0, b = 0;
  while ((uint64_t{1} << a) < lo && a < 62)
    ++a;
  while (a > 0 && (uint64_t{1} << a) > lo)
    --a;
  while ((uint64_t{1} << b) < hi && b < 62)
    ++b;
  int step = 1;
  while ((b - a) / step > 10)
    step *= 2;
  std::string tics;
  for (int e = a; e <= b; e += step) {
    uint64_t v = uint64_t{1} << e;
    std::string label = e < 10   ? fmt::format("{} B", v)
                        : e < 20 ? fmt::format("{} KiB", v >> 10)
                        : e < 30 ? fmt::format("{} MiB", v >> 20)
                                 : fmt::format("{} GiB", v >> 30);
    tics += fmt::format("{}\"{}\" {}", tics.empty() ? "" : ", ", label, v);
  }
  return "set xtics (" + tics + ")";
}

namespace {

// The data panels of a plot: one per test, in order of first appearance.
struct Panels {
  std::vector<std::string> tests;
  std::vector<std::vector<size_t>> members;  // per panel: indices of data blocks
  std::vector<Metric> metrics;               // per panel
  std::vector<std::string> keys;             // per data block: its legend text
};

// Writes one inline data block ($dN) per sized series with points to `s` and returns the panels;
// what is left out goes to out.skipped. UsageError when nothing is left to plot.
Panels dataBlocks(const std::vector<Series>& series, std::ostream& s, PlotScript& out) {
  Panels d;
  std::vector<std::string>& tests = d.tests;
  std::vector<std::vector<size_t>>& members = d.members;
  std::vector<Metric>& metrics = d.metrics;
  std::vector<std::string>& keys = d.keys;
  for (const Series& x : series) {
    if (!x.sized) {
      out.skipped.push_back(
          fmt::format("{}: {} has no message sizes; not plotted", x.label, x.test));
      continue;
    }
    std::string data;
    size_t zero = 0;
    for (const Point& p : x.points) {
      if (p.bytes == 0 || p.value <= 0) {
        ++zero;
        continue;
      }
      data += fmt::format("{} {:.9g}\n", p.bytes, p.value);
    }
    if (zero)
      out.skipped.push_back(
          fmt::format("{}: {} point(s) at 0 bytes or 0 left out (log axis)", x.label, zero));
    if (data.empty()) continue;
    size_t block = keys.size();
    s << fmt::format("$d{} << EOD\n{}EOD\n", block, data);
    keys.push_back(seriesKey(x));
    size_t panel = 0;
    while (panel < tests.size() && tests[panel] != x.test)
      ++panel;
    if (panel == tests.size()) {
      tests.push_back(x.test);
      members.emplace_back();
      metrics.push_back(x.metric);
    }
    members[panel].push_back(block);
  }
  if (tests.empty()) {
    std::string why;
    for (const std::string& k : out.skipped)
      why += (why.empty() ? "" : "; ") + k;
    throw UsageError(fmt::format("plot: nothing to plot: {}", why.empty() ? "no rows" : why));
  }
  // Identical legend texts (two runs of one tool) get their input label.
  for (size_t i = 0; i < keys.size(); ++i)
    for (size_t j = i + 1; j < keys.size(); ++j)
      if (keys[i] == keys[j]) keys[j] += " #" + std::to_string(j + 1);
  return d;
}

// One plot command per data panel (log x; bandwidth linear y from 0, times log y).
void plotPanels(std::ostream& s, const Panels& d, int panels, const PlotOptions& options) {
  for (size_t p = 0; p < d.tests.size(); ++p) {
    Metric m = d.metrics[p];
    std::string title = m == Metric::kBandwidth ? "Bandwidth vs message size"
                        : m == Metric::kLatency ? "Latency vs message size"
                                                : d.tests[p] + " time vs message size";
    if (panels > 1 || options.title.empty())
      s << "set title " << gnuplotString(panels > 1 ? d.tests[p] + ": " + title : title) << "\n";
    else
      s << "set title " << gnuplotString(options.title) << "\n";
    s << "set ylabel " << gnuplotString(axisLabel(m)) << "\n";
    if (m == Metric::kBandwidth)
      s << "unset logscale y\nset yrange [0:*]\nset format y '%g'\n";
    else
      s << "set logscale y 10\nset yrange [*:*]\nset format y '%g'\n";
    s << "plot ";
    for (size_t k = 0; k < d.members[p].size(); ++k) {
      size_t b = d.members[p][k];
      s << (k ? ", \\\n     " : "")
        << fmt::format("$d{} using 1:2 with linespoints lw 2 pt 7 ps 0.6 title {}", b,
                       gnuplotString(d.keys[b]));
    }
    s << "\n";
  }
}

// MPI overhead per size, one panel per test of `ohTests`: absolute on the left axis, percent on
// the right; data blocks numbered from `block`.
void plotOverheads(std::ostream& s, const std::vector<std::string>& ohTests, size_t block,
                   const PlotOptions& options) {
  for (const std::string& t : ohTests) {
    std::string unit;
    std::vector<std::pair<size_t, std::string>> curves;  // data block, key
    for (const OverheadCurve& c : options.overheads) {
      if (c.test != t || c.points.empty()) continue;
      unit = c.unit;
      std::string data;
      for (const OverheadCurve::Point& p : c.points)
        if (p.bytes > 0)
          data += fmt::format("{} {:.9g} {}\n", p.bytes, p.absolute,
                              p.percent ? fmt::format("{:.9g}", *p.percent) : std::string("NaN"));
      if (data.empty()) continue;
      s << fmt::format("$d{} << EOD\n{}EOD\n", block, data);
      curves.emplace_back(block++, c.key);
    }
    if (curves.empty()) continue;
    s << "set title "
      << gnuplotString(t + ": MPI overhead per size (positive = MPI costs that much)") << "\n";
    s << "unset logscale y\nset yrange [*:*]\nset format y '%g'\n";
    s << "set ylabel " << gnuplotString("MPI overhead (" + unit + ")") << "\n";
    s << "set y2label 'MPI overhead (%)'\nset y2tics\nset ytics nomirror\n";
    s << "plot ";
    for (size_t k = 0; k < curves.size(); ++k) {
      s << (k ? ", \\\n     " : "")
        << fmt::format(
               "$d{0} using 1:2 axes x1y1 with linespoints lw 2 pt 7 ps 0.6 title {1}, "
               "$d{0} using 1:3 axes x1y2 with linespoints lw 1 dt 2 pt 6 ps 0.6 title {2}",
               curves[k].first, gnuplotString(curves[k].second + " (" + unit + ")"),
               gnuplotString(curves[k].second + " (%)"));
    }
    s << "\nunset y2tics\nunset y2label\nset ytics mirror\n";
  }
}

}  // namespace

PlotScript gnuplotScript(const std::vector<Series>& series, const PlotOptions& options) {
  PlotScript out;
  std::string terminal = terminalFor(options.output);
  std::ostringstream s;
  s << "# rdmabench plot (gnuplot script; data inline)\n";
  s << "@TERMINAL@\n";  // the height depends on the panel count (autoHeight)
  s << "set output " << gnuplotOutputPath(options.output, "-o") << "\n";

  const Panels d = dataBlocks(series, s, out);
  // Overhead panels: one per test that has overhead curves.
  std::vector<std::string> ohTests;
  for (const OverheadCurve& c : options.overheads)
    if (!c.points.empty() && std::find(ohTests.begin(), ohTests.end(), c.test) == ohTests.end())
      ohTests.push_back(c.test);
  out.panels = static_cast<int>(d.tests.size() + ohTests.size());
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const Series& x : series)
    for (const Point& p : x.points)
      if (x.sized && p.bytes > 0) lo = std::min(lo, p.bytes), hi = std::max(hi, p.bytes);

  s << "set grid\nset key below\nset xlabel 'Message size'\n"
       "set logscale x 2\n"
    << sizeTics(lo, hi) << "\n";
  // A little room at both ends so the first and last points (and tics) are not on the border.
  if (hi > 0)
    s << fmt::format("set xrange [{:g}:{:g}]\n", static_cast<double>(lo) / 1.25,
                     static_cast<double>(hi) * 1.25);
  if (out.panels > 1) {
    int cols = out.panels > 3 ? 2 : 1;
    int rows = (out.panels + cols - 1) / cols;
    s << fmt::format("set multiplot layout {},{}{}\n", rows, cols,
                     options.title.empty() ? "" : " title " + gnuplotString(options.title));
  }
  plotPanels(s, d, out.panels, options);
  plotOverheads(s, ohTests, d.keys.size(), options);
  if (out.panels > 1) s << "unset multiplot\n";
  s << "set output\n";
  out.text = s.str();
  int height = options.height;
  if (options.autoHeight) height = std::min(10000, std::max(options.height, 380 * out.panels));
  std::string term =
      terminal == "pngcairo"
          ? fmt::format("set terminal pngcairo size {},{} noenhanced font ',10'", options.width,
                        height)
          : fmt::format("set terminal svg size {},{} dynamic noenhanced font 'sans,10'",
                        options.width, height);
  out.text.replace(out.text.find("@TERMINAL@"), 10, term);
  return out;
}

std::string findGnuplot() {
  if (const char* env = std::getenv("RDMABENCH_GNUPLOT"); env && *env) {
    return access(env, X_OK) == 0 ? std::string(env) : std::string();
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/gnuplot";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

void renderPlot(const PlotScript& script, const PlotOptions& options) {
  const std::string gnuplot = findGnuplot();
  if (gnuplot.empty()) {
    const char* env = std::getenv("RDMABENCH_GNUPLOT");
    throw Error(fmt::format("plot: gnuplot not found ({}); install Debian's gnuplot-nox package",
                            env && *env ? fmt::format("RDMABENCH_GNUPLOT={} is not executable", env)
                                        : std::string("not on $PATH")));
  }
  const char* tmpdir = std::getenv("TMPDIR");
  std::string dirTemplate =
      std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/rdmabench-plot.XXXXXX";
  if (!mkdtemp(dirTemplate.data())) throw SystemError("plot: mkdtemp " + dirTemplate, errno);
  const std::string dir = dirTemplate;
  const std::string scriptPath = dir + "/plot.gp", errPath = dir + "/gnuplot.err";
  struct Cleanup {
    std::string dir, a, b;
    ~Cleanup() {
      unlink(a.c_str());
      unlink(b.c_str());
      rmdir(dir.c_str());
    }
  } cleanup{dir, scriptPath, errPath};
  {
    std::ofstream f(scriptPath);
    f << script.text;
    if (!f) throw SystemError("plot: write " + scriptPath, errno);
  }
  if (unlink(options.output.c_str()) != 0 && errno != ENOENT)
    throw SystemError("plot: cannot replace " + options.output, errno);

  pid_t pid = fork();
  if (pid < 0) throw SystemError("plot: fork for gnuplot", errno);
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen(errPath.c_str(), "w", stderr)) _exit(126);
    execl(gnuplot.c_str(), "gnuplot", scriptPath.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  Deadline deadline(kGnuplotTimeoutMs);
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) throw SystemError("plot: waitpid gnuplot", errno);
    if (interrupted() || deadline.expired()) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      throwIfInterrupted("plot: waiting for gnuplot");
      throw TimeoutError(
          fmt::format("plot: {} did not finish within {} s", gnuplot, kGnuplotTimeoutMs / 1000));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string firstError;
  {
    std::ifstream err(errPath);
    std::string line;
    while (std::getline(err, line)) {
      std::string t = detail::trim(line);
      if (t.empty() || t.find_first_not_of('^') == std::string::npos) continue;
      if (firstError.empty() || t.find("error") != std::string::npos ||
          t.find("line ") != std::string::npos)
        firstError = t;
      if (t.find("line ") != std::string::npos) break;
    }
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    throw Error(fmt::format("plot: {} failed (exit {}){}", gnuplot, code,
                            firstError.empty() ? "" : ": " + firstError));
  }
  struct stat st {};
  if (stat(options.output.c_str(), &st) != 0 || st.st_size == 0)
    throw Error(fmt::format("plot: {} wrote no {}{}", gnuplot, options.output,
                            firstError.empty() ? "" : ": " + firstError));
}

}  // namespace rdmabench::compare
