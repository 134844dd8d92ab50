#pragma once
// Readers for the inputs of `rdmabench compare` / `rdmabench plot`: rdmabench JSON
// (--format json), OSU Micro-Benchmarks 5.x-7.x text (with or without -f / -z / -c columns,
// point-to-point and collectives), IMB-MPI1 output (any number of benchmarks per file) and
// perftest ib_*_lat / ib_*_bw result tables. Each reader tolerates banners, warnings and other
// text between tables, trailing whitespace, tabs and Windows (CRLF) line endings.
//
// Errors: UsageError, one line naming the file and what is wrong (unknown format, no rows,
// malformed JSON); SystemError when a file cannot be read. Thread-safety: pure functions.

#include <string>
#include <string_view>
#include <vector>

#include "compare/dataset.h"

namespace rdmabench::compare {

enum class Format { kUnknown, kRdmabenchJson, kOsu, kImb, kPerftest };

// "rdmabench JSON", "OSU", "IMB-MPI1", "perftest", "unknown".
const char* formatName(Format format);

// Guesses the format from the text: a JSON object -> kRdmabenchJson; an IMB banner
// ("# Benchmarking X") or IMB header -> kImb; an OSU title ("# OSU ...") or header ("# Size",
// "# Avg Latency(us)") -> kOsu; a perftest header (" #bytes #iterations ... [usec]" or
// "BW average[") -> kPerftest; else kUnknown.
Format detectFormat(std::string_view text);

// Parses `text` in the detected format. `path` names the input in errors and labels. Series get
// labels: the file's base name, plus ":<test>" (and "/np<N>" for IMB) when the file holds more
// than one table. Throws UsageError for an unknown format or when no table has a row.
std::vector<Series> parseText(std::string_view text, const std::string& path);

// Reads `path` ("-" = stdin) and parses it. Throws SystemError when it cannot be read.
std::vector<Series> parseFile(const std::string& path);

// The format-specific readers (parseText dispatches to them). They return the tables found,
// possibly none; they throw UsageError only for malformed JSON.
std::vector<Series> parseOsu(std::string_view text, const std::string& path);
std::vector<Series> parseImb(std::string_view text, const std::string& path);
std::vector<Series> parsePerftest(std::string_view text, const std::string& path);
std::vector<Series> parseRdmabenchJson(std::string_view text, const std::string& path);

}  // namespace rdmabench::compare
