#pragma once
// One source for `rdmabench CMD --help`, the man page (rdmabench.1), the option tables of
// docs/cli.md and the bash completion: every renderer here walks the Boost.Program_options
// descriptions that the parsers themselves use (lib/cli/options.cc, coll_options.cc,
// tools/rdmabench/*.cc), so a new or changed option shows up everywhere at once.
// `rdmabench help --man | --markdown | --bash-completion` prints the generated texts
// (cmake/Docs.cmake, tools/gen-docs.sh); docs/cli.md's tables are checked against them by the
// test docs.cli_md_in_sync. Also: the "did you mean" suggestions for mistyped names.
// Thread-safety: pure functions, no shared state.

#include <boost/program_options.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmabench::cli {

using OptionGroups = std::vector<boost::program_options::options_description>;

// One subcommand. The first group's caption is "Usage: rdmabench CMD ...\nprose...\n\nGroup"
// (the parsers' own captions); later groups' captions are their titles.
struct CommandDoc {
  std::string name;     // "lat"
  std::string args;     // what follows the name in the command list: "[HOST]", "FILE.."
  std::string summary;  // one line: the command list, bash completion
  std::function<OptionGroups()> options;  // the parser's own descriptions (empty: none)
};

// One option as every renderer sees it.
struct OptionDoc {
  std::string shortName;             // "-s" or ""
  std::string longName;              // "--size"
  std::string valueName;             // "SIZE", "on|off"; empty for a flag
  bool optionalValue = false;        // takes [VALUE] (implicit value), e.g. -e [on|off]
  std::string description;           // the help text as the parser has it
  std::vector<std::string> choices;  // "a | b | c" lists of the description; may be empty
};

// The options of one group in order (hidden groups are never passed in).
std::vector<OptionDoc> optionDocs(const boost::program_options::options_description& group);

// The `--help` text of one command (usage, prose, then every group with its options), wrapped
// to `width` columns.
std::string renderHelp(const OptionGroups& groups, unsigned width = 100);

// Top-level usage: the command list, then `extra` lines.
std::string renderUsage(const std::vector<CommandDoc>& commands, std::string_view extra);

// The man page rdmabench(1) in roff (-man macros): NAME, SYNOPSIS, DESCRIPTION, COMMANDS (one
// subsection per command with its options), EXIT STATUS, ENVIRONMENT, EXAMPLES, SEE ALSO.
std::string renderMan(const std::vector<CommandDoc>& commands, std::string_view version);

// docs/cli.md's option tables: per command a block between `<!-- BEGIN GENERATED: CMD -->` and
// `<!-- END GENERATED: CMD -->` (a group identical to one printed for an earlier command is
// referred to, not repeated).
std::string renderMarkdown(const std::vector<CommandDoc>& commands);

// A bash completion script (bash-completion 2.x API): subcommands, each command's options,
// the values of options with a fixed list, devices from /sys/class/infiniband, libfabric
// providers from `fi_info -l` (once per shell), files for FILE/DIR arguments.
std::string renderBashCompletion(const std::vector<CommandDoc>& commands);

// Optimal string alignment distance (Damerau-Levenshtein with adjacent transpositions):
// insertions, deletions, substitutions and swaps of neighbours cost 1 each.
size_t editDistance(std::string_view a, std::string_view b);

// The candidates `word` was probably meant to be: those at the smallest edit distance when
// it is <= 2 (<= 1 for words of 3 characters or fewer), else the one candidate `word` is a
// prefix of, else (a dashless word: a command) the one candidate of 3+ characters that is a
// prefix of `word` ("latency" -> "lat"). Empty when nothing is close.
std::vector<std::string> suggestions(std::string_view word,
                                     const std::vector<std::string>& candidates);

// "; did you mean '--size'?" / "; did you mean '--window' or '--warmup'?" or "".
std::string didYouMean(std::string_view word, const std::vector<std::string>& candidates);

// Every spelling of `groups`' options: "--size", "-s", ...
std::vector<std::string> optionSpellings(const OptionGroups& groups);

// The words joined by `sep` ("a|b|c"): value names and completion word lists.
std::string joinWords(const std::vector<std::string>& words, const char* sep);

}  // namespace rdmabench::cli
