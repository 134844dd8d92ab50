// The one escaper for peer-supplied text (text_escape.h).
#include "common/text_escape.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench {
namespace {

// U+202A..U+202E are E2 80 AA..AE in UTF-8, U+2066..U+2069 are E2 81 A6..A9.
bool isBidiControl(std::string_view u) {
  if (u.size() < 3 || static_cast<unsigned char>(u[0]) != 0xe2) return false;
  const auto b1 = static_cast<unsigned char>(u[1]), b2 = static_cast<unsigned char>(u[2]);
  return (b1 == 0x80 && b2 >= 0xaa && b2 <= 0xae) || (b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9);
}

unsigned bidiCodePoint(std::string_view u) {
  return 0x2000u | (static_cast<unsigned>(static_cast<unsigned char>(u[1]) & 0x3f) << 6) |
         (static_cast<unsigned char>(u[2]) & 0x3fu);
}

}  // namespace

std::string escapeForLog(std::string_view text, size_t maxBytes) {
  std::string out;
  out.reserve(std::min(text.size(), maxBytes) + 8);
  size_t i = 0;
  while (i < text.size()) {
    if (out.size() >= maxBytes) {
      out += "...";
      break;
    }
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      out += "\\\\";
      ++i;
    } else if (c == '\n') {
      out += "\\n";
      ++i;
    } else if (c == '\r') {
      out += "\\r";
      ++i;
    } else if (c == '\t') {
      out += "\\t";
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      // Keep well-formed UTF-8 sequences (2-4 bytes, no overlongs/surrogates); escape the rest.
      size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
      bool ok = len > 0 && i + len <= text.size();
      for (size_t k = 1; ok && k < len; ++k)
        ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
      if (ok && len == 3) {
        auto c1 = static_cast<unsigned char>(text[i + 1]);
        ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
      }
      if (ok && len == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
        // A C1 control (U+0080..U+009F): some terminals act on it (U+009B = CSI).
        out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));
        i += 2;
        continue;
      }
      if (ok && len == 3 && isBidiControl(text.substr(i, 3))) {
        // An embedding, override or isolate (U+202A..U+202E, U+2066..U+2069): it reorders
        // the rest of the line on the screen ("Trojan Source", CVE-2021-42574).
        out += fmt::format("\\u{:04x}", bidiCodePoint(text.substr(i, 3)));
        i += 3;
        continue;
      }
      if (ok && len == 4) {
        auto c1 = static_cast<unsigned char>(text[i + 1]);
        ok = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
      }
      if (ok) {
        out.append(text.substr(i, len));
        i += len;
      } else {
        out += fmt::format("\\x{:02x}", c);
        ++i;
      }
    }
  }
  return out;
}

namespace {

bool isControl(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

std::string singleQuoted(std::string_view text) {
  std::string q = "'";
  for (char c : text)
    q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::string gnuplotString(std::string_view text) {
  std::string shown;
  shown.reserve(text.size());
  for (char c : text)
    shown += isControl(c) ? escapeForLog(std::string_view(&c, 1)) : std::string(1, c);
  return singleQuoted(shown);
}

std::string gnuplotOutputPath(std::string_view path, std::string_view option) {
  if (std::any_of(path.begin(), path.end(), isControl))
    throw UsageError(fmt::format(
        "{} {}: a plot file name cannot hold control characters (gnuplot strings are one line)",
        option, escapeForLog(path, 200)));
  return singleQuoted(!path.empty() && path[0] == '/' ? std::string(path)
                                                      : "./" + std::string(path));
}

}  // namespace rdmabench

namespace rdmabench {

std::string escapeJsonControls(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    const auto c = static_cast<unsigned char>(json[i]);
    if (c == 0xc2 && i + 1 < json.size() && static_cast<unsigned char>(json[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(json[i + 1]) <= 0x9f) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(json[i + 1]));
      ++i;
    } else if (c == 0xe2 && isBidiControl(json.substr(i, 3))) {
      out += fmt::format("\\u{:04x}", bidiCodePoint(json.substr(i, 3)));
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace rdmabench
