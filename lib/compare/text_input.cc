// docs: text_input.h
#include "compare/text_input.h"

#include <istream>
#include <iterator>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "common/error.h"
#include "common/json_read.h"
#include "common/units.h"
#include "compare/text_util.h"

namespace rdmabench::compare::detail {

bool ByteSource::readLine(std::string& out, size_t maxLine, bool& overlong, bool& terminated) {
  out.clear();
  overlong = false;
  terminated = false;
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
    terminated = true;
    gbump(1);
    if (c == '\r') {
      if (gptr() == egptr()) underflow();
      if (gptr() < egptr() && *gptr() == '\n') gbump(1);
    }
    return true;
  }
}

ByteSource::int_type ByteSource::underflow() {
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

std::string_view rtrim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\v' ||
                        s.back() == '\f' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

namespace {

constexpr size_t kDetectLines = 100000;           // lines read before giving up on detection
constexpr size_t kDetectBytes = size_t{8} << 20;  // bytes held while detecting

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

// Which lines of a prefixed input are kept: the launcher kind, rank/host and stream of the line
// the format was detected on (docs/compare.md, "Launcher prefixes"). One filter for every format.
struct PrefixFilter {
  detail::Launcher kind = detail::Launcher::kNone;
  std::optional<uint64_t> rank;
  std::string host;

  // The text to read, or nullopt when the line is another rank's, stderr or the launcher's own.
  std::optional<std::string_view> apply(uint64_t no, std::string_view text,
                                        detail::ReadContext& ctx) const {
    if (kind == detail::Launcher::kNone) return text;
    detail::LauncherMatch m = detail::matchLauncher(text);
    if (m.kind != kind) {
      ctx.ignored(no, text, "no launcher prefix (the launcher's own message)");
      return std::nullopt;
    }
    if (!m.stream.empty() && m.stream != "stdout") {
      ctx.ignored(no, text, m.stream);
      return std::nullopt;
    }
    if (rank && m.rank && *m.rank != *rank) {
      ctx.ignored(no, text, fmt::format("rank {}", *m.rank));
      return std::nullopt;
    }
    if (!host.empty() && m.host != host) {
      ctx.ignored(no, text, fmt::format("host {}", escapeForLog(m.host, 64)));
      return std::nullopt;
    }
    return text.substr(m.length);
  }
};

// A row-like line: its first token is a number (a size or, for barrier, a count).
bool looksLikeRow(std::string_view text) {
  std::vector<std::string> tok = splitWhitespace(text);
  return !tok.empty() && detail::parseNumber(tok[0]).has_value();
}

// rdmabench JSON behind a launcher prefix: the kept lines, prefix removed, as a stream.
class StrippedJson : public std::streambuf {
 public:
  StrippedJson(ByteSource& src, const PrefixFilter& filter, detail::ReadContext& ctx,
               std::vector<std::pair<uint64_t, std::string>> first, uint64_t no)
      : src_(src), filter_(filter), ctx_(ctx), pending_(std::move(first)), no_(no) {}

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    for (;;) {
      std::string raw;
      uint64_t no = 0;
      if (next_ < pending_.size()) {
        no = pending_[next_].first;
        raw = std::move(pending_[next_].second);
        ++next_;
      } else {
        bool overlong = false, terminated = false;
        if (!src_.readLine(raw, ctx_.options().maxLineBytes, overlong, terminated))
          return traits_type::eof();
        no = ++no_;
        if (overlong) {
          ctx_.skipped(no, raw, "longer than the line limit");
          continue;
        }
      }
      std::optional<std::string_view> kept = filter_.apply(no, rtrimView(raw), ctx_);
      if (!kept) continue;
      buf_.assign(kept->begin(), kept->end());
      buf_ += '\n';
      setg(buf_.data(), buf_.data(), buf_.data() + buf_.size());
      return traits_type::to_int_type(*gptr());
    }
  }

 private:
  static std::string_view rtrimView(std::string_view v) {
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r'))
      v.remove_suffix(1);
    return v;
  }
  ByteSource& src_;
  const PrefixFilter& filter_;
  detail::ReadContext& ctx_;
  std::vector<std::pair<uint64_t, std::string>> pending_;
  size_t next_ = 0;
  uint64_t no_;
  std::string buf_;
};

// The text path of one input (readTextLines): lines before detection are held in `pending_`;
// the first line with a format marker (behind a recognised launcher prefix or bare) decides the
// format and the prefix filter, then every line goes to the format's reader, until a line
// announces another format (logs of several tools appended to one file): its reader takes over.
class TextLines {
 public:
  TextLines(ByteSource& src, ReadContext& ctx) : src_(src), ctx_(ctx) {}

  std::vector<Series> read(uint64_t firstLine, Format& format) {
    const ReadOptions& options = ctx_.options();
    std::string line;
    bool overlong = false, terminated = true;
    uint64_t no = firstLine;
    while (src_.readLine(line, options.maxLineBytes, overlong, terminated)) {
      ++no;
      if (overlong) {
        ctx_.skipped(no, line, fmt::format("longer than {} bytes", options.maxLineBytes));
        continue;
      }
      std::string_view text = rtrim(line);
      if (reader_) {
        deliver(no, text, terminated);
        continue;
      }
      Detected d = detect(no, text);
      if (d.gaveUp) break;
      if (d.format == Format::kUnknown && !d.json) continue;
      if (d.match.kind != Launcher::kNone) adoptPrefix(d.match, text);
      if (d.json) return readPrefixedJson(no, text, format);
      format = current_ = d.format;
      startReader(format);
      for (const auto& [n, l] : pending_)
        deliver(n, l, true);
      pending_.clear();
      deliver(no, text, terminated);
    }
    ctx_.report().lines = no;
    if (!reader_) throwUnknownFormat();
    std::vector<Series> last = reader_->finish();
    done_.insert(done_.end(), std::make_move_iterator(last.begin()),
                 std::make_move_iterator(last.end()));
    return std::move(done_);
  }

 private:
  // What one line before detection says: its format (kUnknown: held for later), whether it
  // starts prefixed JSON, the launcher prefix it carries, and whether detection gave up.
  struct Detected {
    Format format = Format::kUnknown;
    bool json = false, gaveUp = false;
    LauncherMatch match;
  };

  // One line to the reader, through the prefix filter; a last row without an end-of-line is
  // dropped as cut short.
  void deliver(uint64_t no, std::string_view text, bool terminated) {
    if (text.empty()) return;
    std::optional<std::string_view> kept = filter_.apply(no, text, ctx_);
    if (!kept) return;
    std::string t = trim(*kept);
    if (!terminated && looksLikeRow(t)) {
      ctx_.truncated(no, t, "the last line has no end-of-line: a run cut short?");
      return;
    }
    // Another tool's banner or header (an IMB log appended to an OSU one with `>>`) ends the
    // tables of this one: the rest goes to that tool's reader.
    if (Format f = lineFormat(t); f != Format::kUnknown && f != current_) {
      std::vector<Series> done = reader_->finish();
      done_.insert(done_.end(), std::make_move_iterator(done.begin()),
                   std::make_move_iterator(done.end()));
      current_ = f;
      startReader(f);
    }
    reader_->line(t, no);
  }

  // A launcher prefix first (the same code for every format), then the bare line.
  Detected detect(uint64_t no, std::string_view text) {
    Detected d;
    d.match = matchLauncher(text);
    if (d.match.kind != Launcher::kNone) {
      std::string rest = trim(text.substr(d.match.length));
      d.format = lineFormat(rest);
      d.json = d.format == Format::kUnknown && pending_.empty() && rest.starts_with("{");
      if (seenPrefix_.empty() && d.match.kind != Launcher::kPdsh) {
        seenPrefix_ = std::string(text.substr(0, d.match.length));
        seenPrefixKind_ = launcherName(d.match.kind);
      }
      if (d.format == Format::kUnknown && !d.json) d.match = {};
    }
    std::string t = trim(text);
    if (d.format == Format::kUnknown && !d.json) d.format = lineFormat(t);
    if (t.find("# rdmabench ") != std::string::npos) rdmabenchTable_ = true;
    // The header row of rdmabench --format csv (lat/bw/collectives, pairs, congestion).
    if ((t.starts_with("test,transport,op,") || t.starts_with("src_rank,dst_rank,") ||
         t.starts_with("metric,unit,bytes,")))
      rdmabenchCsv_ = true;
    if (d.format != Format::kUnknown || d.json) return d;
    if (oddPrefix_.empty()) {
      oddPrefix_ = unrecognisedPrefix(text, oddFormat_);
      if (!oddPrefix_.empty()) oddLine_ = no;
    }
    pendingBytes_ += text.size();
    pending_.emplace_back(no, std::string(text));
    if (pending_.size() >= kDetectLines || pendingBytes_ >= kDetectBytes) {
      gaveUp_ = true;
      d.gaveUp = true;
    }
    return d;
  }

  // The prefix of the detected line decides which lines are kept from now on.
  void adoptPrefix(const LauncherMatch& m, std::string_view text) {
    filter_.kind = m.kind;
    filter_.rank = m.rank;
    filter_.host = m.host;
    ReadReport& rep = ctx_.report();
    rep.launcher = launcherName(m.kind);
    rep.launcherExample = escapeForLog(text.substr(0, m.length), 60);
  }

  // rdmabench JSON behind a launcher prefix: the rest of the input, prefixes removed.
  std::vector<Series> readPrefixedJson(uint64_t no, std::string_view text, Format& format) {
    format = Format::kRdmabenchJson;
    ctx_.json = true;
    pending_.emplace_back(no, std::string(text));
    StrippedJson stripped(src_, filter_, ctx_, std::move(pending_), no);
    std::istream in(&stripped);
    std::vector<Series> out = readRdmabenchJson(in, ctx_);
    ctx_.report().lines = no;
    return out;
  }

  void startReader(Format format) {
    switch (format) {
      case Format::kOsu:
        reader_ = makeOsuReader(ctx_);
        break;
      case Format::kImb:
        reader_ = makeImbReader(ctx_);
        break;
      default:
        reader_ = makePerftestReader(ctx_);
        break;
    }
  }

  // No format found: the one-line error that says why (rdmabench table, unrecognised prefix,
  // prefix without a table, nothing known).
  [[noreturn]] void throwUnknownFormat() const {
    const std::string& path = ctx_.path();
    if (rdmabenchCsv_)
      throw UsageError(fmt::format(
          "{}: rdmabench CSV output is not read back; compare takes rdmabench --format json (lat, "
          "bw, barrier, allreduce, ring), OSU, IMB-MPI1 or perftest output",
          path));
    if (rdmabenchTable_)
      throw UsageError(fmt::format(
          "{}: rdmabench table output is not read back; rerun with --format json (or osu, imb, "
          "perftest)",
          path));
    const char* recognised =
        "recognised: mpirun --tag-output / --timestamp-output, srun --label, mpiexec "
        "-prepend-rank / mpirun -l, pdsh";
    if (!oddPrefix_.empty())
      throw UsageError(fmt::format(
          "{}: unknown format: line {} holds {} output behind the prefix `{}`, which is not a "
          "recognised launcher prefix ({}); remove it first (e.g. with sed)",
          path, oddLine_, formatName(oddFormat_), escapeForLog(oddPrefix_, 60), recognised));
    if (!seenPrefix_.empty())
      throw UsageError(fmt::format(
          "{}: unknown format: its lines carry the launcher prefix `{}` ({}), but no OSU, "
          "IMB-MPI1 or perftest table follows it",
          path, escapeForLog(seenPrefix_, 60), seenPrefixKind_));
    throw UsageError(fmt::format(
        "{}: unknown format (expected rdmabench --format json, OSU, IMB-MPI1 or perftest "
        "output{})",
        path,
        gaveUp_ ? fmt::format("; no table header in the first {} lines", pending_.size()) : ""));
  }

  ByteSource& src_;
  ReadContext& ctx_;
  std::unique_ptr<TableReader> reader_;
  Format current_ = Format::kUnknown;  // reader_'s format
  std::vector<Series> done_;           // tables of the readers before reader_ (mixed logs)
  PrefixFilter filter_;
  std::vector<std::pair<uint64_t, std::string>> pending_;  // lines read before detection
  size_t pendingBytes_ = 0;
  bool gaveUp_ = false, rdmabenchTable_ = false, rdmabenchCsv_ = false;
  std::string seenPrefix_, seenPrefixKind_;  // a recognised prefix without a marker after it
  std::string oddPrefix_;                    // a marker behind an unrecognised prefix
  uint64_t oddLine_ = 0;
  Format oddFormat_ = Format::kUnknown;
};

}  // namespace

std::vector<Series> readTextLines(ByteSource& src, uint64_t firstLine, ReadContext& ctx,
                                  Format& format) {
  return TextLines(src, ctx).read(firstLine, format);
}

}  // namespace rdmabench::compare::detail
