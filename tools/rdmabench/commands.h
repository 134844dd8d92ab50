#pragma once
// Subcommands implemented in their own files (main.cc dispatches).

#include <string>
#include <vector>

namespace rdmabench {

// `rdmabench info [--format json]`: every backend, built or not, usable or not and why.
int runInfoCommand(const std::vector<std::string>& args);

}  // namespace rdmabench
