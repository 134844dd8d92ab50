#include "compare/plot.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "compare/text_util.h"

namespace rdmabench::compare {

namespace {

constexpr int64_t kGnuplotTimeoutMs = 60'000;

// A gnuplot single-quoted string: '' stands for one quote; no escapes are interpreted.
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\n' || c == '\r') continue;
    q += c == '\'' ? std::string("''") : std::string(1, c);
  }
  return q + "'";
}

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

std::string terminalFor(const std::string& output) {
  std::string l = detail::lower(output);
  if (l.ends_with(".png")) return "pngcairo";
  if (l.ends_with(".svg")) return "svg";
  throw UsageError(fmt::format("-o {}: the plot file must end in .png or .svg", output));
}

PlotScript gnuplotScript(const std::vector<Series>& series, const PlotOptions& options) {
  PlotScript out;
  std::string terminal = terminalFor(options.output);
  std::ostringstream s;
  s << "# rdmabench plot (gnuplot script; data inline)\n";
  if (terminal == "pngcairo")
    s << fmt::format("set terminal pngcairo size {},{} noenhanced font ',10'\n", options.width,
                     options.height);
  else
    s << fmt::format("set terminal svg size {},{} dynamic noenhanced font 'sans,10'\n",
                     options.width, options.height);
  s << "set output " << quoted(options.output) << "\n";

  // Data blocks, and the panels in order of first appearance.
  std::vector<std::string> tests;
  std::vector<std::vector<size_t>> members;  // per panel: indices of data blocks
  std::vector<Metric> metrics;
  std::vector<std::string> keys;
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
    keys.push_back(x.label);
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
  if (tests.empty()) throw UsageError("plot: nothing to plot (no input has sized, non-zero rows)");
  out.panels = static_cast<int>(tests.size());

  s << "set grid\nset key top left\nset xlabel 'Message size (bytes)'\n"
       "set logscale x 2\nset format x '%.0b%BB'\n";
  if (out.panels > 1) {
    int cols = out.panels > 2 ? 2 : 1;
    int rows = (out.panels + cols - 1) / cols;
    s << fmt::format("set multiplot layout {},{}{}\n", rows, cols,
                     options.title.empty() ? "" : " title " + quoted(options.title));
  }
  for (size_t p = 0; p < tests.size(); ++p) {
    Metric m = metrics[p];
    std::string title = m == Metric::kBandwidth ? "Bandwidth vs message size"
                        : m == Metric::kLatency ? "Latency vs message size"
                                                : tests[p] + " time vs message size";
    if (out.panels > 1 || options.title.empty())
      s << "set title " << quoted(out.panels > 1 ? tests[p] + ": " + title : title) << "\n";
    else
      s << "set title " << quoted(options.title) << "\n";
    s << "set ylabel " << quoted(axisLabel(m)) << "\n";
    if (m == Metric::kBandwidth)
      s << "unset logscale y\nset yrange [0:*]\nset format y '%g'\n";
    else
      s << "set logscale y 10\nset yrange [*:*]\nset format y '%g'\n";
    s << "plot ";
    for (size_t k = 0; k < members[p].size(); ++k) {
      size_t b = members[p][k];
      s << (k ? ", \\\n     " : "")
        << fmt::format("$d{} using 1:2 with linespoints lw 2 pt 7 ps 0.6 title {}", b,
                       quoted(keys[b]));
    }
    s << "\n";
  }
  if (out.panels > 1) s << "unset multiplot\n";
  s << "set output\n";
  out.text = s.str();
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
