#pragma once
// Line and token helpers shared by the readers in lib/compare (internal). Pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmabench::compare::detail {

// Splits into lines on LF, CRLF or lone CR; each line loses trailing whitespace (spaces, tabs).
std::vector<std::string> splitLines(std::string_view text);

// Leading and trailing whitespace removed.
std::string trim(std::string_view s);

// Tokens separated by runs of spaces/tabs.
std::vector<std::string> splitWhitespace(std::string_view s);

// Fields separated by runs of two or more spaces or by tabs (OSU headers: "Avg Latency(us)").
std::vector<std::string> splitColumns(std::string_view s);

// A complete decimal number ("11.01", "1e3", "-0.5"); nullopt for anything else ("inf", "nan",
// "0x10", "1,5", "2.148GB").
std::optional<double> parseNumber(std::string_view token);

// A complete unsigned integer; nullopt otherwise.
std::optional<uint64_t> parseCount(std::string_view token);

// Lower-case copy (ASCII).
std::string lower(std::string_view s);

// True when `haystack` contains `needle`, ignoring ASCII case.
bool containsNoCase(std::string_view haystack, std::string_view needle);

}  // namespace rdmabench::compare::detail
