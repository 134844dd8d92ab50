#pragma once
// The one function that makes peer-supplied or file-supplied text safe to print or write:
// host names, provider and device names, error texts and bye reasons from a peer, lines of a
// `compare` input. Every place that shows such text on a terminal, in a log, in a table header
// or in an output file passes it through escapeForLog (escapeForTerminal is the same function
// under the name the store side uses). Every string written into a gnuplot script passes through
// gnuplotString or gnuplotOutputPath. Thread-safety: pure functions.

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

// gnuplot strings. gnuplot runs backquoted text inside a double-quoted string as a shell command
// ("node7`touch X`"); inside single quotes it interprets nothing ('' stands for one quote: no
// backquotes, no @macros, no backslash escapes). A line break would end the script line, so no
// literal written here holds one.

// `text` (a title, key or tic label, peer-supplied host names included) as a gnuplot
// single-quoted string; control characters are shown as escapeForLog shows them (\n, \x1b), the
// rest is kept byte for byte. Never throws.
std::string gnuplotString(std::string_view text);

// `path` as the single-quoted file name of gnuplot's `set output`, "./" put before a relative
// path (gnuplot pipes its output into a shell command when the name starts with '|'). Throws
// UsageError "OPTION PATH: a plot file name cannot hold control characters (gnuplot strings are
// one line)" for a C0 control character or DEL; option parsers call it to check the path early.
std::string gnuplotOutputPath(std::string_view path, std::string_view option);

}  // namespace rdmabench
