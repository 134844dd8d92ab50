#pragma once
// Alignment and arithmetic of `rdmabench compare`: series of the same test kind from several
// inputs are lined up by message size, and each input is set against the baseline.
//
// Differences (docs/compare.md):
//  - MPI overhead, when one side ran under MPI (OSU, IMB) and the other did not (rdmabench,
//    perftest): latency/collective: MPI - fabric (us), % of the fabric value; bandwidth:
//    fabric - MPI ("MB/s lost"), % of the fabric value. Positive = MPI costs that much.
//  - otherwise: input - baseline (us or MB/s), % of the baseline value.
// Every difference also carries the ratio [of] / [to] of the two values (e.g. a tree run over a
// SHARP run: the speed-up of in-network reduction), whatever the metric.
// A percentage or ratio is absent when its reference value is 0. Thread-safety: pure functions.

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compare/dataset.h"

namespace rdmabench::compare {

// One difference column pair (absolute, percent): input `of` against input `to`.
struct Difference {
  size_t of = 0;             // index into Group::inputs
  size_t to = 0;             // index into Group::inputs (the baseline)
  bool mpiOverhead = false;  // MPI input vs a non-MPI input: see the header comment
  std::string label;         // "MPI overhead" or "diff vs baseline"
  std::string unit;          // "us", "MB/s" or "MB/s lost"
};

struct Cell {
  std::optional<double> absolute;  // in Difference::unit
  std::optional<double> percent;   // of the reference value
  std::optional<double> ratio;     // value of input `of` / value of input `to` (unitless)
};

struct ComparedRow {
  uint64_t bytes = 0;                         // meaningless when !Group::sized
  std::vector<std::optional<double>> values;  // one per input, empty when the size is missing
  std::vector<Cell> cells;                    // one per Group::differences
  // One per input: why the tool gave no value for this size (Series::failures, e.g. "failed in
  // IMB: out-of-mem"), else empty. Such an input has no value in this row.
  std::vector<std::string> failed;
  // One per input: the tool's own flag on this value (Series::warnings), else empty.
  std::vector<std::string> warnings;
  bool complete() const;  // every input has a value for this size
  bool missing() const;   // some input has neither a value nor a failure for this size
};

// All inputs of one test kind.
struct Group {
  std::string test;  // Series::test
  Metric metric = Metric::kLatency;
  bool sized = true;
  std::vector<Series> inputs;  // in command-line order
  size_t baseline = 0;         // index into inputs
  std::vector<Difference> differences;
  std::vector<ComparedRow> rows;  // ascending size; sizes of any input (union)
};

struct Comparison {
  std::vector<Group> groups;       // in the order the baseline file lists its tests
  std::vector<std::string> notes;  // tests not compared, duplicate sizes, conversions, ...
};

struct CompareOptions {
  size_t baselineFile = 0;     // index into the files argument
  std::string test;            // only this test kind ("" = all common kinds)
  std::optional<int> np;       // --np: use the tables of this process/rank count
  std::optional<int> section;  // --section: use table K (Series::section) of a file with several
};

// `files[i]` holds the series parsed from input i (parseFile). Tests present in the baseline
// file and in at least one other file are compared; others are listed in notes.
// Sections (docs/compare.md, "How inputs are lined up"): when a file holds several tables of a
// test (IMB at 2 and 4 processes, concatenated logs), the one whose process count matches the
// other inputs' (or --np) is used; with no unambiguous match compare refuses, listing them.
// Like for like: a round-trip latency is halved (RTT/2, named in the column) against one-way
// latencies; stream against window bandwidth is refused.
// Throws UsageError (one line, naming the files) for fewer than two files, no test in common
// (e.g. latency vs bandwidth), a --test that no input has, an ambiguous or mismatched section,
// unlike figures, or a group without a common size.
Comparison compareSeries(const std::vector<std::vector<Series>>& files,
                         const CompareOptions& options = {});

// The difference of `value` against `reference` for `d` and `metric` (see the header comment).
// `valueIsMpi` says which of the two ran under MPI when d.mpiOverhead.
Cell difference(Metric metric, bool mpiOverhead, bool valueIsMpi, double value, double reference);

// Output: "table" (aligned text, `#` header lines naming the inputs; a failed size shows
// "failed" and the reason in the note column), "json" (one document, docs/compare.md) or "csv"
// (one line per size and input, RFC 4180, with a trailing note column). Throws UsageError naming
// --format for another name.
void writeComparison(const Comparison& comparison, std::string_view format, std::ostream& out);

}  // namespace rdmabench::compare
