#pragma once
// The one function that makes peer-supplied or file-supplied text safe to print or write:
// host names, provider and device names, error texts and bye reasons from a peer, lines of a
// `compare` input. Every place that shows such text on a terminal, in a log, in a table header
// or in an output file passes it through escapeForLog (escapeForTerminal is the same function
// under the name the store side uses). Thread-safety: pure functions.

#include <cstddef>
#include <string>
#include <string_view>

namespace rdmabench {

// `text` made safe for one line of a terminal, log or report: C0 control characters, DEL, the C1
// controls U+0080..U+009F (a terminal may read U+009B as CSI) and bytes of invalid UTF-8 become
// \xNN escapes (C1 as \u00NN; \n, \r, \t as themselves escaped), backslash doubled; other
// well-formed UTF-8 is kept, but for the bidirectional embeddings, overrides and isolates
// U+202A..U+202E and U+2066..U+2069 (\u202e: they reorder what follows on the screen). Cut to
// `maxBytes` of output with "..." appended when longer, never inside an escape or a UTF-8 sequence.
std::string escapeForLog(std::string_view text, size_t maxBytes = 200);

// A JSON document (nlohmann's dump with ensure_ascii off, so well-formed UTF-8) with the C1
// controls U+0080..U+009F and the bidirectional controls above written as \u0080..\u009f and
// \u202a..\u202e, \u2066..\u2069: the same strings to a parser, inert on a terminal that shows
// the file. Their UTF-8 bytes occur only inside strings, so the result is valid JSON.
std::string escapeJsonControls(std::string_view json);

// Same as escapeForLog (one implementation for every printer of peer text).
inline std::string escapeForTerminal(std::string_view text, size_t maxBytes = 200) {
  return escapeForLog(text, maxBytes);
}

}  // namespace rdmabench
