#pragma once
// The body of the fuzz_compare_* targets: one per input format of `rdmabench compare`, each
// keeping only inputs detectFormat() assigns to its parser (others return -1: libFuzzer does not
// add them to that target's corpus), so every target spends its time in one parser. The input
// then goes the product's whole way: readText (streamed reader, launcher prefixes), readNotes,
// compareSeries against itself and every output format.

#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "compare/compare.h"
#include "compare/parse.h"
#include "fuzz_util.h"

namespace rdmabench::fuzz {

inline int fuzzCompare(const uint8_t* data, size_t size, compare::Format want) {
  const std::string_view text = asText(data, size);
  if (compare::detectFormat(text) != want) return -1;
  compare::ReadOptions options;
  options.maxListed = 50;
  // perftest -C cycles: with and without --cpu-mhz (the last byte decides).
  if (size && (data[size - 1] & 1)) options.cpuMhz = 2400.0;
  try {
    compare::ParsedInput in = compare::readText(text, "fuzz.txt", options);
    (void)compare::readNotes(in, "fuzz.txt", true);
    compare::Comparison c = compare::compareSeries({in.series, in.series});
    // One output format per input (the size decides): writing all three would spend most of
    // the time in the JSON serialiser instead of the parser.
    static const char* const kFormats[] = {"table", "csv", "json"};
    std::ostringstream out;
    compare::writeComparison(c, kFormats[size % 3], out);
  } catch (const Error&) {
    // UsageError: the one-line refusal `rdmabench compare` prints.
  }
  return 0;
}

}  // namespace rdmabench::fuzz
