#pragma once
// The one way rdmabench reads untrusted JSON: control frames from clients and servers, rendezvous
// store messages, `compare` input files. Parsing is bounded (input bytes, nesting depth) and never
// recursive on the input's shape; fields are read by typed, range-checked accessors that reject
// (never truncate or wrap) out-of-range integers, non-integral numbers for integer fields,
// non-finite numbers and over-long strings. Readers return references or scalars, never copies of
// a sub-document.
//
// Errors: every function throws ProtocolError with a one-line message that names `what` (the
// frame or file being read), the field, the value (escaped, shortened) and the limit.
// Thread-safety: pure functions.

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/text_escape.h"  // escapeForLog, for the readers' callers

namespace rdmabench {

// Deepest nesting accepted by default. rdmabench's own documents nest at most 5 levels.
inline constexpr size_t kJsonMaxDepth = 32;

// Parses `text` as one JSON document. Throws ProtocolError naming `what` when the text is not
// valid JSON, nests deeper than `maxDepth` (objects + arrays; the top level is depth 1) or is
// longer than `maxBytes`.
nlohmann::json parseUntrustedJson(std::string_view text, std::string_view what,
                                  size_t maxDepth = kJsonMaxDepth,
                                  size_t maxBytes = std::numeric_limits<size_t>::max());

// One complete value of a document read by parseUntrustedJsonStream.
struct JsonStreamValue {
  size_t depth = 0;  // enclosing containers: 1 = a member or element of the top-level value
  // Member names from the top down to this value; array levels add no name (an element carries
  // the name of its array): rows[3] -> {"rows"}, variants[1].rows[0] -> {"variants", "rows"}.
  std::span<const std::string> path;
  bool arrayElement = false;  // an element of an array (else a member of an object)
  const nlohmann::json& value;
};

// Called for every complete value below the top level, in document order (members before their
// object). Returning false drops the value from the document being built, so a reader that
// consumes rows as they come keeps only what it returns true for.
using JsonStreamCallback = std::function<bool(const JsonStreamValue&)>;

// Reads one JSON document from `in` incrementally, with the limits of parseUntrustedJson (depth
// at parse time, at most `maxBytes` bytes read from `in`), calling `onValue` as values complete.
// Returns the top-level value without the dropped parts. Throws ProtocolError naming `what`
// (invalid JSON, too deep, too long); exceptions thrown by `onValue` propagate.
nlohmann::json parseUntrustedJsonStream(std::istream& in, std::string_view what,
                                        const JsonStreamCallback& onValue,
                                        size_t maxDepth = kJsonMaxDepth,
                                        size_t maxBytes = std::numeric_limits<size_t>::max());

// The member `key` of object `obj`, or nullptr when absent (or null). Throws when `obj` is not an
// object.
const nlohmann::json* jsonFind(const nlohmann::json& obj, std::string_view key,
                               std::string_view what);

// Unsigned integer member in [min, max]; `def` when absent. Rejects negative, fractional,
// non-finite and out-of-range values, and non-numbers.
uint64_t jsonUint(const nlohmann::json& obj, std::string_view key, std::string_view what,
                  uint64_t def, uint64_t min = 0,
                  uint64_t max = std::numeric_limits<uint64_t>::max());

// Signed integer member in [min, max]; `def` when absent.
int64_t jsonInt(const nlohmann::json& obj, std::string_view key, std::string_view what, int64_t def,
                int64_t min = std::numeric_limits<int64_t>::min(),
                int64_t max = std::numeric_limits<int64_t>::max());

// Finite floating-point member in [min, max]; `def` when absent.
double jsonDouble(const nlohmann::json& obj, std::string_view key, std::string_view what,
                  double def, double min = -std::numeric_limits<double>::max(),
                  double max = std::numeric_limits<double>::max());

// Boolean member; `def` when absent.
bool jsonBool(const nlohmann::json& obj, std::string_view key, std::string_view what, bool def);

// String member of at most `maxBytes` bytes; `def` when absent.
std::string jsonString(const nlohmann::json& obj, std::string_view key, std::string_view what,
                       std::string_view def = {}, size_t maxBytes = 4096);

// Array member with at most `maxItems` items (returned by reference), or nullptr when absent.
const nlohmann::json* jsonArray(const nlohmann::json& obj, std::string_view key,
                                std::string_view what, size_t maxItems);

// Object member (by reference), or nullptr when absent.
const nlohmann::json* jsonObject(const nlohmann::json& obj, std::string_view key,
                                 std::string_view what);

}  // namespace rdmabench
