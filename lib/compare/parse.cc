// The input side of `rdmabench compare`: a bounded byte source, format detection on the first
// decisive line (after a launcher prefix), and the driver that streams lines into the format's
// TableReader (or the document into the JSON reader).

#include "compare/parse.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <streambuf>

#include "common/error.h"
#include "common/json_read.h"
#include "common/units.h"
#include "compare/read_detail.h"
#include "compare/text_input.h"
#include "compare/text_util.h"

namespace rdmabench::compare {

using detail::splitWhitespace;
using detail::trim;

const char* formatName(Format format) {
  switch (format) {
    case Format::kRdmabenchJson:
      return "rdmabench JSON";
    case Format::kOsu:
      return "OSU";
    case Format::kImb:
      return "IMB-MPI1";
    case Format::kPerftest:
      return "perftest";
    case Format::kUnknown:
      break;
  }
  return "unknown";
}

namespace detail {

Format lineFormat(std::string_view line) {
  if (line.empty()) return Format::kUnknown;
  if (line.starts_with("# Benchmarking ") ||
      line.find("Intel(R) MPI Benchmarks") != std::string_view::npos ||
      line.find("Intel (R) MPI Benchmarks") != std::string_view::npos)
    return Format::kImb;
  if (line.starts_with("# OSU") || line.starts_with("# Size") ||
      line.starts_with("# Avg Latency(us)"))
    return Format::kOsu;
  if (line == "#, usec" || line == "#, cycles") return Format::kPerftest;
  if (line[0] != '#') return Format::kUnknown;
  std::vector<std::string> tok = splitWhitespace(line);
  if (tok.size() < 2) return Format::kUnknown;
  if ((tok[0] == "#bytes" && tok[1] == "#repetitions") ||
      (tok[0] == "#repetitions" && tok[1].starts_with("t_")))
    return Format::kImb;
  if (tok[0] == "#bytes" && (line.find("[usec]") != std::string_view::npos ||
                             line.find("[cycles]") != std::string_view::npos ||
                             line.find("BW average[") != std::string_view::npos))
    return Format::kPerftest;
  return Format::kUnknown;
}

void ReadContext::list(uint64_t line, std::string_view reason, std::string_view text) {
  if (report_.listed.size() >= options_.maxListed) {
    ++report_.listedDropped;
    return;
  }
  report_.listed.push_back({line, std::string(reason), escapeForLog(text, 160)});
}

void ReadContext::skipped(uint64_t line, std::string_view text, std::string_view reason) {
  ++report_.skipped;
  auto& r = report_.skippedRanges;
  if (!r.empty() && r.back().second + 1 == line)
    r.back().second = line;
  else if (r.size() < 1000)
    r.emplace_back(line, line);
  list(line, reason, text);
}

void ReadContext::ignored(uint64_t line, std::string_view text, std::string_view reason) {
  ++report_.ignored;
  list(line, reason, text);
}

void ReadContext::repeated(uint64_t line, std::string_view text, uint64_t bytes) {
  ++report_.repeated;
  list(line, fmt::format("size {} repeated in its table; the first row is used", bytes), text);
}

void ReadContext::truncated(uint64_t line, std::string_view text, std::string_view why) {
  ++report_.truncated;
  if (report_.truncatedFirst.empty())
    report_.truncatedFirst = fmt::format("line {} `{}` ({})", line, escapeForLog(text, 60), why);
  list(line, fmt::format("row cut short ({}); dropped", why), text);
}

void ReadContext::rowKept() {
  if (++rows_ > options_.maxRows)
    throw UsageError(fmt::format(
        "{}: more than {} result rows (sizes) in one input; compare keeps at most {} per input "
        "(split the file)",
        path_, options_.maxRows, options_.maxRows));
}

std::string ReadContext::where(uint64_t line) const {
  if (line == 0) return path_;
  return json ? fmt::format("{} row {}", path_, line) : fmt::format("{}:{}", path_, line);
}

bool SeriesBuilder::first(uint64_t bytes, uint64_t line, std::string_view text, ReadContext& ctx) {
  uint64_t key = series.sized ? bytes : 0;
  if (seen_.insert(key).second) {
    ctx.rowKept();
    if (line) {
      if (!series.firstLine) series.firstLine = line;
      series.lastLine = line;
    }
    return true;
  }
  ctx.repeated(line, text, key);
  return false;
}

bool SeriesBuilder::add(const Point& p, uint64_t line, std::string_view text, ReadContext& ctx) {
  // A time or a bandwidth below 0 is not a measurement: refuse the input, naming the line.
  for (const std::optional<double>& v : {std::optional<double>(p.value), p.min, p.max})
    if (v && *v < 0)
      throw UsageError(
          fmt::format("{}: negative {} {} at size {}: not a measurement (a {} cannot be below 0)",
                      ctx.where(line), metricName(series.metric), fmt::format("{:g}", *v), p.bytes,
                      series.metric == Metric::kBandwidth ? "bandwidth" : "time"));
  if (!first(p.bytes, line, text, ctx)) return false;
  series.points.push_back(p);
  return true;
}

void SeriesBuilder::fail(uint64_t bytes, const std::string& why, uint64_t line,
                         std::string_view text, ReadContext& ctx) {
  if (!first(bytes, line, text, ctx)) return;
  series.failures.push_back({series.sized ? bytes : 0, why, line});
}

void SeriesBuilder::warn(uint64_t bytes, const std::string& why, uint64_t line, ReadContext&) {
  series.warnings.push_back({series.sized ? bytes : 0, why, line});
}

}  // namespace detail

namespace {

using detail::ByteSource;
using detail::rtrim;

std::string baseName(const std::string& path) {
  if (path == "-") return "stdin";
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void assignLabels(std::vector<Series>& series, const std::string& path) {
  const std::string base = baseName(path);
  for (Series& s : series)
    s.label = !s.variant.empty()  ? base + "[" + s.variant + "]"
              : series.size() > 1 ? base + ":" + s.test
                                  : base;
  std::map<std::string, int> seen;
  for (const Series& s : series)
    ++seen[s.label];
  for (Series& s : series)
    if (seen[s.label] > 1 && s.processes) s.label += fmt::format("/np{}", *s.processes);
  std::map<std::string, int> count, index;
  for (const Series& s : series)
    ++count[s.label];
  for (Series& s : series)
    if (count[s.label] > 1) s.label += fmt::format("#{}", ++index[s.label]);
}

// Both readInput flavours: `src` is the input's bytes.
ParsedInput readSource(ByteSource& src, const std::string& path, const ReadOptions& options) {
  ParsedInput out;
  ReadReport& rep = out.report;
  detail::ReadContext ctx(rep, options, path);
  // Leading blank space and a UTF-8 byte-order mark, counting the lines they span.
  uint64_t lines = 0;
  for (;;) {
    int c = src.sgetc();
    if (c == std::char_traits<char>::eof()) break;
    if (c == '\n') {
      ++lines;
    } else if (c == '\r') {
      ++lines;
      src.sbumpc();
      if (src.sgetc() == '\n') src.sbumpc();
      continue;
    } else if (c == 0xEF) {
      src.sbumpc();
      if (src.sgetc() == 0xBB) src.sbumpc();
      if (src.sgetc() == 0xBF) src.sbumpc();
      continue;
    } else if (c != ' ' && c != '\t') {
      break;
    }
    src.sbumpc();
  }
  Format format = Format::kUnknown;
  if (src.sgetc() == '{') {
    format = Format::kRdmabenchJson;
    ctx.json = true;
    std::istream in(&src);
    out.series = detail::readRdmabenchJson(in, ctx);
  } else {
    out.series = detail::readTextLines(src, lines, ctx, format);
  }
  rep.format = format;
  rep.bytes = src.total();
  std::erase_if(out.series, [](const Series& s) { return s.points.empty() && s.failures.empty(); });
  if (out.series.empty()) {
    std::string why;
    if (rep.skipped)
      why = fmt::format(" ({} {} not understood, the first at {} {})", rep.skipped,
                        format == Format::kRdmabenchJson ? "row(s)" : "line(s)",
                        format == Format::kRdmabenchJson ? "row" : "line",
                        rep.skippedRanges.empty() ? 0 : rep.skippedRanges.front().first);
    throw UsageError(
        fmt::format("{}: no result rows found in {} output{}", path, formatName(format), why));
  }
  int section = 0;
  for (Series& s : out.series) {
    s.path = path;
    s.section = format == Format::kRdmabenchJson ? 1 : ++section;
    rep.failed += s.failures.size();
    rep.warned += s.warnings.size();
  }
  assignLabels(out.series, path);
  return out;
}

std::string ranges(const std::vector<std::pair<uint64_t, uint64_t>>& r, uint64_t total) {
  std::string s;
  size_t shown = 0, covered = 0;
  for (const auto& [a, b] : r) {
    if (shown == 10) break;
    s += (s.empty() ? "" : ", ") + (a == b ? fmt::format("{}", a) : fmt::format("{}-{}", a, b));
    covered += b - a + 1;
    ++shown;
  }
  if (covered < total) s += ", ...";
  return s;
}

}  // namespace

Format detectFormat(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return Format::kUnknown;
  if (text.substr(first, 3) == "\xEF\xBB\xBF") first += 3;
  if (first < text.size() && text[first] == '{') return Format::kRdmabenchJson;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find_first_of("\r\n", start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = rtrim(text.substr(start, end - start));
    Format f = detail::lineFormat(trim(line));
    if (f == Format::kUnknown) {
      detail::LauncherMatch m = detail::matchLauncher(line);
      if (m.kind != detail::Launcher::kNone) f = detail::lineFormat(trim(line.substr(m.length)));
    }
    if (f != Format::kUnknown) return f;
    start = end + 1;
  }
  return Format::kUnknown;
}

ParsedInput readInput(std::istream& in, const std::string& path, const ReadOptions& options) {
  std::streambuf* sb = in.rdbuf();
  ByteSource src(
      [sb](char* p, size_t n) {
        std::streamsize got = sb ? sb->sgetn(p, static_cast<std::streamsize>(n)) : 0;
        return got > 0 ? static_cast<size_t>(got) : size_t{0};
      },
      options.maxBytes, path);
  return readSource(src, path, options);
}

ParsedInput readText(std::string_view text, const std::string& path, const ReadOptions& options) {
  size_t at = 0;
  ByteSource src(
      [&](char* p, size_t n) {
        size_t k = std::min(n, text.size() - at);
        std::copy_n(text.data() + at, k, p);
        at += k;
        return k;
      },
      options.maxBytes, path);
  return readSource(src, path, options);
}

ParsedInput readFile(const std::string& path, const ReadOptions& options) {
  if (path == "-") return readInput(std::cin, path, options);
  // O_NONBLOCK: opening a FIFO without a writer must not block; cleared below for files.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    throw UsageError(fmt::format("{}: cannot open: {}", path, std::strerror(err)));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw SystemError(fmt::format("fstat {}", path), errno);
  if (S_ISDIR(st.st_mode)) throw UsageError(fmt::format("{}: cannot read: a directory", path));
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > options.maxBytes)
    throw UsageError(fmt::format(
        "{}: {} bytes, larger than the input limit of {} bytes ({}); raise it with --max-input",
        path, st.st_size, options.maxBytes, formatSize(options.maxBytes)));
  // Regular files never block; a FIFO, socket or device is read with poll() and a deadline
  // between reads, so a FIFO nobody writes to is refused instead of hanging.
  const bool waits = !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode);
  if (!waits) {
    int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  const int timeoutMs = options.idleTimeoutMs;
  ByteSource src(
      [fd, &path, waits, timeoutMs](char* p, size_t n) {
        for (;;) {
          if (waits) {
            pollfd pfd{fd, POLLIN, 0};
            int r = ::poll(&pfd, 1, timeoutMs);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) throw SystemError(fmt::format("poll {}", path), errno);
            if (r == 0)
              throw UsageError(
                  fmt::format("{}: nothing to read for {} s (a FIFO or device without a writer?); "
                              "compare reads files, FIFOs with a writer, or - for stdin",
                              path, timeoutMs / 1000.0));
          }
          ssize_t got = ::read(fd, p, n);
          if (got >= 0) return static_cast<size_t>(got);
          if (errno == EINTR || errno == EAGAIN) continue;
          throw SystemError(fmt::format("read {}", path), errno);
        }
      },
      options.maxBytes, path);
  return readSource(src, path, options);
}

std::vector<std::string> readNotes(const ParsedInput& input, const std::string& path,
                                   bool verbose) {
  const ReadReport& r = input.report;
  std::vector<std::string> notes;
  const bool json = r.format == Format::kRdmabenchJson;
  if (!r.launcher.empty())
    notes.push_back(fmt::format(
        "{}: launcher prefix `{}` ({}) stripped{}", path, r.launcherExample, r.launcher,
        r.ignored
            ? fmt::format("; {} line(s) of other ranks, stderr or the launcher ignored", r.ignored)
            : std::string()));
  if (r.skipped)
    notes.push_back(fmt::format("{}: {} {} not understood and skipped ({} {}){}", path, r.skipped,
                                json ? "row(s)" : "line(s)", json ? "rows" : "lines",
                                ranges(r.skippedRanges, r.skipped),
                                verbose ? "" : "; --verbose lists them"));
  if (r.repeated)
    notes.push_back(fmt::format(
        "{}: {} row(s) repeat a size already read in the same table; the first row of each "
        "size is used{}",
        path, r.repeated, verbose ? "" : " (--verbose lists them)"));
  if (r.truncated)
    notes.push_back(fmt::format("{}: {} row(s) cut short and dropped: {}{}", path, r.truncated,
                                r.truncatedFirst, r.truncated > 1 ? ", ..." : ""));
  if (r.failed)
    notes.push_back(fmt::format("{}: {} size(s) reported as failed by the tool, shown as failed",
                                path, r.failed));
  if (r.warned)
    notes.push_back(fmt::format("{}: {} value(s) flagged by the tool, compared with a warning",
                                path, r.warned));
  if (verbose) {
    for (const ListedLine& l : r.listed)
      notes.push_back(
          fmt::format("{}:{}{}: {}: {}", path, json ? "row " : "", l.line, l.reason, l.text));
    if (r.listedDropped)
      notes.push_back(fmt::format("{}: {} more not listed", path, r.listedDropped));
  }
  return notes;
}

std::vector<Series> parseText(std::string_view text, const std::string& path) {
  return readText(text, path).series;
}

std::vector<Series> parseFile(const std::string& path) {
  return readFile(path).series;
}

}  // namespace rdmabench::compare
