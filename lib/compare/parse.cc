// The input side of `rdmabench compare`: a bounded byte source, format detection on the first
// decisive line (after a launcher prefix), and the driver that streams lines into the format's
// TableReader (or the document into the JSON reader).

#include "compare/parse.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <streambuf>

#include "common/error.h"
#include "common/json_read.h"
#include "common/units.h"
#include "compare/read_detail.h"
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
      line.find("Intel(R) MPI Benchmarks") != std::string_view::npos)
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

bool SeriesBuilder::first(uint64_t bytes, uint64_t line, std::string_view text, ReadContext& ctx) {
  uint64_t key = series.sized ? bytes : 0;
  if (seen_.insert(key).second) return true;
  ctx.repeated(line, text, key);
  return false;
}

bool SeriesBuilder::add(const Point& p, uint64_t line, std::string_view text, ReadContext& ctx) {
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

constexpr size_t kDetectLines = 100000;           // lines read before giving up on detection
constexpr size_t kDetectBytes = size_t{8} << 20;  // bytes held while detecting

// The bytes of one input: from an fd (files, with read errors reported) or a std::streambuf,
// counted, refused beyond ReadOptions::maxBytes. Lines are cut from the buffer without copies of
// the whole input.
class ByteSource : public std::streambuf {
 public:
  using Reader = std::function<size_t(char*, size_t)>;
  ByteSource(Reader read, uint64_t maxBytes, std::string path)
      : read_(std::move(read)), max_(maxBytes), path_(std::move(path)), buf_(65536) {}

  uint64_t total() const { return total_; }

  // Next line without its end (LF, CRLF or CR); false at the end of the input. A line longer
  // than `maxLine` is cut there and `overlong` set.
  bool readLine(std::string& out, size_t maxLine, bool& overlong) {
    out.clear();
    overlong = false;
    bool any = false;
    for (;;) {
      if (gptr() == egptr() && underflow() == traits_type::eof()) return any;
      any = true;
      char* b = gptr();
      char* e = egptr();
      char* p = b;
      while (p < e && *p != '\n' && *p != '\r')
        ++p;
      size_t n = static_cast<size_t>(p - b);
      if (!overlong) {
        if (out.size() + n > maxLine) {
          out.append(b, maxLine - out.size());
          overlong = true;
        } else {
          out.append(b, n);
        }
      }
      setg(eback(), p, e);
      if (p == e) continue;
      char c = *p;
      gbump(1);
      if (c == '\r') {
        if (gptr() == egptr()) underflow();
        if (gptr() < egptr() && *gptr() == '\n') gbump(1);
      }
      return true;
    }
  }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (eof_) return traits_type::eof();
    size_t n = read_(buf_.data(), buf_.size());
    if (n == 0) {
      eof_ = true;
      setg(buf_.data(), buf_.data(), buf_.data());
      return traits_type::eof();
    }
    total_ += n;
    if (total_ > max_)
      throw UsageError(
          fmt::format("{}: larger than the input limit of {} bytes ({}); raise it with --max-input",
                      path_, max_, formatSize(max_)));
    setg(buf_.data(), buf_.data(), buf_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  Reader read_;
  uint64_t max_;
  std::string path_;
  std::vector<char> buf_;
  uint64_t total_ = 0;
  bool eof_ = false;
};

std::string baseName(const std::string& path) {
  if (path == "-") return "stdin";
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void assignLabels(std::vector<Series>& series, const std::string& path) {
  const std::string base = baseName(path);
  for (Series& s : series)
    s.label = series.size() > 1 ? base + ":" + s.test : base;
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

std::string_view rtrim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\v' ||
                        s.back() == '\f' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Where a format marker sits inside a line behind text that is not a recognised launcher
// prefix: the text before it (for the unknown-format error), or empty.
std::string unrecognisedPrefix(std::string_view line, Format& format) {
  for (const char* marker : {"# OSU", "# Benchmarking ", "#bytes", "Intel(R) MPI Benchmarks"}) {
    size_t at = line.find(marker);
    if (at == std::string_view::npos || at == 0) continue;
    std::string_view before = line.substr(0, at);
    if (before.find_first_not_of(" \t") == std::string_view::npos) continue;
    format = detail::lineFormat(trim(line.substr(at)));
    if (format == Format::kUnknown) continue;
    return std::string(before);
  }
  return {};
}

// The text path: detection, launcher prefix, then one TableReader.
std::vector<Series> readTextLines(ByteSource& src, uint64_t firstLine, detail::ReadContext& ctx,
                                  Format& format) {
  using detail::Launcher;
  const ReadOptions& options = ctx.options();
  ReadReport& rep = ctx.report();
  std::unique_ptr<detail::TableReader> reader;
  Launcher launcher = Launcher::kNone;
  std::optional<uint64_t> keepRank;
  std::vector<std::pair<uint64_t, std::string>> pending;  // lines read before detection
  size_t pendingBytes = 0;
  bool gaveUp = false, rdmabenchTable = false;
  std::string seenPrefix, seenPrefixKind;  // a recognised prefix without a marker after it
  std::string oddPrefix;                   // a marker behind an unrecognised prefix
  uint64_t oddLine = 0;
  Format oddFormat = Format::kUnknown;

  auto deliver = [&](uint64_t no, std::string_view text) {
    if (text.empty()) return;
    if (launcher != Launcher::kNone) {
      detail::LauncherMatch m = detail::matchLauncher(text);
      if (m.kind != launcher) {
        ctx.ignored(no, text, "no launcher prefix (the launcher's own message)");
        return;
      }
      if (!m.stream.empty() && m.stream != "stdout") {
        ctx.ignored(no, text, m.stream);
        return;
      }
      if (keepRank && m.rank && *m.rank != *keepRank) {
        ctx.ignored(no, text, fmt::format("rank {}", *m.rank));
        return;
      }
      text = text.substr(m.length);
    }
    reader->line(trim(text), no);
  };

  std::string line;
  bool overlong = false;
  uint64_t no = firstLine;
  while (src.readLine(line, options.maxLineBytes, overlong)) {
    ++no;
    if (overlong) {
      ctx.skipped(no, line, fmt::format("longer than {} bytes", options.maxLineBytes));
      continue;
    }
    std::string_view text = rtrim(line);
    if (reader) {
      deliver(no, text);
      continue;
    }
    std::string t = trim(text);
    Format f = detail::lineFormat(t);
    detail::LauncherMatch m;
    if (f == Format::kUnknown) {
      m = detail::matchLauncher(text);
      if (m.kind != Launcher::kNone) {
        if (seenPrefix.empty()) {
          seenPrefix = std::string(text.substr(0, m.length));
          seenPrefixKind = detail::launcherName(m.kind);
        }
        f = detail::lineFormat(trim(text.substr(m.length)));
        if (f == Format::kUnknown) m = {};
      }
    }
    if (t.find("# rdmabench ") != std::string::npos) rdmabenchTable = true;
    if (f == Format::kUnknown) {
      if (oddPrefix.empty()) {
        oddPrefix = unrecognisedPrefix(text, oddFormat);
        if (!oddPrefix.empty()) oddLine = no;
      }
      pendingBytes += text.size();
      pending.emplace_back(no, std::string(text));
      if (pending.size() >= kDetectLines || pendingBytes >= kDetectBytes) {
        gaveUp = true;
        break;
      }
      continue;
    }
    format = f;
    if (m.kind != Launcher::kNone) {
      launcher = m.kind;
      keepRank = m.rank;
      rep.launcher = detail::launcherName(m.kind);
      rep.launcherExample = escapeForLog(text.substr(0, m.length), 60);
    }
    switch (format) {
      case Format::kOsu:
        reader = detail::makeOsuReader(ctx);
        break;
      case Format::kImb:
        reader = detail::makeImbReader(ctx);
        break;
      default:
        reader = detail::makePerftestReader(ctx);
        break;
    }
    for (const auto& [n, l] : pending)
      deliver(n, l);
    pending.clear();
    deliver(no, text);
  }
  rep.lines = no;
  if (reader) return reader->finish();

  const std::string& path = ctx.path();
  if (rdmabenchTable)
    throw UsageError(fmt::format(
        "{}: rdmabench table output is not read back; rerun with --format json (or osu, imb, "
        "perftest)",
        path));
  const char* recognised =
      "recognised: mpirun --tag-output / --timestamp-output, srun --label, mpiexec "
      "-prepend-rank / mpirun -l";
  if (!oddPrefix.empty())
    throw UsageError(fmt::format(
        "{}: unknown format: line {} holds {} output behind the prefix `{}`, which is not a "
        "recognised launcher prefix ({}); remove it first (e.g. with sed)",
        path, oddLine, formatName(oddFormat), escapeForLog(oddPrefix, 60), recognised));
  if (!seenPrefix.empty())
    throw UsageError(fmt::format(
        "{}: unknown format: its lines carry the launcher prefix `{}` ({}), but no OSU, "
        "IMB-MPI1 or perftest table follows it",
        path, escapeForLog(seenPrefix, 60), seenPrefixKind));
  throw UsageError(fmt::format(
      "{}: unknown format (expected rdmabench --format json, OSU, IMB-MPI1 or perftest "
      "output{})",
      path, gaveUp ? fmt::format("; no table header in the first {} lines", pending.size()) : ""));
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
    std::istream in(&src);
    out.series = detail::readRdmabenchJson(in, ctx);
  } else {
    out.series = readTextLines(src, lines, ctx, format);
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
  for (Series& s : out.series) {
    s.path = path;
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
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw SystemError(fmt::format("open {}", path), errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<uint64_t>(st.st_size) > options.maxBytes)
    throw UsageError(fmt::format(
        "{}: {} bytes, larger than the input limit of {} bytes ({}); raise it with --max-input",
        path, st.st_size, options.maxBytes, formatSize(options.maxBytes)));
  ByteSource src(
      [fd, &path](char* p, size_t n) {
        for (;;) {
          ssize_t got = ::read(fd, p, n);
          if (got >= 0) return static_cast<size_t>(got);
          if (errno != EINTR) throw SystemError(fmt::format("read {}", path), errno);
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
