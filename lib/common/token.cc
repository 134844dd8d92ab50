#include "common/token.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench {

namespace {

// Error unless `st` (of `path`) belongs to this user and grants nothing to group or others.
void checkPrivate(const struct stat& st, const std::string& path) {
  if (st.st_uid != ::getuid())
    throw Error(
        fmt::format("Slurm job token: {} belongs to uid {}, not to this user (uid {}); set "
                    "{} to a directory of your own",
                    path, st.st_uid, ::getuid(), kTokenDirEnvVar));
  if (st.st_mode & 077)
    throw Error(
        fmt::format("Slurm job token: {} is accessible to other users (mode {:04o}); "
                    "chmod go= it",
                    path, st.st_mode & 07777));
}

// `text` with every byte outside [A-Za-z0-9._-] replaced by '_' (a file name part).
std::string fileNamePart(std::string text) {
  for (char& c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return text;
}

void checkTokenText(const std::string& token, std::string_view source) {
  if (token.size() > kMaxTokenBytes)
    throw UsageError(
        fmt::format("{}: token of {} bytes, limit {} bytes", source, token.size(), kMaxTokenBytes));
  for (unsigned char c : token)
    if (c < 0x20 || c == 0x7f)
      throw UsageError(fmt::format("{}: the token holds a control character", source));
}

// The directory of the Slurm jobs' token files, created (mode 0700) when missing; Error unless
// it is a directory of this user's that nobody else can access.
std::string tokenDirectory() {
  std::string dir;
  if (const char* d = std::getenv(kTokenDirEnvVar); d && *d) {
    dir = d;
  } else {
    const char* home = std::getenv("HOME");
    if (!home || !*home) {
      const passwd* pw = ::getpwuid(::getuid());
      home = pw ? pw->pw_dir : nullptr;
    }
    if (!home || !*home)
      throw Error(fmt::format("Slurm job token: no home directory; set {} or {}", kTokenDirEnvVar,
                              kTokenEnvVar));
    dir = std::string(home) + "/.rdmabench";
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw SystemError("Slurm job token: mkdir " + dir, errno);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) throw SystemError("Slurm job token: " + dir, errno);
  if (!S_ISDIR(st.st_mode))
    throw Error(
        fmt::format("Slurm job token: {} is not a directory (set {})", dir, kTokenDirEnvVar));
  checkPrivate(st, dir);
  return dir;
}

// The token in `path`, or nothing when the file does not exist. Error unless the file is this
// user's, private, and holds 32 hex digits.
std::optional<std::string> readTokenFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw SystemError("Slurm job token: open " + path, errno);
  }
  struct stat st {};
  char buf[80] = {};
  const bool ok = ::fstat(fd, &st) == 0;
  const ssize_t n = ok ? ::read(fd, buf, sizeof buf - 1) : -1;
  const int err = errno;
  ::close(fd);
  if (!ok || n < 0) throw SystemError("Slurm job token: read " + path, err);
  checkPrivate(st, path);
  std::string token(buf, static_cast<size_t>(n));
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r'))
    token.pop_back();
  if (token.size() != 32 || token.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw Error(fmt::format("Slurm job token: {} holds no token (32 hex digits); remove it", path));
  return token;
}

}  // namespace

std::string resolveToken(const std::optional<std::string>& option, bool slurmDefault) {
  if (option) {
    checkTokenText(*option, "--token");
    return *option;
  }
  if (const char* env = std::getenv(kTokenEnvVar)) {
    std::string t = env;
    checkTokenText(t, kTokenEnvVar);
    return t;
  }
  return slurmDefault ? slurmJobToken() : std::string();
}

std::string slurmJobToken() {
  const char* job = std::getenv("SLURM_JOB_ID");
  if (!job || !*job) return {};
  const char* cluster = std::getenv("SLURM_CLUSTER_NAME");
  const std::string dir = tokenDirectory();
  const std::string path = fmt::format("{}/slurm-{}-{}.token", dir,
                                       fileNamePart(cluster ? cluster : ""), fileNamePart(job));
  if (auto token = readTokenFile(path)) return *token;
  // First rank of the job here: a complete file, hard-linked into place; link(2) fails with
  // EEXIST when another rank (on any node sharing the directory) was first, and its token wins.
  std::string tmp = path + ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());  // mode 0600
  if (fd < 0) throw SystemError("Slurm job token: create " + tmp, errno);
  const std::string token = randomToken();
  const std::string line = token + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                       ::fsync(fd) == 0;
  const int writeErr = errno;
  ::close(fd);
  if (!written) {
    ::unlink(tmp.c_str());
    throw SystemError("Slurm job token: write " + tmp, writeErr);
  }
  const int linked = ::link(tmp.c_str(), path.c_str());
  const int linkErr = errno;
  ::unlink(tmp.c_str());
  if (linked == 0) return token;
  if (linkErr != EEXIST) throw SystemError("Slurm job token: link " + path, linkErr);
  if (auto theirs = readTokenFile(path)) return *theirs;
  throw Error(fmt::format("Slurm job token: {} vanished while it was created", path));
}

bool tokensEqual(std::string_view expected, std::string_view given) {
  unsigned diff = expected.size() == given.size() ? 0u : 1u;
  for (size_t i = 0; i < expected.size(); ++i) {
    unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff |= static_cast<unsigned>(static_cast<unsigned char>(expected[i]) ^ g);
  }
  return diff == 0;
}

std::string tokenRefusal(std::string_view expected, std::string_view given) {
  if (expected.empty() || tokensEqual(expected, given)) return {};
  if (given.empty())
    return fmt::format(
        "access refused: this listener requires a token and the hello carried none (set "
        "{} or --token)",
        kTokenEnvVar);
  return fmt::format(
      "access refused: wrong token (check {} or --token on both sides; under Slurm every node of "
      "the job must see the same {}, default ~/.rdmabench)",
      kTokenEnvVar, kTokenDirEnvVar);
}

std::string randomToken() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw SystemError("getrandom (a token for the local ranks)", errno);
    got += static_cast<size_t>(n);
  }
  std::string s;
  for (unsigned char b : bytes)
    s += fmt::format("{:02x}", b);
  return s;
}

}  // namespace rdmabench
