// Built without PMIx (RDMABENCH_WITH_PMIX=OFF or libpmix-dev missing): rendezvous/pmix.h.
#include "common/error.h"
#include "rendezvous/pmix.h"

namespace rdmabench::rendezvous {

namespace {
[[noreturn]] void notBuilt() {
  throw UsageError(
      "--rendezvous pmix: this rdmabench was built without PMIx (RDMABENCH_WITH_PMIX=OFF or "
      "libpmix-dev missing); use --rendezvous HOST:PORT or file:DIR");
}
}  // namespace

bool pmixBuilt() {
  return false;
}

const PmixIdentity& pmixInit() {
  notBuilt();
}

std::string pmixShareFromRank(const std::string&, const std::string&, int, const std::string&,
                              int64_t) {
  notBuilt();
}

}  // namespace rdmabench::rendezvous
