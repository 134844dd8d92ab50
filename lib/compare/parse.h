#pragma once
// Readers for the inputs of `rdmabench compare` / `rdmabench plot`: rdmabench JSON
// (--format json, also the A/B `--compare`/`--provider A --provider B` document), OSU
// Micro-Benchmarks 5.x-7.x text (with or without -f / -z / -c columns, point-to-point and
// collectives), IMB-MPI1 output (any number of benchmarks per file, with or without the
// `defects` column of data checking) and perftest ib_*_lat / ib_*_bw result tables (also with
// -U / -H sample dumps and -C cycles). docs/compare.md lists what is accepted and rejected.
//
// Inputs are streamed: memory grows with the rows kept, not with the file. Text lines may carry
// a launcher prefix (mpirun --tag-output / --timestamp-output, srun --label, mpiexec
// -prepend-rank / -l); it is stripped and the lines of other ranks and stderr are ignored.
// Nothing is dropped silently: lines not understood, ignored lines, repeated sizes and sizes the
// tool reported as failed are counted in ReadReport (readNotes() turns it into notes).
//
// Errors: UsageError, one line naming the file and what is wrong (unknown format, with the
// launcher prefix seen if any; no rows; malformed JSON; too large; cycles without --cpu-mhz);
// SystemError when a file cannot be read. Thread-safety: pure functions.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compare/dataset.h"

namespace rdmabench::compare {

enum class Format { kUnknown, kRdmabenchJson, kOsu, kImb, kPerftest };

// "rdmabench JSON", "OSU", "IMB-MPI1", "perftest", "unknown".
const char* formatName(Format format);

// Guesses the format from the text: a JSON object -> kRdmabenchJson; else the first decisive
// line (after a recognised launcher prefix): an IMB banner ("# Benchmarking X", "Intel(R) MPI
// Benchmarks") or IMB header -> kImb; an OSU title ("# OSU ...") or header ("# Size", "# Avg
// Latency(us)") -> kOsu; a perftest header (" #bytes #iterations ... [usec]", "BW average[") or
// sample dump ("#, usec", "#, cycles") -> kPerftest; else kUnknown.
Format detectFormat(std::string_view text);

struct ReadOptions {
  // Largest input accepted, bytes (`compare --max-input`). Larger inputs are refused.
  uint64_t maxBytes = uint64_t{1} << 30;
  // Longest text line kept, bytes; longer lines are skipped (and counted).
  size_t maxLineBytes = 64 * 1024;
  // CPU frequency (MHz = cycles per microsecond) used to convert perftest -C cycles to us
  // (`compare --cpu-mhz`). Without it a file in cycles is refused.
  std::optional<double> cpuMhz;
  // How many skipped/ignored lines ReadReport keeps verbatim for --verbose.
  size_t maxListed = 1000;
  // Most result rows (sizes, failed sizes included) kept per input; more is refused with one
  // line (memory stays bounded: about 0.5 KB per row, the comparison included).
  size_t maxRows = 100000;
  // readFile on a FIFO, socket or character device: longest wait for the first byte and then
  // between reads, ms (a FIFO without a writer is refused instead of blocking forever).
  int idleTimeoutMs = 10000;
};

// One line (or JSON row) that was not used, for --verbose.
struct ListedLine {
  uint64_t line = 0;   // 1-based line number; for JSON the row index (1-based)
  std::string reason;  // "not understood", "rank 1 stdout", "size 8 repeated", ...
  std::string text;    // the line, escaped and shortened for a terminal
};

// What a reader did with an input besides the series it returns.
struct ReadReport {
  Format format = Format::kUnknown;
  uint64_t bytes = 0;           // bytes read
  uint64_t lines = 0;           // text lines read (0 for JSON)
  uint64_t skipped = 0;         // lines (JSON: rows) not understood
  uint64_t ignored = 0;         // lines of other ranks, stderr or the launcher itself
  uint64_t repeated = 0;        // rows repeating a size of their table (the first row is kept)
  uint64_t failed = 0;          // sizes reported as failed (Series::failures)
  uint64_t warned = 0;          // values the tool flagged (Series::warnings)
  uint64_t truncated = 0;       // rows cut short (no end-of-line, fewer columns): dropped
  std::string truncatedFirst;   // the first of them: "line N `text` (why)"
  std::string launcher;         // the launcher prefix recognised, e.g. "mpirun --tag-output"
  std::string launcherExample;  // its first occurrence, e.g. "[1,0]<stdout>:"
  // Line numbers of the skipped lines as inclusive ranges (at most 1000 ranges kept).
  std::vector<std::pair<uint64_t, uint64_t>> skippedRanges;
  std::vector<ListedLine> listed;  // first ReadOptions::maxListed skipped/ignored/repeated lines
  uint64_t listedDropped = 0;      // listed lines not kept beyond maxListed
};

struct ParsedInput {
  std::vector<Series> series;
  ReadReport report;
};

// Reads one input from `in` (streamed; at most options.maxBytes bytes) in the detected format.
// `path` names it in errors and labels. Series get labels: the file's base name, plus ":<test>"
// (and "/np<N>" for IMB) when the input holds more than one table. Throws UsageError for an
// unknown format, an input that is too large, or when no table has a row (a failed size counts
// as a row).
ParsedInput readInput(std::istream& in, const std::string& path, const ReadOptions& options = {});

// Opens `path` ("-" = stdin) and reads it. Throws UsageError when it does not exist or cannot be
// opened (`FILE: cannot open: No such file or directory`), before reading when a regular file is
// larger than options.maxBytes, and when a FIFO/socket/device sends nothing for
// options.idleTimeoutMs; SystemError when a read fails.
ParsedInput readFile(const std::string& path, const ReadOptions& options = {});

// readInput on a string (tests, fuzzing).
ParsedInput readText(std::string_view text, const std::string& path,
                     const ReadOptions& options = {});

// One-line notes for the user about `input` (labelled with `path`): lines skipped and where,
// launcher prefix stripped and lines ignored, repeated sizes dropped, failed sizes, warnings.
// `verbose` adds one note per listed line ("path:LINE: reason: text").
std::vector<std::string> readNotes(const ParsedInput& input, const std::string& path, bool verbose);

// Shorthands that return only the series (the report is dropped): tests and fuzzing.
std::vector<Series> parseText(std::string_view text, const std::string& path);
std::vector<Series> parseFile(const std::string& path);

}  // namespace rdmabench::compare
