#include "engine/hints.h"

#include <fmt/format.h>

namespace rdmabench::engine {

std::string pathMtuHint(uint64_t lastPassedBytes, uint64_t failedBytes, uint64_t pathMtuBytes,
                        std::string_view error) {
  // ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR)
  if (error.find("transport retry counter exceeded") == std::string_view::npos) return {};
  if (lastPassedBytes == 0 || failedBytes <= lastPassedBytes || lastPassedBytes >= pathMtuBytes)
    return {};
  uint64_t suggest = 256;
  for (uint64_t m : {512u, 1024u, 2048u})
    if (m <= lastPassedBytes && m < pathMtuBytes) suggest = m;
  return fmt::format(
      "; sizes up to {} B passed and {} B failed: frames above {} B may be dropped on the path "
      "(a switch or link with an MTU below the QP's path MTU of {} B); try --mtu {}",
      lastPassedBytes, failedBytes, lastPassedBytes, pathMtuBytes, suggest);
}

}  // namespace rdmabench::engine
