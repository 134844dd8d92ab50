#pragma once
// Subcommands implemented in their own files (main.cc dispatches).

#include <string>
#include <vector>

#include "cli/help_gen.h"

namespace rdmabench {

// `rdmabench info [--format json]`: every backend, built or not, usable or not and why.
int runInfoCommand(const std::vector<std::string>& args);

// The option descriptions the commands parse with (also --help, man page, docs/cli.md and the
// bash completion: cli/help_gen.h).
cli::OptionGroups infoOptions();
cli::OptionGroups compareOptions();
cli::OptionGroups plotCommandOptions();
cli::OptionGroups rendezvousOptions();

// Every subcommand, in the order of the command list (main.cc).
std::vector<cli::CommandDoc> commandDocs();

// `rdmabench compare FILE... [--baseline FILE]` (compare.cc, docs/compare.md).
int runCompareCommand(const std::vector<std::string>& args);

// `rdmabench plot FILE... -o OUT.png|OUT.svg` (compare.cc, docs/compare.md).
int runPlotCommand(const std::vector<std::string>& args);
// `rdmabench barrier | allreduce | ring` (collectives.cc): N ranks, launched by --np, Slurm,
// mpirun or explicit flags; rank 0 reports.
int runCollectiveCommand(const std::string& test, const std::vector<std::string>& args,
                         const std::string& commandLine);
// `rdmabench noise` (noise.cc, docs/noise.md): OS noise per core and node, its sources, and its
// cost to a collective; N ranks as the collectives.
int runNoiseCommand(const std::vector<std::string>& args, const std::string& commandLine);
cli::OptionGroups noiseOptions();
// `rdmabench check` (check.cc, docs/check.md): the node health gate; exit 0 healthy, 1
// unhealthy (first line: the drain reason), 2 usage, 3 could not run.
int runCheckCommand(const std::vector<std::string>& args, const std::string& commandLine);
cli::OptionGroups checkOptions();
// `rdmabench connect` (connect.cc, docs/connect.md): connection setup rate; exit 0, 2 usage,
// 3 could not run.
int runConnectCommand(const std::vector<std::string>& args, const std::string& commandLine);
cli::OptionGroups connectOptions();
// `rdmabench reg` (reg.cc, docs/reg.md): memory registration cost per size; exit 0, 2 usage,
// 3 could not run.
int runRegCommand(const std::vector<std::string>& args, const std::string& commandLine);
cli::OptionGroups regOptions();
// `rdmabench rendezvous`: the standalone rendezvous store server.
int runRendezvousCommand(const std::vector<std::string>& args);
// `rdmabench version [--format json]` (version.cc): release, git describe, protocol, backends.
int runVersionCommand(const std::vector<std::string>& args);

}  // namespace rdmabench
