// Compiled instead of sharp_backend.cc when CMake did not find sharp/api/sharp_coll.h.
#include <fmt/format.h>

#include "collective/sharp/sharp.h"
#include "common/error.h"

namespace rdmabench::collective::sharp {

namespace {
constexpr const char* kNotBuilt =
    "this rdmabench has no SHARP backend (rebuild with HPC-X's SHARP: "
    "-DRDMABENCH_WITH_SHARP=ON -DSHARP_DIR=$HPCX_SHARP_DIR)";
}

bool built() {
  return false;
}

Status probe() {
  Status s;
  s.reason = kNotBuilt;
  return s;
}

std::unique_ptr<Session> open(Communicator&, const SessionOptions&) {
  throw UsageError(fmt::format("--algo sharp: not built: {}", kNotBuilt));
}

}  // namespace rdmabench::collective::sharp
