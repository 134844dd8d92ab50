#include "common/token.h"

#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench {

namespace {

void checkTokenText(const std::string& token, std::string_view source) {
  if (token.size() > kMaxTokenBytes)
    throw UsageError(
        fmt::format("{}: token of {} bytes, limit {} bytes", source, token.size(), kMaxTokenBytes));
  for (unsigned char c : token)
    if (c < 0x20 || c == 0x7f)
      throw UsageError(fmt::format("{}: the token holds a control character", source));
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
  std::string text = fmt::format("rdmabench/{}/{}/{}", cluster ? cluster : "", job, getuid());
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("slurm-{:016x}", h);
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
  return fmt::format("access refused: wrong token (check {} or --token on both sides)",
                     kTokenEnvVar);
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
