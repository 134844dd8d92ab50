#include "common/units.h"

#include <fmt/format.h>

#include <cctype>
#include <limits>

#include "common/error.h"

namespace rdmabench {

uint64_t parseSize(std::string_view text, std::string_view option) {
  auto bad = [&](std::string_view why) {
    return UsageError(
        fmt::format("{}: invalid size '{}': {} (use an integer with optional "
                    "K/M/G/T (2^10..2^40), KiB/MiB/GiB or B suffix, e.g. 4096, 64K, 1MiB)",
                    option, text, why));
  };
  if (text.empty()) throw bad("empty");
  size_t i = 0;
  uint64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() / 2 - digit) / 10) throw bad("too large");
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) throw bad(text[0] == '-' ? "negative" : "not a number");
  uint64_t mult = 1;
  const std::string_view suffix = text.substr(i);
  if (!suffix.empty()) {
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(suffix[0])));
    switch (unit) {
      case 'K':
        mult = 1ull << 10;
        break;
      case 'M':
        mult = 1ull << 20;
        break;
      case 'G':
        mult = 1ull << 30;
        break;
      case 'T':  // accepted so that the caller's limit, not the suffix, is what gets reported
        mult = 1ull << 40;
        break;
      case 'B':  // "65536B": bytes
        break;
      default:
        throw bad("unknown suffix");
    }
    std::string_view rest = suffix.substr(1);
    if (unit != 'B' && (rest == "iB" || rest == "ib" || rest == "IB")) rest = {};  // KiB, MiB
    if (unit != 'B' && (rest == "B" || rest == "b")) {
      // KB / MB / GB: decimal in SI, binary in OSU and perftest; refuse rather than guess.
      const int exp = unit == 'K' ? 3 : unit == 'M' ? 6 : unit == 'G' ? 9 : 12;
      uint64_t si = 1;
      for (int e = 0; e < exp; ++e)
        si *= 10;
      const std::string decimal =
          value == 1 ? fmt::format("10^{}", exp) : fmt::format("{} x 10^{}", value, exp);
      const bool fits = value <= (1ull << 63) / mult && value <= (1ull << 63) / si;
      if (!fits) throw bad("too large");
      throw UsageError(
          fmt::format("{}: '{}' is ambiguous: use {}{} or {}{}iB for {} B, or {} for {} B", option,
                      text, value, unit, value, unit, value * mult, value * si, decimal));
    }
    i = text.size() - rest.size();
  }
  if (i != text.size()) throw bad("trailing characters");
  if (value != 0 && mult > (1ull << 63) / value) throw bad("too large");
  return value * mult;
}

SizeRange parseSizeRange(std::string_view text, std::string_view option, uint64_t defaultMin,
                         uint64_t defaultMax) {
  SizeRange r{defaultMin, defaultMax};
  auto colon = text.find(':');
  if (colon == std::string_view::npos) {
    r.max = parseSize(text, option);
  } else {
    std::string_view lo = text.substr(0, colon), hi = text.substr(colon + 1);
    if (!lo.empty()) r.min = parseSize(lo, option);
    if (!hi.empty()) r.max = parseSize(hi, option);
  }
  if (r.min > r.max)
    throw UsageError(fmt::format("{}: invalid range '{}': MIN {} is larger than MAX {}", option,
                                 text, r.min, r.max));
  return r;
}

void checkSizeRangeLimit(const SizeRange& r, std::string_view text, std::string_view option,
                         uint64_t limit, std::string_view limitText) {
  if (r.max > limit)
    throw UsageError(fmt::format("{} {}: MAX {} bytes is above the limit of {} bytes ({})", option,
                                 text, r.max, limit, limitText));
}

std::vector<uint64_t> sizeSweep(uint64_t min, uint64_t max) {
  std::vector<uint64_t> sizes;
  if (min == 0) {
    sizes.push_back(0);
    min = 1;
  }
  for (uint64_t s = min; s <= max; s *= 2) {
    sizes.push_back(s);
    if (s > max / 2) break;
  }
  return sizes;
}

std::string formatSize(uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return fmt::format("{}G", bytes >> 30);
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return fmt::format("{}M", bytes >> 20);
  if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0) return fmt::format("{}K", bytes >> 10);
  return fmt::format("{}", bytes);
}

}  // namespace rdmabench
