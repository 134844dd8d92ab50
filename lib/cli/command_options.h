#pragma once
// What the single-process commands (check, reg, connect) parse alike: the option groups with
// --help, the transport (-t, or the default rule with its note, and the transport-only options
// checked against it), and -f/-o (the format from the file's suffix when -f is absent). Every bad
// value is a one-line UsageError naming the option, the value and what is valid. Pure.

#include <boost/program_options.hpp>

#include <string>
#include <vector>

#include "cli/help_gen.h"

namespace rdmabench::cli {

// --help as the commands report it: set, the rendered text and the groups (for the man page).
struct HelpRequest {
  bool help = false;
  std::string text;
  OptionGroups groups;
};

// Parses `args` (without program and command names) against every group of `groups`;
// with --help, moves the groups into `help` and fills it. UsageError as cli::parseOptions.
boost::program_options::variables_map parseCommandOptions(const char* command, OptionGroups& groups,
                                                          const std::vector<std::string>& args,
                                                          HelpRequest& help);

// The same for a command struct with help, helpText and helpGroups members: filled on --help
// (the caller then returns the command as it is).
template <class Command>
boost::program_options::variables_map parseCommandOptions(const char* command, OptionGroups groups,
                                                          const std::vector<std::string>& args,
                                                          Command& cmd) {
  HelpRequest help;
  boost::program_options::variables_map vm = parseCommandOptions(command, groups, args, help);
  cmd.help = help.help;
  if (help.help) {
    cmd.helpText = std::move(help.text);
    cmd.helpGroups = std::move(help.groups);
  }
  return vm;
}

// -t verbs|ofi|socket as given, or without -t cli::defaultTransport (verbs with an active port,
// else socket) with `note` saying why; then the transport-only options given (-d, --provider,
// --ep, -R, ...) checked against it. UsageError for an unknown transport or an option it does not
// read.
std::string chooseTransport(const boost::program_options::variables_map& vm, std::string& note);

// -f and -o: `format` from -f, else from -o's suffix (.json, .csv), else `format` as it was;
// UsageError naming the command when the result is not one of `valid`.
void parseFormatAndOutput(const boost::program_options::variables_map& vm, const char* command,
                          const std::vector<std::string>& valid, std::string& format,
                          std::string& outputPath);

}  // namespace rdmabench::cli
