#include "common/error.h"

#include <cstring>

namespace rdmabench {

SystemError::SystemError(const std::string& what, int err)
    : Error(what + ": " + std::strerror(err)), code_(err) {}

int exitCodeFor(const std::exception& e) {
  if (dynamic_cast<const UsageError*>(&e)) return 2;
  if (dynamic_cast<const TimeoutError*>(&e)) return 3;
  if (dynamic_cast<const InterruptedError*>(&e)) return 4;
  return 1;
}

}  // namespace rdmabench
