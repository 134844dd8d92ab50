#include "launch/fold.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"

namespace rdmabench::launch {

std::string formatRankList(const std::vector<int>& in) {
  std::vector<int> r = in;
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  std::string s;
  for (size_t i = 0; i < r.size();) {
    size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1)
      ++j;
    // Appended piecewise: `"," + std::string` made GCC 12's Release build (-O3) warn
    // -Wrestrict (a false positive in the inlined operator+; the README's recipe shows it).
    if (!s.empty()) s += ',';
    s += j == i ? fmt::format("{}", r[i]) : fmt::format("{}-{}", r[i], r[j]);
    i = j + 1;
  }
  return s;
}

std::string stripOwnRank(const std::string& msg, int rank) {
  const std::string own = fmt::format("rank {}: ", rank);
  size_t p = 0;
  while (msg.compare(p, own.size(), own) == 0)
    p += own.size();
  return msg.substr(p);
}

LineFolder::LineFolder(int64_t windowNs, std::function<void(const std::string&)> out, int ranks)
    : windowNs_(windowNs), out_(std::move(out)), ranks_(static_cast<size_t>(std::max(0, ranks))) {}

namespace {

// The first "rank N on HOST: " in `line` with N = `rank` (runRank's error prefix): true and the
// parts around it.
bool splitRankPrefix(const std::string& line, int rank, std::string& head, std::string& host,
                     std::string& tail) {
  const std::string want = fmt::format("rank {} on ", rank);
  for (size_t p = line.find(want); p != std::string::npos; p = line.find(want, p + 1)) {
    if (p > 0 && line[p - 1] != ' ') continue;  // "ranks 1 on", "xrank 1 on"
    const size_t h = p + want.size();
    const size_t colon = line.find(": ", h);
    if (colon == std::string::npos || colon == h) return false;
    if (line.find(' ', h) < colon) continue;  // a host name has no spaces
    head = line.substr(0, p);
    host = line.substr(h, colon - h);
    tail = stripOwnRank(line.substr(colon + 2), rank);
    return true;
  }
  return false;
}

// The length of a relay prefix "rank N on host H failed: " at `p` of `text`, 0 if none.
size_t relayPrefixAt(const std::string& text, size_t p) {
  if (text.compare(p, 5, "rank ") != 0) return 0;
  size_t q = p + 5;
  const size_t digits = q;
  while (q < text.size() && text[q] >= '0' && text[q] <= '9')
    ++q;
  if (q == digits || text.compare(q, 9, " on host ") != 0) return 0;
  const size_t host = q + 9;
  const size_t end = text.find(" failed: ", host);
  if (end == std::string::npos || end == host || text.find(' ', host) < end) return 0;
  return end + 9 - p;
}

}  // namespace

bool LineFolder::addRelay(int rank, const Group& g) {
  if (!g.prefixed) return false;
  size_t p = 0, last = 0, n = 0;
  while ((n = relayPrefixAt(g.tail, p)) > 0) {
    last = p;
    p += n;
  }
  if (p == 0) return false;
  Relay r{g.head, g.host, g.tail.substr(last, p - last), g.tail.substr(p), {rank}};
  for (Relay& o : relays_)
    if (o.head == r.head && o.host == r.host && o.origin == r.origin && o.root == r.root) {
      if (std::find(o.ranks.begin(), o.ranks.end(), rank) == o.ranks.end()) o.ranks.push_back(rank);
      return true;
    }
  relays_.push_back(std::move(r));
  return true;
}

void LineFolder::add(int rank, const std::string& line, int64_t nowNs) {
  // Test hooks (engine/progress.h testHold) are timed by the tests that wait for them: at once.
  if (line.find("rdmabench: test hook: ") != std::string::npos) {
    flushAll();
    out_(line);
    return;
  }
  Group g;
  g.prefixed = splitRankPrefix(line, rank, g.head, g.host, g.tail);
  if (!g.prefixed) g.head = line;
  if (addRelay(rank, g)) return;
  for (size_t i = 0; i < groups_.size(); ++i) {
    Group& o = groups_[i];
    if (o.prefixed != g.prefixed || o.head != g.head || o.host != g.host || o.tail != g.tail)
      continue;
    if (std::find(o.ranks.begin(), o.ranks.end(), rank) == o.ranks.end()) {
      o.ranks.push_back(rank);
      return;
    }
    // The same rank repeats its line: what it printed before goes out first, in order.
    for (size_t k = 0; k <= i; ++k)
      emit(groups_[k]);
    groups_.erase(groups_.begin(), groups_.begin() + static_cast<long>(i) + 1);
    break;
  }
  g.ranks.push_back(rank);
  g.firstNs = nowNs;
  groups_.push_back(std::move(g));
}

void LineFolder::flushDue(int64_t nowNs) {
  size_t n = 0;
  while (n < groups_.size() && (nowNs - groups_[n].firstNs >= windowNs_ ||
                                (ranks_ > 0 && groups_[n].ranks.size() >= ranks_)))
    emit(groups_[n++]);
  groups_.erase(groups_.begin(), groups_.begin() + static_cast<long>(n));
}

void LineFolder::flushAll() {
  for (const Group& g : groups_)
    emit(g);
  groups_.clear();
  for (const Relay& r : relays_)
    out_(fmt::format("{}{} {} on {}: {}{}", r.head, r.ranks.size() < 2 ? "rank" : "ranks",
                     formatRankList(r.ranks), r.host, r.origin, r.root));
  relays_.clear();
}

void LineFolder::emit(const Group& g) {
  if (!g.prefixed) {
    out_(g.ranks.size() < 2 ? g.head
                            : fmt::format("{} (ranks {})", g.head, formatRankList(g.ranks)));
    return;
  }
  out_(fmt::format("{}{} {} on {}: {}", g.head, g.ranks.size() < 2 ? "rank" : "ranks",
                   formatRankList(g.ranks), g.host, g.tail));
}

namespace {

void writeLine(const std::string& line) {
  std::string s = line + "\n";
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(2, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

constexpr size_t kMaxLine = 64 * 1024;  // a longer run without a newline is printed as a line

}  // namespace

StderrFolder::StderrFolder(int ranks, int64_t windowMs)
    : partial_(static_cast<size_t>(ranks)), windowNs_(windowMs * 1'000'000) {
  auto makePipe = [](int fds[2], const char* what) {
    if (::pipe2(fds, O_CLOEXEC) != 0) throw SystemError(what, errno);
  };
  makePipe(stopFd_, "--np: pipe for the launcher's stderr thread");
  for (int r = 0; r < ranks; ++r) {
    int fds[2];
    makePipe(fds, "--np: pipe for a rank's stderr (descriptor limit? `ulimit -n`)");
    readFds_.push_back(fds[0]);
    writeFds_.push_back(fds[1]);
  }
}

StderrFolder::~StderrFolder() {
  if (thread_.joinable()) finish(0);
  for (int fd : readFds_)
    if (fd >= 0) ::close(fd);
  for (int fd : writeFds_)
    if (fd >= 0) ::close(fd);
  for (int fd : stopFd_)
    if (fd >= 0) ::close(fd);
}

void StderrFolder::redirectChild(int rank) {
  ::dup2(writeFds_[static_cast<size_t>(rank)], 2);  // dup2 clears O_CLOEXEC on fd 2
  for (int& fd : readFds_)
    fd = (::close(fd), -1);
  for (int& fd : writeFds_)
    fd = (::close(fd), -1);
  for (int& fd : stopFd_)
    fd = (::close(fd), -1);
}

void StderrFolder::start() {
  // The parent keeps only the read ends: a rank's pipe reaches EOF when that rank exits.
  for (int& fd : writeFds_)
    fd = (::close(fd), -1);
  thread_ = std::thread([this] { run(); });
}

void StderrFolder::finish(int64_t drainMs) {
  if (!thread_.joinable()) return;
  drainMs_ = drainMs;
  char b = 1;
  while (::write(stopFd_[1], &b, 1) < 0 && errno == EINTR) {
  }
  thread_.join();
}

void StderrFolder::run() {
  LineFolder folder(windowNs_, writeLine, static_cast<int>(readFds_.size()));
  int64_t stopAtNs = 0;  // 0 = not asked to stop
  std::vector<char> buf(65536);
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<size_t> rankOf;
    for (size_t r = 0; r < readFds_.size(); ++r)
      if (readFds_[r] >= 0) {
        fds.push_back({readFds_[r], POLLIN, 0});
        rankOf.push_back(r);
      }
    if (fds.empty() || (stopAtNs && nowNs() >= stopAtNs)) break;
    if (!stopAtNs) fds.push_back({stopFd_[0], POLLIN, 0});
    int n = ::poll(fds.data(), fds.size(), 50);
    if (n < 0 && errno != EINTR) break;
    const int64_t now = nowNs();
    for (size_t i = 0; n > 0 && i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      if (fds[i].fd == stopFd_[0]) {
        stopAtNs = now + drainMs_ * 1'000'000;
        continue;
      }
      const size_t r = rankOf[i];
      ssize_t got = ::read(fds[i].fd, buf.data(), buf.size());
      if (got < 0 && errno == EINTR) continue;
      std::string& part = partial_[r];
      if (got <= 0) {  // EOF (the rank and its children closed it) or an error
        ::close(readFds_[r]);
        readFds_[r] = -1;
        if (!part.empty()) folder.add(static_cast<int>(r), part, now);
        part.clear();
        continue;
      }
      part.append(buf.data(), static_cast<size_t>(got));
      size_t start = 0;
      for (size_t nl; (nl = part.find('\n', start)) != std::string::npos; start = nl + 1)
        folder.add(static_cast<int>(r), part.substr(start, nl - start), now);
      part.erase(0, start);
      if (part.size() > kMaxLine) {
        folder.add(static_cast<int>(r), part, now);
        part.clear();
      }
    }
    folder.flushDue(now);
  }
  // Whatever a rank left unterminated (or a process holding its pipe past the drain) goes out.
  for (size_t r = 0; r < partial_.size(); ++r)
    if (!partial_[r].empty()) folder.add(static_cast<int>(r), partial_[r], nowNs());
  folder.flushAll();
}

}  // namespace rdmabench::launch
