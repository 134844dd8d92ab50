#include "check/history.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/json_read.h"

namespace rdmabench::check {

namespace {

using nlohmann::json;

HistoryRun runFromJson(const json& r, const std::string& what) {
  if (!r.is_object()) throw ProtocolError(what + ": a run is not an object");
  HistoryRun run;
  run.date = jsonString(r, "date", what, "");
  run.healthy = jsonBool(r, "healthy", what, true);
  if (const json* f = jsonObject(r, "figures", what))
    for (auto it = f->begin(); it != f->end(); ++it) {
      if (!it->is_number())
        throw ProtocolError(
            fmt::format("{}: figure '{}' is not a number", what, escapeForLog(it.key())));
      run.figures[it.key()] = it->get<double>();
    }
  return run;
}

json runToJson(const HistoryRun& r) {
  json f = json::object();
  for (const auto& [k, v] : r.figures)
    f[k] = v;
  return {{"date", r.date}, {"healthy", r.healthy}, {"figures", f}};
}

History parseHistory(const std::string& path, const std::string& text, const std::string& node) {
  History h;
  h.path = path;
  h.exists = true;
  const std::string what = "history " + path;
  try {
    const json j = parseUntrustedJson(text, what, 8, kHistoryMaxBytes);
    if (!j.is_object()) throw ProtocolError(what + ": not a JSON object");
    const std::string schema = jsonString(j, "schema", what, "");
    if (schema != kHistorySchema)
      throw HistoryError(fmt::format("{}: schema '{}', expected '{}'", what, escapeForLog(schema),
                                     kHistorySchema));
    const int64_t version = jsonInt(j, "version", what, 0, 0, 1'000'000);
    if (version != kHistoryVersion)
      throw HistoryError(fmt::format("{}: schema version {}, this rdmabench reads version {}", what,
                                     version, kHistoryVersion));
    h.node = jsonString(j, "node", what, "");
    if (h.node != node)
      throw HistoryError(fmt::format("{}: the history of node '{}', not of this node '{}'", what,
                                     escapeForLog(h.node), node));
    const json* runs = jsonArray(j, "runs", what, 100000);
    if (runs)
      for (const json& r : *runs)
        h.runs.push_back(runFromJson(r, what));
  } catch (const HistoryError&) {
    throw;
  } catch (const std::exception& e) {
    throw HistoryError(
        fmt::format("{} (left as it is; move it away to start a new history)", e.what()));
  }
  return h;
}

// Reads the whole file; false when it does not exist. HistoryError when it cannot be read.
bool readFile(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return false;
    throw HistoryError(fmt::format("history {}: cannot read: {}", path, std::strerror(errno)));
  }
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad())
    throw HistoryError(fmt::format("history {}: cannot read: {}", path, std::strerror(errno)));
  out = s.str();
  return true;
}

// Holds an flock on `path` (created if needed) until destroyed.
class LockFile {
 public:
  LockFile(const std::string& path, int64_t timeoutMs) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw HistoryError(
          fmt::format("history lock {}: cannot open: {}", path, std::strerror(errno)));
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR)
        throw HistoryError(fmt::format("history lock {}: flock: {}", path, std::strerror(errno)));
      if (std::chrono::steady_clock::now() >= until)
        throw HistoryError(fmt::format(
            "history lock {}: still held after {} ms by another rdmabench check on this node", path,
            timeoutMs));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~LockFile() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  LockFile(const LockFile&) = delete;
  LockFile& operator=(const LockFile&) = delete;

 private:
  int fd_ = -1;
};

void writeAtomically(const std::string& dir, const std::string& path, const std::string& text) {
  std::string tmpl = dir + "/.check-history.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0)
    throw HistoryError(fmt::format("history {}: cannot create a temporary file in {}: {}", path,
                                   dir, std::strerror(errno)));
  const std::string temp(name.data());
  auto fail = [&](const char* call) {
    const int err = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    return HistoryError(fmt::format("history {}: {}: {} (the previous file is unchanged)", path,
                                    call, std::strerror(err)));
  };
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw fail("write");
    done += static_cast<size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) throw fail("fchmod");
  if (::fsync(fd) != 0) throw fail("fsync");
  if (::close(fd) != 0) {
    ::unlink(temp.c_str());
    throw HistoryError(fmt::format("history {}: close: {}", path, std::strerror(errno)));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    throw HistoryError(fmt::format("history {}: rename: {}", path, std::strerror(err)));
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);  // the rename itself reaches the disk
    ::close(dfd);
  }
}

}  // namespace

std::vector<double> History::values(const std::string& key, size_t window) const {
  std::vector<double> out;
  for (auto it = runs.rbegin(); it != runs.rend() && out.size() < window; ++it) {
    if (!it->healthy) continue;
    auto f = it->figures.find(key);
    if (f != it->figures.end()) out.insert(out.begin(), f->second);
  }
  return out;
}

std::string historyPath(const std::string& dir, const std::string& node) {
  if (node.empty() || node == "." || node == ".." || node.find('/') != std::string::npos)
    throw UsageError(
        fmt::format("check: node name '{}' cannot name a history file", escapeForLog(node)));
  return dir + "/" + node + ".json";
}

void checkHistoryDir(const std::string& dir, const std::string& option) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    throw UsageError(fmt::format("{} {}: {}", option, dir, std::strerror(errno)));
  if (!S_ISDIR(st.st_mode)) throw UsageError(fmt::format("{} {}: not a directory", option, dir));
}

History readHistory(const std::string& dir, const std::string& node) {
  const std::string path = historyPath(dir, node);
  std::string text;
  if (!readFile(path, text)) {
    History h;
    h.path = path;
    h.node = node;
    return h;
  }
  return parseHistory(path, text, node);
}

void appendRun(const std::string& dir, const std::string& node, const HistoryRun& run,
               int64_t lockTimeoutMs) {
  const std::string path = historyPath(dir, node);
  checkHistoryDir(dir, "--record");
  LockFile lock(dir + "/." + node + ".lock", lockTimeoutMs);
  History h = readHistory(dir, node);
  h.runs.push_back(run);
  if (h.runs.size() > kHistoryMaxRuns)
    h.runs.erase(h.runs.begin(),
                 h.runs.begin() + static_cast<std::ptrdiff_t>(h.runs.size() - kHistoryMaxRuns));
  json runs = json::array();
  for (const HistoryRun& r : h.runs)
    runs.push_back(runToJson(r));
  const json doc = {
      {"schema", kHistorySchema}, {"version", kHistoryVersion}, {"node", node}, {"runs", runs}};
  writeAtomically(dir, path, doc.dump(1) + "\n");
}

}  // namespace rdmabench::check
