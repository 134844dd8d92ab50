// Stand-in libsharp_coll for rdmabench's tests (docs/collectives.md, "Testing without a
// switch"): the documented API (include/sharp/api/sharp_coll.h), implemented with the
// application's own out-of-band collectives instead of switch aggregation. An allreduce is
// gathered to rank 0, reduced there and broadcast back, one round per max_osts * payload bytes,
// so the data rdmabench checks (--check) really went through the library and every callback.
// It checks what the real library relies on: one job id on every rank, the world size, live
// memory registrations that cover each buffer, teardown in reverse order.
//
// Environment (besides SHARP_COLL_LOG_LEVEL, SHARP_COLL_JOB_QUOTA_PAYLOAD_PER_OST):
//   SHARP_STANDIN_FAIL=init|comm_init|notree|quota|timeout  fail there (see failHere())
//   SHARP_STANDIN_FAIL_RANK=R       only world rank R fails (default: every rank)
//   SHARP_STANDIN_FAIL_AFTER=K      quota/timeout: the first K collectives succeed (default 0)
//   SHARP_STANDIN_DTYPES=int,float  supported types in caps (default: every type it reduces)
//   SHARP_STANDIN_OPS=sum,max       supported operators in caps (default: max,min,sum,prod)
#include <sharp/api/sharp_coll.h>

#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

struct Mr {
  char* base;
  size_t size;
};

int logLevel() {
  const char* v = std::getenv("SHARP_COLL_LOG_LEVEL");
  return v ? std::atoi(v) : 2;
}

void logAt(int level, const char* fmt, ...) {
  if (logLevel() < level) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "[sharp-standin pid %d] %s\n", static_cast<int>(getpid()), buf);
}

std::string envStr(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool listHas(const std::string& list, const std::string& name) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    if (list.compare(start, end - start, name) == 0) return true;
    start = end + 1;
  }
  return false;
}

size_t dtypeSize(int t) {
  switch (t) {
    case SHARP_DTYPE_UNSIGNED:
    case SHARP_DTYPE_INT:
    case SHARP_DTYPE_FLOAT:
      return 4;
    case SHARP_DTYPE_UNSIGNED_LONG:
    case SHARP_DTYPE_LONG:
    case SHARP_DTYPE_DOUBLE:
      return 8;
    default:
      return 0;  // not reduced by the stand-in
  }
}

const char* dtypeName(int t) {
  static const char* names[] = {"uint32", "int32", "uint64", "int64", "float", "double",
                                "uint16", "int16", "fp16",   "bf16",  "uint8", "int8"};
  return t >= 0 && t < SHARP_DTYPE_NULL ? names[t] : "?";
}

const char* opName(int op) {
  static const char* names[] = {"max", "min", "sum",  "prod", "land",   "band",
                                "lor", "bor", "lxor", "bxor", "maxloc", "minloc"};
  return op >= 0 && op < SHARP_OP_NULL ? names[op] : "?";
}

template <typename T>
void reduceTyped(T* dst, const T* src, size_t n, int op) {
  for (size_t i = 0; i < n; ++i) {
    switch (op) {
      case SHARP_OP_SUM:
        dst[i] = static_cast<T>(dst[i] + src[i]);
        break;
      case SHARP_OP_PROD:
        dst[i] = static_cast<T>(dst[i] * src[i]);
        break;
      case SHARP_OP_MIN:
        dst[i] = std::min(dst[i], src[i]);
        break;
      case SHARP_OP_MAX:
        dst[i] = std::max(dst[i], src[i]);
        break;
      default:
        break;
    }
  }
}

void reduceInto(void* dst, const void* src, size_t n, int t, int op) {
  switch (t) {
    case SHARP_DTYPE_UNSIGNED:
      return reduceTyped(static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(src), n, op);
    case SHARP_DTYPE_INT:
      return reduceTyped(static_cast<int32_t*>(dst), static_cast<const int32_t*>(src), n, op);
    case SHARP_DTYPE_UNSIGNED_LONG:
      return reduceTyped(static_cast<uint64_t*>(dst), static_cast<const uint64_t*>(src), n, op);
    case SHARP_DTYPE_LONG:
      return reduceTyped(static_cast<int64_t*>(dst), static_cast<const int64_t*>(src), n, op);
    case SHARP_DTYPE_FLOAT:
      return reduceTyped(static_cast<float*>(dst), static_cast<const float*>(src), n, op);
    case SHARP_DTYPE_DOUBLE:
      return reduceTyped(static_cast<double*>(dst), static_cast<const double*>(src), n, op);
    default:
      return;
  }
}

}  // namespace

struct sharp_coll_context {
  uint64_t jobId = 0;
  int rank = 0, size = 1;
  sharp_coll_config config{};
  sharp_coll_out_of_band_colls oob{};
  void* oobCtx = nullptr;
  std::set<void*> mrs;
  int comms = 0;
  size_t payloadPerOst = 2048;
  int maxOsts = 16;
  uint64_t collectives = 0;  // calls of do_barrier / do_allreduce, for SHARP_STANDIN_FAIL_AFTER
};

struct sharp_coll_comm {
  sharp_coll_context* ctx;
  int rank, size;
  void* oobCtx;
};

namespace {

// True when SHARP_STANDIN_FAIL names `what` and this rank is the one told to fail.
bool failHere(const sharp_coll_context* ctx, int worldRank, const char* what) {
  if (!listHas(envStr("SHARP_STANDIN_FAIL"), what)) return false;
  std::string r = envStr("SHARP_STANDIN_FAIL_RANK");
  if (!r.empty() && std::atoi(r.c_str()) != worldRank) return false;
  if (ctx && (std::strcmp(what, "quota") == 0 || std::strcmp(what, "timeout") == 0)) {
    std::string after = envStr("SHARP_STANDIN_FAIL_AFTER");
    if (!after.empty() && ctx->collectives <= std::strtoull(after.c_str(), nullptr, 10))
      return false;
  }
  return true;
}

// Every rank contributes `status`; rank 0 folds them (first non-zero wins) and broadcasts the
// verdict, so all ranks of one call return the same code.
int agree(const sharp_coll_out_of_band_colls& oob, void* ctx, int rank, int size, int status) {
  std::vector<int> all(static_cast<size_t>(rank == 0 ? size : 1));
  if (oob.gather(ctx, 0, &status, all.data(), sizeof(int)) != 0) return SHARP_COLL_EOOB;
  int verdict = status;
  if (rank == 0)
    for (int s : all)
      if (s != 0) {
        verdict = s;
        break;
      }
  if (oob.bcast(ctx, &verdict, sizeof verdict, 0) != 0) return SHARP_COLL_EOOB;
  return verdict;
}

bool covered(const sharp_coll_context* ctx, const sharp_coll_data_desc& d, size_t bytes) {
  if (d.type != SHARP_DATA_BUFFER || d.mem_type != SHARP_MEM_TYPE_HOST) return false;
  if (!ctx->mrs.count(d.buffer.mem_handle) || d.buffer.length < bytes) return false;
  const Mr* mr = static_cast<const Mr*>(d.buffer.mem_handle);
  const char* p = static_cast<const char*>(d.buffer.ptr);
  return p >= mr->base && p + bytes <= mr->base + mr->size;
}

// Simulated failures of a collective: quota at the first use of group resources (lazy
// allocation), timeout after coll_timeout milliseconds.
int collectiveFault(sharp_coll_comm* comm) {
  sharp_coll_context* ctx = comm->ctx;
  ++ctx->collectives;
  if (failHere(ctx, ctx->rank, "quota")) {
    logAt(1, "group resources: job quota exceeded");
    return SHARP_COLL_EQUOTA;
  }
  if (failHere(ctx, ctx->rank, "timeout")) {
    int ms = ctx->config.coll_timeout > 0 ? ctx->config.coll_timeout : 10000;
    logAt(1, "collective did not complete within %d ms", ms);
    usleep(static_cast<useconds_t>(ms) * 1000);
    return SHARP_COLL_ERROR;
  }
  return SHARP_COLL_SUCCESS;
}

}  // namespace

extern "C" {

const sharp_coll_config sharp_coll_default_config = {nullptr, 128, -1, 0, {0, 0, 0}};

int sharp_coll_init(sharp_coll_init_spec* spec, sharp_coll_context** out) {
  if (!spec || !out) return SHARP_COLL_EINVAL;
  if (!spec->oob_colls.bcast || !spec->oob_colls.barrier || !spec->oob_colls.gather)
    return SHARP_COLL_EINVAL;
  if (spec->world_size < 1 || spec->world_rank < 0 || spec->world_rank >= spec->world_size)
    return SHARP_COLL_EINVAL;
  if (failHere(nullptr, spec->world_rank, "init")) {
    logAt(1, "cannot connect to the aggregation manager");
    return SHARP_COLL_ESESS_INIT;
  }
  auto* ctx = new sharp_coll_context;
  ctx->jobId = spec->job_id;
  ctx->rank = spec->world_rank;
  ctx->size = spec->world_size;
  ctx->config = spec->config;
  ctx->oob = spec->oob_colls;
  ctx->oobCtx = spec->oob_ctx;
  std::string quota = envStr("SHARP_COLL_JOB_QUOTA_PAYLOAD_PER_OST");
  if (!quota.empty())
    ctx->payloadPerOst = std::max<size_t>(8, std::strtoull(quota.c_str(), nullptr, 10));
  // The job: every rank must name the same job id and world size.
  struct Ident {
    uint64_t job;
    int size;
    int rank;
  } me{ctx->jobId, ctx->size, ctx->rank};
  std::vector<Ident> all(static_cast<size_t>(ctx->rank == 0 ? ctx->size : 1));
  int status = 0;
  if (ctx->oob.gather(ctx->oobCtx, 0, &me, all.data(), sizeof me) != 0) status = SHARP_COLL_EOOB;
  int verdict = status;
  if (ctx->rank == 0 && status == 0)
    for (int r = 0; r < ctx->size; ++r)
      if (all[static_cast<size_t>(r)].job != ctx->jobId ||
          all[static_cast<size_t>(r)].size != ctx->size || all[static_cast<size_t>(r)].rank != r) {
        logAt(1, "rank %d: job id %llu world size %d, rank 0: job id %llu world size %d", r,
              static_cast<unsigned long long>(all[static_cast<size_t>(r)].job),
              all[static_cast<size_t>(r)].size, static_cast<unsigned long long>(ctx->jobId),
              ctx->size);
        verdict = SHARP_COLL_EJOB_CREATE;
        break;
      }
  if (status == 0 && ctx->oob.bcast(ctx->oobCtx, &verdict, sizeof verdict, 0) != 0)
    verdict = SHARP_COLL_EOOB;
  if (verdict == 0 && ctx->oob.barrier(ctx->oobCtx) != 0) verdict = SHARP_COLL_EOOB;
  if (verdict != 0) {
    delete ctx;
    return verdict;
  }
  logAt(4, "init: job %llu rank %d of %d, local rank %d, payload per OST %zu",
        static_cast<unsigned long long>(ctx->jobId), ctx->rank, ctx->size, spec->world_local_rank,
        ctx->payloadPerOst);
  *out = ctx;
  return SHARP_COLL_SUCCESS;
}

int sharp_coll_finalize(sharp_coll_context* ctx) {
  if (!ctx) return SHARP_COLL_EINVAL;
  if (ctx->comms || !ctx->mrs.empty()) {
    logAt(1, "finalize with %d communicator(s) and %zu registration(s) alive", ctx->comms,
          ctx->mrs.size());
    return SHARP_COLL_ERROR;
  }
  delete ctx;
  return SHARP_COLL_SUCCESS;
}

int sharp_coll_caps_query(sharp_coll_context* ctx, sharp_coll_caps* caps) {
  if (!ctx || !caps) return SHARP_COLL_EINVAL;
  std::memset(caps, 0, sizeof *caps);
  caps->sharp_pkt_version = 1;
  std::string types = envStr("SHARP_STANDIN_DTYPES");
  for (int t = 0; t < SHARP_DTYPE_NULL; ++t)
    if (dtypeSize(t) && (types.empty() || listHas(types, dtypeName(t))))
      caps->support_mask.dtypes |= uint64_t{1} << t;
  std::string ops = envStr("SHARP_STANDIN_OPS");
  for (int op : {SHARP_OP_MAX, SHARP_OP_MIN, SHARP_OP_SUM, SHARP_OP_PROD})
    if (ops.empty() || listHas(ops, opName(op))) caps->support_mask.reduce_ops |= uint64_t{1} << op;
  caps->resources.max_osts = ctx->maxOsts;
  caps->resources.user_data_per_ost = static_cast<int>(ctx->payloadPerOst);
  caps->resources.max_groups = 8;
  caps->resources.max_group_channels = 1;
  caps->resources.osts_per_group = ctx->maxOsts;
  return SHARP_COLL_SUCCESS;
}

int sharp_coll_comm_init(sharp_coll_context* ctx, sharp_coll_comm_init_spec* spec,
                         sharp_coll_comm** out) {
  if (!ctx || !spec || !out) return SHARP_COLL_EINVAL;
  if (spec->size != ctx->size || spec->rank != ctx->rank) return SHARP_COLL_EINVAL;
  int status = 0;
  if (failHere(ctx, ctx->rank, "comm_init")) {
    logAt(1, "cannot join the SHARP group");
    status = SHARP_COLL_EGROUP_JOIN;
  } else if (failHere(ctx, ctx->rank, "notree")) {
    logAt(1, "no SHARP tree reaches this port");
    status = SHARP_COLL_ENOTREE;
  }
  // Real group creation is collective: a rank that fails still takes part, so all agree.
  int verdict = agree(ctx->oob, spec->oob_ctx, spec->rank, spec->size, status);
  if (verdict != 0) return verdict;
  *out = new sharp_coll_comm{ctx, spec->rank, spec->size, spec->oob_ctx};
  ++ctx->comms;
  return SHARP_COLL_SUCCESS;
}

int sharp_coll_comm_destroy(sharp_coll_comm* comm) {
  if (!comm) return SHARP_COLL_EINVAL;
  --comm->ctx->comms;
  delete comm;
  return SHARP_COLL_SUCCESS;
}

int sharp_coll_reg_mr(sharp_coll_context* ctx, void* buf, size_t size, void** mr) {
  if (!ctx || !buf || !mr || size == 0) return SHARP_COLL_EINVAL;
  auto* m = new Mr{static_cast<char*>(buf), size};
  ctx->mrs.insert(m);
  *mr = m;
  return SHARP_COLL_SUCCESS;
}

int sharp_coll_dereg_mr(sharp_coll_context* ctx, void* mr) {
  if (!ctx || !ctx->mrs.erase(mr)) return SHARP_COLL_EINVAL;
  delete static_cast<Mr*>(mr);
  return SHARP_COLL_SUCCESS;
}

int sharp_coll_do_barrier(sharp_coll_comm* comm) {
  if (!comm) return SHARP_COLL_EINVAL;
  if (int rc = collectiveFault(comm)) return rc;
  return comm->ctx->oob.barrier(comm->oobCtx) == 0 ? SHARP_COLL_SUCCESS : SHARP_COLL_EOOB;
}

int sharp_coll_do_allreduce(sharp_coll_comm* comm, sharp_coll_reduce_spec* spec) {
  if (!comm || !spec) return SHARP_COLL_EINVAL;
  sharp_coll_context* ctx = comm->ctx;
  const size_t es = dtypeSize(spec->dtype);
  if (!es || spec->dtype < 0 || spec->dtype >= SHARP_DTYPE_NULL) return SHARP_COLL_ENOT_SUPP;
  if (spec->op != SHARP_OP_SUM && spec->op != SHARP_OP_MIN && spec->op != SHARP_OP_MAX &&
      spec->op != SHARP_OP_PROD)
    return SHARP_COLL_ENOT_SUPP;
  const size_t bytes = spec->length * es;
  if (!covered(ctx, spec->sbuf_desc, bytes) || !covered(ctx, spec->rbuf_desc, bytes)) {
    logAt(1, "allreduce of %zu bytes: a buffer is not inside a live registration", bytes);
    return SHARP_COLL_EINVAL;
  }
  if (int rc = collectiveFault(comm)) return rc;
  const auto* src = static_cast<const char*>(spec->sbuf_desc.buffer.ptr);
  auto* dst = static_cast<char*>(spec->rbuf_desc.buffer.ptr);
  // One round = the OSTs the tree has in flight, each carrying one payload.
  const size_t round =
      std::max(es, ctx->payloadPerOst * static_cast<size_t>(ctx->maxOsts) / es * es);
  const size_t n = static_cast<size_t>(comm->size);
  std::vector<char> mine(round), all(comm->rank == 0 ? n * round : 1);
  size_t rounds = 0;
  for (size_t off = 0; off < bytes; off += round, ++rounds) {
    const size_t len = std::min(round, bytes - off);
    std::memcpy(mine.data(), src + off, len);
    if (ctx->oob.gather(comm->oobCtx, 0, mine.data(), all.data(), static_cast<int>(len)) != 0)
      return SHARP_COLL_EOOB;
    if (comm->rank == 0) {
      std::memcpy(mine.data(), all.data(), len);
      for (size_t r = 1; r < n; ++r)
        reduceInto(mine.data(), all.data() + r * len, len / es, spec->dtype, spec->op);
    }
    if (ctx->oob.bcast(comm->oobCtx, mine.data(), static_cast<int>(len), 0) != 0)
      return SHARP_COLL_EOOB;
    std::memcpy(dst + off, mine.data(), len);
  }
  logAt(4, "allreduce %zu x %s %s: %zu bytes, %zu OST payload(s) of <= %zu bytes, %zu round(s)",
        spec->length, dtypeName(spec->dtype), opName(spec->op), bytes,
        (bytes + ctx->payloadPerOst - 1) / ctx->payloadPerOst, ctx->payloadPerOst, rounds);
  return SHARP_COLL_SUCCESS;
}

const char* sharp_coll_strerror(int error) {
  switch (error) {
    case SHARP_COLL_SUCCESS:
      return "Success";
    case SHARP_COLL_ERROR:
      return "Error";
    case SHARP_COLL_ENOT_SUPP:
      return "Operation not supported";
    case SHARP_COLL_ENOMEM:
      return "Out of memory";
    case SHARP_COLL_EGROUP_ALLOC:
      return "Group allocation failed";
    case SHARP_COLL_ECONN_TREE:
      return "No connection to a SHARP tree";
    case SHARP_COLL_EGROUP_JOIN:
      return "Cannot join the SHARP group";
    case SHARP_COLL_EQUOTA:
      return "SHARP resource quota exceeded";
    case SHARP_COLL_ESESS_INIT:
      return "Cannot connect to SHARPD / Aggregation Manager";
    case SHARP_COLL_EDEV:
      return "SHARP device error";
    case SHARP_COLL_EINVAL:
      return "Invalid argument";
    case SHARP_COLL_EJOB_CREATE:
      return "Cannot create SHARP job";
    case SHARP_COLL_ETREE_INFO:
      return "SHARP tree information not found";
    case SHARP_COLL_ENOTREE:
      return "No SHARP trees available";
    case SHARP_COLL_EGROUP_ID:
      return "Wrong SHARP group id";
    case SHARP_COLL_EOOB:
      return "Out-of-band collective failed";
    case SHARP_COLL_EGROUP_MCAST:
      return "Multicast target error";
    case SHARP_COLL_EGROUP_TRIM:
      return "Group trim failed";
    case SHARP_COLL_ELOCK_FAILED:
      return "Streaming aggregation lock failed";
    case SHARP_COLL_ELOCK_DENIED:
      return "Streaming aggregation lock denied";
    case SHARP_COLL_ENO_RESOURCE:
      return "Resource not available";
    default:
      return "Unknown SHARP error";
  }
}

}  // extern "C"
