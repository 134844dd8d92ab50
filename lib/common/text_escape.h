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
// well-formed UTF-8 is kept. Cut to `maxBytes` of output with "..." appended when longer, never
// inside an escape or a UTF-8 sequence.
std::string escapeForLog(std::string_view text, size_t maxBytes = 200);

// Same as escapeForLog (one implementation for every printer of peer text).
inline std::string escapeForTerminal(std::string_view text, size_t maxBytes = 200) {
  return escapeForLog(text, maxBytes);
}

}  // namespace rdmabench
