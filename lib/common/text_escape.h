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
// well-formed UTF-8 is kept. Cut to `maxBytes` of output with "..." appended when longer, never
// inside an escape or a UTF-8 sequence.
std::string escapeForLog(std::string_view text, size_t maxBytes = 200);

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
