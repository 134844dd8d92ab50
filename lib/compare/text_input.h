#pragma once
// Internal to lib/compare (parse.cc, text_input.cc): the bounded byte source every input is read
// from, and the text path of the readers: launcher-prefix and format detection on the first
// decisive line, then the format's TableReader (or the JSON reader for prefixed JSON).
// Thread-safety: one reader per input.

#include <cstdint>
#include <functional>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "compare/parse.h"
#include "compare/read_detail.h"

namespace rdmabench::compare::detail {

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
  // than `maxLine` is cut there and `overlong` set. `terminated` says whether an end-of-line
  // followed it (false only for a last line cut short).
  bool readLine(std::string& out, size_t maxLine, bool& overlong, bool& terminated);

 protected:
  int_type underflow() override;

 private:
  Reader read_;
  uint64_t max_;
  std::string path_;
  std::vector<char> buf_;
  uint64_t total_ = 0;
  bool eof_ = false;
};

// The line without trailing blanks (space, tab, VT, FF, CR).
std::string_view rtrim(std::string_view s);

// The text path: the launcher prefix and the format, decided on the first line that holds a
// format marker (with or without a prefix), then one TableReader (or the JSON reader for
// prefixed JSON). `firstLine`: lines already consumed (leading blank lines). Sets `format`.
// UsageError naming the file when no format is found (with the prefix seen, if any).
std::vector<Series> readTextLines(ByteSource& src, uint64_t firstLine, ReadContext& ctx,
                                  Format& format);

}  // namespace rdmabench::compare::detail
