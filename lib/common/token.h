#pragma once
// Optional shared secret that admits a client to `rdmabench server` and a rank to the rendezvous
// store (docs/wire-protocol.md, "Access control"). The token travels in the hello; a listener
// with a token refuses any hello that does not carry the same bytes.
//
// Threat model: keeps strangers on the network (other users, other jobs, scanners) from running
// tests on or disturbing a daemon. The token is sent in clear text over TCP, so it does not stop
// someone who can sniff the control network. Thread-safety: pure functions (resolveToken reads
// the environment).

#include <optional>
#include <string>
#include <string_view>

namespace rdmabench {

// Environment variable read when no --token option is given.
inline constexpr const char* kTokenEnvVar = "RDMABENCH_TOKEN";
// Longest token accepted, in bytes.
inline constexpr size_t kMaxTokenBytes = 256;

// The token to use: `option` (--token) when given, else $RDMABENCH_TOKEN, else, when
// `slurmDefault` and running inside a Slurm job, slurmJobToken(); else "" (no access control).
// Throws UsageError (naming --token or the variable) for a token longer than kMaxTokenBytes or
// holding control characters. An explicit empty --token "" disables the check.
std::string resolveToken(const std::optional<std::string>& option, bool slurmDefault);

// A token derived from the Slurm job (SLURM_JOB_ID, SLURM_CLUSTER_NAME and the user id), the same
// on every rank of the job; "" outside Slurm. It keeps other jobs and stray clients out; it is no
// secret against a user who can read the job id.
std::string slurmJobToken();

// 32 hex digits from the kernel's random generator (getrandom), for a launcher that hands its
// own ranks a token nobody else knows (--np). SystemError when getrandom fails.
std::string randomToken();

// Compares in time that depends only on the lengths, not on where the bytes differ.
bool tokensEqual(std::string_view expected, std::string_view given);

// The one-line refusal for a hello whose token does not match `expected`, or "" when it is
// admitted (`expected` empty = no access control). Never quotes either token.
std::string tokenRefusal(std::string_view expected, std::string_view given);

}  // namespace rdmabench
