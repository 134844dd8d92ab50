// PMIx client (rendezvous/pmix.h), built with RDMABENCH_WITH_PMIX.
#include <pmix.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "rendezvous/pmix.h"

namespace rdmabench::rendezvous {

namespace {

std::optional<PmixIdentity> identity;

std::string pmixText(pmix_status_t rc) {
  return PMIx_Error_string(rc);
}

// Integer value of any integer-typed pmix_value_t (servers differ in the width they use).
std::optional<int64_t> asInt(const pmix_value_t* v) {
  switch (v->type) {
    case PMIX_UINT8:
      return v->data.uint8;
    case PMIX_UINT16:
      return v->data.uint16;
    case PMIX_UINT32:
      return v->data.uint32;
    case PMIX_UINT64:
      return static_cast<int64_t>(v->data.uint64);
    case PMIX_INT:
      return v->data.integer;
    case PMIX_INT8:
      return v->data.int8;
    case PMIX_INT16:
      return v->data.int16;
    case PMIX_INT32:
      return v->data.int32;
    case PMIX_INT64:
      return v->data.int64;
    case PMIX_SIZE:
      return static_cast<int64_t>(v->data.size);
    default:
      return std::nullopt;
  }
}

// PMIx_Get of an integer attribute of `proc`; nullopt when the server does not provide it.
std::optional<int64_t> getInt(const pmix_proc_t& proc, const char* key) {
  pmix_value_t* v = nullptr;
  if (PMIx_Get(&proc, key, nullptr, 0, &v) != PMIX_SUCCESS || v == nullptr) return std::nullopt;
  std::optional<int64_t> out = asInt(v);
  PMIX_VALUE_RELEASE(v);
  return out;
}

void finalizeAtExit() {
  if (identity) PMIx_Finalize(nullptr, 0);
}

// A non-blocking fence's completion. Heap-allocated: after our deadline the fence may still
// complete, so a timed-out state is left to the callback (never freed; the process is failing).
struct FenceState {
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  pmix_status_t status = PMIX_SUCCESS;
  pmix_info_t info[2];
};

void fenceDone(pmix_status_t status, void* cbdata) {
  auto* s = static_cast<FenceState*>(cbdata);
  std::lock_guard<std::mutex> lock(s->mutex);
  s->status = status;
  s->finished = true;
  s->done.notify_all();
}

}  // namespace

bool pmixBuilt() {
  return true;
}

const PmixIdentity& pmixInit() {
  if (identity) return *identity;
  pmix_proc_t me;
  pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
  if (rc != PMIX_SUCCESS)
    throw Error(fmt::format(
        "PMIx_Init: {} (PMIX_NAMESPACE={}, PMIX_RANK={}: no PMIx server answers; stale "
        "variables from an enclosing launcher?)",
        pmixText(rc), std::getenv("PMIX_NAMESPACE") ? std::getenv("PMIX_NAMESPACE") : "(unset)",
        std::getenv("PMIX_RANK") ? std::getenv("PMIX_RANK") : "(unset)"));
  PmixIdentity id;
  id.nspace = me.nspace;
  id.rank = static_cast<int>(me.rank);
  pmix_proc_t job;
  PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
  std::optional<int64_t> size = getInt(job, PMIX_JOB_SIZE);
  if (!size || *size < 1 || *size > (1 << 24)) {
    PMIx_Finalize(nullptr, 0);
    throw Error(fmt::format("PMIx_Get({}) of namespace '{}': the PMIx server gave no job size",
                            PMIX_JOB_SIZE, id.nspace));
  }
  id.size = static_cast<int>(*size);
  id.localRank = static_cast<int>(getInt(me, PMIX_LOCAL_RANK).value_or(0));
  id.localSize = static_cast<int>(std::max<int64_t>(1, getInt(job, PMIX_LOCAL_SIZE).value_or(1)));
  identity = id;
  std::atexit(finalizeAtExit);
  return *identity;
}

std::string pmixShareFromRank(const std::string& key, const std::string& value, int root,
                              const std::string& what, int64_t timeoutMs) {
  if (!identity) throw Error("pmixShareFromRank before pmixInit");
  const PmixIdentity& id = *identity;
  const double seconds = static_cast<double>(timeoutMs) / 1000;
  if (id.rank == root) {
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_STRING;
    v.data.string = const_cast<char*>(value.c_str());  // PMIx_Put copies it
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &v);
    if (rc != PMIX_SUCCESS)
      throw Error(fmt::format("PMIx_Put('{}', {}): {}", key, what, pmixText(rc)));
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) throw Error(fmt::format("PMIx_Commit ({}): {}", what, pmixText(rc)));
  }
  // Our own deadline on the non-blocking fence: not every server honours PMIX_TIMEOUT.
  auto* state = new FenceState;
  bool collect = true;
  int serverTimeout = static_cast<int>(std::max<int64_t>(1, (timeoutMs + 999) / 1000));
  PMIX_INFO_LOAD(&state->info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  PMIX_INFO_LOAD(&state->info[1], PMIX_TIMEOUT, &serverTimeout, PMIX_INT);
  pmix_proc_t job;
  PMIX_LOAD_PROCID(&job, id.nspace.c_str(), PMIX_RANK_WILDCARD);
  pmix_status_t rc = PMIx_Fence_nb(&job, 1, state->info, 2, fenceDone, state);
  if (rc != PMIX_SUCCESS) {
    delete state;
    throw Error(fmt::format("PMIx_Fence_nb (namespace '{}', {} ranks, {}): {}", id.nspace, id.size,
                            what, pmixText(rc)));
  }
  Deadline deadline(timeoutMs);
  {
    std::unique_lock<std::mutex> lock(state->mutex);
    while (!state->finished) {
      if (deadline.expired())
        throw TimeoutError(fmt::format(
            "waited {:.1f} s in the PMIx fence of namespace '{}' ({} ranks) for {}: a rank never "
            "reached it (not started, or failed before its rendezvous)",
            seconds, id.nspace, id.size, what));
      if (interrupted()) throwIfInterrupted("waiting in the PMIx fence");
      state->done.wait_for(lock, std::chrono::milliseconds(20));
    }
  }
  const pmix_status_t fenceStatus = state->status;
  delete state;
  if (fenceStatus == PMIX_ERR_TIMEOUT)
    throw TimeoutError(fmt::format(
        "the PMIx server ended the fence of namespace '{}' ({} ranks) for {} after {:.1f} s: "
        "a rank never reached it",
        id.nspace, id.size, what, seconds));
  if (fenceStatus != PMIX_SUCCESS)
    throw Error(fmt::format("PMIx_Fence (namespace '{}', {} ranks, {}): {}", id.nspace, id.size,
                            what, pmixText(fenceStatus)));
  pmix_proc_t owner;
  PMIX_LOAD_PROCID(&owner, id.nspace.c_str(), static_cast<pmix_rank_t>(root));
  pmix_info_t getInfo;
  PMIX_INFO_LOAD(&getInfo, PMIX_TIMEOUT, &serverTimeout, PMIX_INT);
  pmix_value_t* v = nullptr;
  rc = PMIx_Get(&owner, key.c_str(), &getInfo, 1, &v);
  if (rc != PMIX_SUCCESS || v == nullptr)
    throw Error(fmt::format("PMIx_Get('{}' of rank {} in namespace '{}', {}): {}", key, root,
                            id.nspace, what, pmixText(rc)));
  std::string out;
  if (v->type == PMIX_STRING && v->data.string != nullptr) {
    out = v->data.string;
  } else {
    PMIX_VALUE_RELEASE(v);
    throw ProtocolError(
        fmt::format("PMIx_Get('{}' of rank {}): not a string ({})", key, root, what));
  }
  PMIX_VALUE_RELEASE(v);
  return out;
}

}  // namespace rdmabench::rendezvous
