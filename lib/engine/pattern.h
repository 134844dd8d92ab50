#pragma once
// Payload patterns for --check: byte k of a message tagged `tag` is a function of (tag, k), so
// a stale, shifted or corrupted payload differs (a message of >= 8 bytes carries all 64 bits of
// the tag's mixed seed). Stamping and checking run outside timed
// intervals. Thread-safety: pure functions.

#include <cstdint>

namespace rdmabench::engine {

// 64-bit mix of a tag (splitmix64's finaliser), so distinct tags give unrelated patterns.
inline uint64_t patternSeed(uint64_t tag) {
  uint64_t z = tag + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Byte k of the pattern with seed `seed`: the seed's 8 bytes in turn, shifted by k / 8.
inline uint8_t patternByte(uint64_t seed, uint64_t k) {
  return static_cast<uint8_t>((seed >> ((k & 7) * 8)) + (k >> 3) * 7 + 1);
}

// Writes the pattern of `tag` into p[0, n).
inline void stampPattern(uint8_t* p, uint64_t n, uint64_t tag) {
  const uint64_t seed = patternSeed(tag);
  for (uint64_t k = 0; k < n; ++k)
    p[k] = patternByte(seed, k);
}

// True when p[0, n) holds the pattern of `tag`.
inline bool patternMatches(const uint8_t* p, uint64_t n, uint64_t tag) {
  const uint64_t seed = patternSeed(tag);
  for (uint64_t k = 0; k < n; ++k)
    if (p[k] != patternByte(seed, k)) return false;
  return true;
}

// The tag of the read-latency pattern a responder stamps into its send area before a size.
inline uint64_t readPatternTag(uint64_t bytes) {
  return 0x5EAD0000ull ^ bytes;
}

}  // namespace rdmabench::engine
