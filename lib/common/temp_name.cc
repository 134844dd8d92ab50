#include "common/temp_name.h"

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string_view>

namespace rdmabench {
namespace {

constexpr std::string_view kRandom = "XXXXXX";  // mkstemp's six characters

std::string hostName() {
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return "host";
  std::string h = host;
  for (char& c : h)
    if (c == '/') c = '_';
  return h;
}

// Removes `dir`'s files named `prefix` + PID + "." + 6 characters whose PID no longer exists.
void removeStale(const std::string& dir, const std::string& prefix) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name.size() <= prefix.size() + 1 + kRandom.size() ||
        name.substr(0, prefix.size()) != prefix)
      continue;
    const std::string_view rest = name.substr(prefix.size());
    const size_t dot = rest.size() - kRandom.size() - 1;
    if (rest[dot] != '.' || dot == 0 || dot > 9) continue;
    long pid = 0;
    bool digits = true;
    for (char c : rest.substr(0, dot)) {
      digits = digits && c >= '0' && c <= '9';
      pid = pid * 10 + (c - '0');
    }
    if (!digits || pid <= 0 || pid == static_cast<long>(::getpid())) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive or not ours
    ::unlinkat(::dirfd(d), e->d_name, 0);
  }
  ::closedir(d);
}

}  // namespace

std::string reportTempTemplate(const std::string& dir, const std::string& base) {
  const std::string prefix = "." + base + ".rdmabench-" + hostName() + "-";
  const std::string mine = prefix + std::to_string(::getpid()) + "." + std::string(kRandom);
  if (mine.size() > NAME_MAX) return dir + "/." + base + "." + std::string(kRandom);
  removeStale(dir, prefix);
  return dir + "/" + mine;
}

}  // namespace rdmabench
