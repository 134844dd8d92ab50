#include "compare/text_util.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace rdmabench::compare::detail {
namespace {
bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}
}  // namespace

std::vector<std::string> splitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    bool end = i == text.size();
    if (!end && text[i] != '\n' && text[i] != '\r') continue;
    std::string_view line = text.substr(start, i - start);
    while (!line.empty() && isSpace(line.back()))
      line.remove_suffix(1);
    if (!end || !line.empty()) lines.emplace_back(line);
    if (!end && text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    start = i + 1;
  }
  return lines;
}

std::string trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back()))
    s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::string> splitWhitespace(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && isSpace(s[i]))
      ++i;
    size_t j = i;
    while (j < s.size() && !isSpace(s[j]))
      ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::string> splitColumns(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  size_t i = 0;
  auto flush = [&] {
    std::string t = trim(cur);
    if (!t.empty()) out.push_back(t);
    cur.clear();
  };
  while (i < s.size()) {
    if (s[i] == '\t' || (s[i] == ' ' && i + 1 < s.size() && isSpace(s[i + 1]))) {
      flush();
      while (i < s.size() && isSpace(s[i]))
        ++i;
      continue;
    }
    cur += s[i++];
  }
  flush();
  return out;
}

std::optional<double> parseNumber(std::string_view token) {
  // Decimal only: [+-] digits [. digits] [e|E [+-] digits], at least one digit before the
  // exponent. strtod alone would also take "0x10" (16), "inf", "nan" and "1e", so the shape is
  // checked first.
  if (token.empty() || token.size() > 64) return std::nullopt;
  size_t i = 0;
  if (token[i] == '+' || token[i] == '-') ++i;
  size_t mantissa = 0;
  while (i < token.size() && std::isdigit(static_cast<unsigned char>(token[i])))
    ++i, ++mantissa;
  if (i < token.size() && token[i] == '.') {
    ++i;
    while (i < token.size() && std::isdigit(static_cast<unsigned char>(token[i])))
      ++i, ++mantissa;
  }
  if (mantissa == 0) return std::nullopt;
  if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
    ++i;
    if (i < token.size() && (token[i] == '+' || token[i] == '-')) ++i;
    size_t exponent = 0;
    while (i < token.size() && std::isdigit(static_cast<unsigned char>(token[i])))
      ++i, ++exponent;
    if (exponent == 0) return std::nullopt;
  }
  if (i != token.size()) return std::nullopt;
  std::string s(token);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<uint64_t> parseCount(std::string_view token) {
  if (token.empty() || token.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool containsNoCase(std::string_view haystack, std::string_view needle) {
  return lower(haystack).find(lower(needle)) != std::string::npos;
}

}  // namespace rdmabench::compare::detail
