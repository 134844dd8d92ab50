#pragma once
// Parsing and formatting of sizes and rates. Sizes use binary suffixes as perftest's -s and
// OSU's -m do (K = 1024, M = 2^20, G = 2^30); rates are decimal (MB/s = 10^6 B/s, Gb/s =
// 10^9 bit/s) as OSU, IMB and perftest --report_gbits print them. Thread-safe (pure functions).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rdmabench {

// "4096", "65536B", "4K", "4k", "64KiB", "1M", "1MiB", "2G", "1T" -> bytes (K/M/G/T and KiB/MiB/
// GiB/TiB are binary, 2^10..2^40, as OSU's and perftest's; a bare B is bytes). Throws UsageError
// naming `option` and the text when it is not a non-negative integer with an optional suffix, or
// exceeds 2^63; "1MB" (KB, MB, GB, TB: decimal in SI, binary in OSU) is refused as ambiguous,
// naming both readings. Callers check their own limit (e.g. 2 GiB - 1 per message).
uint64_t parseSize(std::string_view text, std::string_view option);

// OSU-style "-m MIN:MAX", "MAX" or "MIN:" (MIN defaults to `defaultMin`, MAX to `defaultMax`).
// Throws UsageError when MIN > MAX.
struct SizeRange {
  uint64_t min;
  uint64_t max;
};
SizeRange parseSizeRange(std::string_view text, std::string_view option, uint64_t defaultMin,
                         uint64_t defaultMax);
// UsageError when the MAX of a range parsed from `text` (given to `option`, as the user spelled
// it: "-m/--msg-sizes") is above `limit` bytes, naming both and `limitText` ("2 GiB - 1").
void checkSizeRangeLimit(const SizeRange& r, std::string_view text, std::string_view option,
                         uint64_t limit, std::string_view limitText);

// Powers of two from `min` to `max` inclusive, plus 0 first when min == 0 (OSU latency's 0 B row).
// A min that is not a power of two starts the list and doubling goes on from it (OSU's loop).
std::vector<uint64_t> sizeSweep(uint64_t min, uint64_t max);

// 4096 -> "4K", 1048576 -> "1M", 1000 -> "1000": short labels for tables and errors.
std::string formatSize(uint64_t bytes);

// Decimal megabytes per second: bytes / seconds / 10^6.
inline double megabytesPerSecond(double bytes, double seconds) {
  return seconds > 0 ? bytes / seconds / 1e6 : 0.0;
}

// Decimal gigabits per second: bytes * 8 / seconds / 10^9.
inline double gigabitsPerSecond(double bytes, double seconds) {
  return seconds > 0 ? bytes * 8.0 / seconds / 1e9 : 0.0;
}

}  // namespace rdmabench
