#pragma once
// Internals shared by the readers of lib/compare (not a public interface): the bookkeeping of
// what a reader skipped or dropped, the per-table builder that drops repeated sizes, the
// line-oriented text readers, and launcher-prefix recognition. Thread-safety: none needed (one
// reader per input).

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "compare/parse.h"

namespace rdmabench::compare::detail {

// Fills a ReadReport: counts, line ranges and the first ReadOptions::maxListed lines.
class ReadContext {
 public:
  ReadContext(ReadReport& report, const ReadOptions& options, std::string path)
      : report_(report), options_(options), path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  const ReadOptions& options() const { return options_; }
  ReadReport& report() { return report_; }

  // A line (JSON: row) that was not understood.
  void skipped(uint64_t line, std::string_view text, std::string_view reason = "not understood");
  // A line of another rank, of stderr or of the launcher itself.
  void ignored(uint64_t line, std::string_view text, std::string_view reason);
  // A row repeating a size of its table.
  void repeated(uint64_t line, std::string_view text, uint64_t bytes);
  // A row cut short (the last line without an end-of-line, or fewer fields than its header):
  // dropped, counted and listed.
  void truncated(uint64_t line, std::string_view text, std::string_view why);
  // Counts one more row kept; throws UsageError beyond ReadOptions::maxRows.
  void rowKept();
  // "FILE:LINE" (JSON: "FILE row N") for one-line errors about a line.
  std::string where(uint64_t line) const;
  bool json = false;  // the input is JSON: `line` numbers are row indices

 private:
  void list(uint64_t line, std::string_view reason, std::string_view text);

  ReadReport& report_;
  const ReadOptions& options_;
  std::string path_;
  uint64_t rows_ = 0;
};

// One table under construction. Keeps the first row of each size; failures count as rows.
class SeriesBuilder {
 public:
  Series series;
  // Adds `p` unless its size was seen (then counts it as repeated); false when dropped.
  bool add(const Point& p, uint64_t line, std::string_view text, ReadContext& ctx);
  // Records that the tool reported size `bytes` as failed (`why`, one line).
  void fail(uint64_t bytes, const std::string& why, uint64_t line, std::string_view text,
            ReadContext& ctx);
  // Attaches a warning to size `bytes` (call after add()).
  void warn(uint64_t bytes, const std::string& why, uint64_t line, ReadContext& ctx);
  bool empty() const { return series.points.empty() && series.failures.empty(); }

 private:
  bool first(uint64_t bytes, uint64_t line, std::string_view text, ReadContext& ctx);
  std::unordered_set<uint64_t> seen_;
};

// A reader of one line-oriented format, fed one line at a time.
class TableReader {
 public:
  virtual ~TableReader() = default;
  // `text`: one line without its end-of-line, trailing whitespace and launcher prefix.
  virtual void line(std::string_view text, uint64_t number) = 0;
  // The tables read, possibly none. Throws UsageError for input it refuses as a whole.
  virtual std::vector<Series> finish() = 0;
};

std::unique_ptr<TableReader> makeOsuReader(ReadContext& ctx);
std::unique_ptr<TableReader> makeImbReader(ReadContext& ctx);
std::unique_ptr<TableReader> makePerftestReader(ReadContext& ctx);

// rdmabench JSON from `in` (streamed through parseUntrustedJsonStream).
std::vector<Series> readRdmabenchJson(std::istream& in, ReadContext& ctx);

// The format a single line (trimmed, launcher prefix removed) announces, or kUnknown when the
// line decides nothing (see detectFormat).
Format lineFormat(std::string_view line);

// Launcher prefixes (docs/compare.md, "Launcher prefixes").
enum class Launcher {
  kNone,
  kOpenMpiTag,        // mpirun --tag-output: "[1,0]<stdout>:" (Open MPI 5 / PRRTE: "...: ")
  kOpenMpiTimestamp,  // mpirun --timestamp-output: "<date><stdout>:" or "<date>[1,0]<stdout>:"
  kSrunLabel,         // srun --label: "0: "
  kRankBracket,       // mpiexec -prepend-rank (MPICH), mpirun -l (Intel MPI): "[0] "
  kPdsh,              // pdsh / clush: "node01: " (a host name with a letter, then ": ")
};

struct LauncherMatch {
  Launcher kind = Launcher::kNone;
  size_t length = 0;             // prefix bytes to remove
  std::optional<uint64_t> rank;  // the rank the line came from, when the prefix says
  std::string stream;            // "stdout", "stderr", "stddiag"; empty when not said
  std::string host;              // pdsh: the host name
};

// The launcher prefix at the start of `line`, if any.
LauncherMatch matchLauncher(std::string_view line);
// "mpirun --tag-output", "mpirun --timestamp-output", "srun --label", "mpiexec -prepend-rank",
// "pdsh".
const char* launcherName(Launcher kind);

}  // namespace rdmabench::compare::detail
