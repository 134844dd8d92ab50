#pragma once
// The optional NVIDIA SHARP collective backend (`--algo sharp`, `rdmabench info`):
// in-network allreduce and barrier through libsharp_coll (sharp/api/sharp_coll.h), the way
// UCC's tl/sharp drives it. docs/collectives.md ("SHARP") has the build and the environment.
//
// Built when CMake finds the header (RDMABENCH_WITH_SHARP=AUTO|ON, SHARP_DIR, HPCX_SHARP_DIR,
// /opt/mellanox/sharp); otherwise sharp_stub.cc answers "not built". The library itself is
// loaded at run time (dlopen: $RDMABENCH_SHARP_LIBRARY, else the one found at build time, else
// libsharp_coll.so on the loader path), so one binary runs where SHARP is absent and says why.
//
// A session, collective over the communicator's ranks: rank 0 picks the job id and publishes it
// through the store; sharp_coll_init (world rank/size/local rank from the launcher, the three
// out-of-band collectives of oob.h, coll_timeout = the run's timeout), sharp_coll_caps_query,
// sharp_coll_comm_init, one sharp_coll_reg_mr of the benchmark buffer (outside timed loops);
// teardown in reverse. Every error carries sharp_coll_strerror's text and the return code.
// Thread-safety: one thread per session.

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "collective/comm.h"
#include "collective/reduce.h"

namespace rdmabench::collective::sharp {

// What `rdmabench info` prints: not built / built but not usable (reason) / usable (details:
// library, caps_query facts).
struct Status {
  bool built = false;
  bool usable = false;
  std::string reason;
  nlohmann::json details;
};

// True when this binary has the SHARP backend compiled in.
bool built();

// Probes SHARP on this host as a job of one rank: load, sharp_coll_init, sharp_coll_caps_query,
// sharp_coll_comm_init, then teardown. Never throws.
Status probe();

struct SessionOptions {
  int64_t timeoutMs = 10'000;  // sharp_coll_config.coll_timeout and every out-of-band wait
  int localRank = 0;           // sharp_coll_init_spec.world_local_rank
  std::string devices;         // sharp_coll_config.ib_dev_list ("mlx5_0:1"); "" = the library's
  uint64_t registerBytes = 0;  // [0, registerBytes) of the data area: one sharp_coll_reg_mr
  uint64_t stageOffset = 0;    // out-of-band staging area in the data area (oob.h)
  uint64_t stageBytes = 0;
};

// Bytes of out-of-band staging a session wants (the communicator's data area must hold them).
inline constexpr uint64_t kStageBytes = 256 * 1024;

class Session {
 public:
  virtual ~Session() = default;
  // Timed-loop calls: return sharp_coll's code (0 = success); never throw.
  virtual int barrier() noexcept = 0;
  // Allreduce of `count` elements from data + inOffset into data + outOffset (both inside the
  // registered range).
  virtual int allreduce(uint64_t inOffset, uint64_t outOffset, uint64_t count, DType t,
                        ReduceOp op) noexcept = 0;
  // Throws Error "<call>: <sharp_coll_strerror> (<code>)[; out-of-band: <cause>]" for a code
  // returned above, once the caller has stopped its clock.
  [[noreturn]] virtual void fail(const std::string& call, int code) = 0;
  // UsageError (one line, before the run) when caps_query says the pair is not supported.
  virtual void checkSupported(DType t, ReduceOp op) const = 0;
  // Payload bytes per OST (caps_query's user_data_per_ost): a request of B bytes travels as
  // ceil(B / payload) OST payloads, pipelined by the library.
  virtual uint64_t payloadPerOst() const = 0;
  // Library path, job id, caps facts for the run header (JSON object).
  virtual nlohmann::json facts() const = 0;
  // Teardown in reverse order (dereg_mr, comm_destroy, finalize); Error on a failing call. The
  // destructor does the same and ignores errors.
  virtual void close() = 0;
};

// Opens a session on every rank of `comm` (collective). Errors: UsageError when not built;
// Error naming the failing step (library load with dlerror text, sharp_coll_* with
// sharp_coll_strerror text, the out-of-band failure behind SHARP_COLL_EOOB).
std::unique_ptr<Session> open(Communicator& comm, const SessionOptions& options);

}  // namespace rdmabench::collective::sharp
