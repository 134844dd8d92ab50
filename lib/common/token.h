#pragma once
// Optional shared secret that admits a client to `rdmabench server` and a rank to the rendezvous
// store (docs/wire-protocol.md, "Access control"). The token travels in the hello; a listener
// with a token refuses any hello that does not carry the same bytes.
//
// Threat model: keeps strangers on the network (other users, other jobs, scanners) from running
// tests on or disturbing a daemon. The token is sent in clear text over TCP, so it does not stop
// someone who can sniff the control network. Thread-safety: resolveToken and slurmJobToken read
// the environment and the file system; the rest are pure functions.

#include <optional>
#include <string>
#include <string_view>

namespace rdmabench {

// Environment variable read when no --token option is given.
inline constexpr const char* kTokenEnvVar = "RDMABENCH_TOKEN";
// Environment variable naming the directory of the Slurm jobs' token files (default
// $HOME/.rdmabench): a directory of the user's own, mode 0700, that every node of a job sees.
inline constexpr const char* kTokenDirEnvVar = "RDMABENCH_TOKEN_DIR";
// Longest token accepted, in bytes.
inline constexpr size_t kMaxTokenBytes = 256;

// The token to use: `option` (--token) when given, else $RDMABENCH_TOKEN, else, when
// `slurmDefault` and running inside a Slurm job, slurmJobToken(); else "" (no access control).
// Throws UsageError (naming --token or the variable) for a token longer than kMaxTokenBytes or
// holding control characters. An explicit empty --token "" disables the check.
std::string resolveToken(const std::optional<std::string>& option, bool slurmDefault);

// The Slurm job's secret, the same on every rank of the job and readable only by the user who
// runs it (and root): 32 random hex digits (getrandom) in DIR/slurm-CLUSTER-JOB.token, DIR =
// $RDMABENCH_TOKEN_DIR or $HOME/.rdmabench (created mode 0700; the file is 0600). The first rank
// of the job to look creates it (a complete temporary file hard-linked into place, so ranks on
// several nodes sharing the directory agree on one); the others read it. Nothing about it can
// be computed from public ids (job id, user id, cluster name). "" outside Slurm (no
// SLURM_JOB_ID). Throws Error naming the path when the directory or file belongs to another user
// or is accessible to others, or the file holds no token; SystemError when it cannot be created
// or read.
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
