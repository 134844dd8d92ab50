#include "common/version.h"

#ifndef RDMABENCH_VERSION
#define RDMABENCH_VERSION "unknown"
#endif

namespace rdmabench::version {

// gitDescribe() is defined in the generated git_describe.cc (cmake/GitDescribe.cmake), so that
// a new commit recompiles that one file, not every user of RDMABENCH_VERSION.

std::string release() {
  return RDMABENCH_VERSION;
}

std::string describe(const std::string& release, const std::string& gitDescribe) {
  return gitDescribe.empty() ? release : release + " (git " + gitDescribe + ")";
}

}  // namespace rdmabench::version
