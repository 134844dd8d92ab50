#pragma once
// The one CSV writer of every command (lat/bw/collective reports, pairs, congestion, compare):
// RFC 4180 quoting, so any CSV reader (pandas, Python's csv, spreadsheets) reads the fields back
// as written. Records end with LF (not RFC 4180's CRLF: the files are read on Unix and compared
// byte for byte with earlier runs). Thread-safety: a CsvWriter is used by one thread; csvField
// and csvLine are pure.

#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

namespace rdmabench::report {

// One field: as is, unless it holds a comma, a double quote, CR or LF; then enclosed in double
// quotes with every double quote doubled (RFC 4180 section 2, rules 6 and 7).
std::string csvField(std::string_view field);

// One record: the fields quoted (csvField), joined by commas, ended by "\n".
std::string csvLine(const std::vector<std::string>& fields);

// Writes records to `out`. Numbers are written as fmt's "{}" (shortest round-trip form for
// doubles: 0.5, 1e-05, inf, nan); strings are quoted as csvField does.
class CsvWriter {
 public:
  explicit CsvWriter(std::ostream& out) : out_(out) {}

  // One record of the given fields.
  void row(const std::vector<std::string>& fields) { out_ << csvLine(fields); }

  // One record of mixed fields: strings (quoted as needed) and numbers.
  template <typename... Fields>
  void record(const Fields&... fields) {
    row({text(fields)...});
  }

 private:
  static std::string text(std::string_view s) { return std::string(s); }
  static std::string text(const std::string& s) { return s; }
  static std::string text(const char* s) { return s; }
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  static std::string text(T v) {
    return fmt::format("{}", v);
  }

  std::ostream& out_;
};

}  // namespace rdmabench::report
