#include "launch/limits.h"

#include <sys/resource.h>

#include <cerrno>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench::launch {

namespace {

std::string limitText(rlim_t v) {
  return v == RLIM_INFINITY ? std::string("unlimited") : fmt::format("{}", v);
}

}  // namespace

void ensureDescriptors(uint64_t needed, const std::string& what) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) throw SystemError("getrlimit(RLIMIT_NOFILE)", errno);
  if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= needed) return;
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < needed)
    throw UsageError(fmt::format(
        "{}: needs about {} file descriptors (one rendezvous connection per rank) but the limit "
        "is {} (hard limit {}); raise it (ulimit -n {}) or run fewer ranks",
        what, needed, limitText(rl.rlim_cur), limitText(rl.rlim_max), needed));
  const rlim_t old = rl.rlim_cur;
  rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? needed : rl.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
    throw SystemError(fmt::format("{}: setrlimit(RLIMIT_NOFILE) from {} to {}", what,
                                  limitText(old), limitText(rl.rlim_cur)),
                      errno);
}

}  // namespace rdmabench::launch
