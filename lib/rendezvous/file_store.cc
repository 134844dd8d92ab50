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
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/text_escape.h"
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

FileStore::FileStore(const std::string& directory, const std::string& runId, int rank,
                     std::string host)
    : dir_(directory + "/" + (runId.empty() ? std::string("default") : runId)),
      rank_(rank),
      host_(std::move(host)) {
  makeDirs(dir_);
}

void FileStore::leave(bool ok, const std::string& reason) {
  if (ok) return;
  // Written aside and linked: link() fails with EEXIST when another rank failed first, so the
  // file always names the first failure (the root cause), complete.
  const std::string path = dir_ + "/failed";
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << nlohmann::json{{"rank", rank_}, {"host", host_}, {"reason", reason.substr(0, 4096)}}
             .dump();
  }
  // EEXIST is the expected failure (named result: link is warn_unused_result under
  // _FORTIFY_SOURCE, see common/output.cc).
  [[maybe_unused]] const int linked = ::link(tmp.c_str(), path.c_str());
  ::unlink(tmp.c_str());
}

void FileStore::checkPeers() {
  std::string text;
  if (!readFile(dir_ + "/failed", text)) return;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return;  // being written: seen complete at the next check
  auto field = [&j](const char* key, const char* def) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string(def);
  };
  auto r = j.find("rank");
  const long long rank = r != j.end() && r->is_number_integer() ? r->get<long long>() : -1;
  if (rank == rank_ && rank_ >= 0) return;  // this rank's own failure
  // Written by whoever can write the directory: escaped before it reaches a terminal.
  const std::string host = escapeForLog(field("host", ""), 256);
  throw PeerError(fmt::format("rank {}{} failed: {} (file store {})", rank,
                              host.empty() ? "" : " on host " + host,
                              escapeForLog(field("reason", "(no reason)"), 4200), dir_));
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
  for (int polls = 0;; ++polls) {
    if (readFile(path, value)) return value;
    if (polls % 10 == 0) checkPeers();
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
