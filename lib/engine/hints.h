#pragma once
// Hints appended to data-path errors, so that an error points at its cause (issue #13).

#include <cstdint>
#include <string>
#include <string_view>

namespace rdmabench::engine {

// Path MTU: on verbs RC a message is cut into frames of the QP's path MTU (`pathMtuBytes`, the
// smaller active MTU of both ports). A switch or link on the way with a smaller MTU drops the
// larger frames silently and the requester retries until "transport retry counter exceeded".
// When the sizes up to `lastPassedBytes` (> 0, below the path MTU: their frames were smaller)
// passed and `failedBytes` (> lastPassedBytes) fails with that status (found in `error`), this
// returns "; sizes up to X B passed and Y B failed: ... try --mtu N", N being the largest IB MTU
// (256..2048) not above max(X, 256); otherwise "". Pure, thread-safe.
std::string pathMtuHint(uint64_t lastPassedBytes, uint64_t failedBytes, uint64_t pathMtuBytes,
                        std::string_view error);

}  // namespace rdmabench::engine
