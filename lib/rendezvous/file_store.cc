// Store over a shared directory (store.h: FileStore).

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "rendezvous/store.h"
#include "rendezvous/store_protocol.h"

namespace rdmabench::rendezvous {

namespace {

void makeDirs(const std::string& path) {
  std::string cur;
  std::stringstream ss(path);
  std::string part;
  if (!path.empty() && path[0] == '/') cur = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    cur += part + "/";
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      throw SystemError("mkdir " + cur + " (file store)", errno);
  }
}

bool readFile(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

}  // namespace

FileStore::FileStore(const std::string& directory, const std::string& runId)
    : dir_(directory + "/" + (runId.empty() ? std::string("default") : runId)) {
  makeDirs(dir_);
}

std::string FileStore::pathFor(const std::string& key) const {
  std::string name;
  for (unsigned char ch : key) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.')
      name += static_cast<char>(ch);
    else
      name += fmt::format("%{:02x}", ch);
  }
  return dir_ + "/k_" + name;
}

void FileStore::set(const std::string& key, const std::string& value) {
  std::string path = pathFor(key);
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw SystemError("open " + tmp + " (file store)", errno);
    f.write(value.data(), static_cast<std::streamsize>(value.size()));
    if (!f) throw SystemError("write " + tmp + " (file store)", errno);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw SystemError("rename " + tmp + " (file store)", errno);
}

std::string FileStore::get(const std::string& key, int64_t timeoutMs) {
  Deadline dl(timeoutMs);
  std::string path = pathFor(key), value;
  for (;;) {
    if (readFile(path, value)) return value;
    if (dl.expired())
      throw TimeoutError(
          fmt::format("file store {}: waited {:.1f} s for '{}' (the rank that "
                      "writes it never arrived or died)",
                      dir_, static_cast<double>(timeoutMs) / 1000, key));
    throwIfInterrupted("waiting for the file store");
    ::usleep(2000);
  }
}

int64_t FileStore::add(const std::string& key, int64_t delta) {
  std::string path = pathFor(key);
  std::string lockPath = path + ".lock";
  int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw SystemError("open " + lockPath + " (file store)", errno);
  if (::flock(fd, LOCK_EX) != 0) {
    int e = errno;
    ::close(fd);
    throw SystemError("flock " + lockPath + " (file store)", e);
  }
  std::string cur;
  const bool found = readFile(path, cur) && cur.size() >= 8;
  const int64_t v = addCounter(found ? &cur : nullptr, delta);
  try {
    set(key, encodeU64(static_cast<uint64_t>(v)));
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return v;
}

}  // namespace rdmabench::rendezvous
