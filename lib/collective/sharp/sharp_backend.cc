// The SHARP backend proper: compiled only when CMake found sharp/api/sharp_coll.h (HPC-X, or
// the stand-in under tests/sharp_standin). libsharp_coll is loaded with dlopen; its functions
// are typed from the header, so a layout mismatch is a compile error, not a crash.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <sharp/api/sharp_coll.h>

#include "collective/sharp/oob.h"
#include "collective/sharp/sharp.h"
#include "common/error.h"

#ifndef RDMABENCH_SHARP_LIBRARY_DEFAULT
#define RDMABENCH_SHARP_LIBRARY_DEFAULT "libsharp_coll.so"
#endif

namespace rdmabench::collective::sharp {

namespace {

// The functions rdmabench calls, resolved from the loaded library.
struct Api {
  std::string path;  // as loaded (real path when known)
  decltype(&sharp_coll_init) init = nullptr;
  decltype(&sharp_coll_finalize) finalize = nullptr;
  decltype(&sharp_coll_caps_query) capsQuery = nullptr;
  decltype(&sharp_coll_comm_init) commInit = nullptr;
  decltype(&sharp_coll_comm_destroy) commDestroy = nullptr;
  decltype(&sharp_coll_do_barrier) doBarrier = nullptr;
  decltype(&sharp_coll_do_allreduce) doAllreduce = nullptr;
  decltype(&sharp_coll_reg_mr) regMr = nullptr;
  decltype(&sharp_coll_dereg_mr) deregMr = nullptr;
  decltype(&sharp_coll_strerror) strerror = nullptr;
  const sharp_coll_config* defaultConfig = nullptr;
};

// Loads the library once per process. Error: "cannot load libsharp_coll (<path>): <dlerror>".
const Api& loadApi() {
  static std::mutex mutex;
  static std::unique_ptr<Api> api;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mutex);
  if (api) return *api;
  if (!failure.empty()) throw Error(failure);
  const char* env = std::getenv("RDMABENCH_SHARP_LIBRARY");
  const std::string path = env && *env ? env : RDMABENCH_SHARP_LIBRARY_DEFAULT;
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    failure = fmt::format("library not found: dlopen {}: {}", path, e ? e : "unknown error");
    throw Error(failure);
  }
  auto a = std::make_unique<Api>();
  std::string missing;
  auto sym = [&](auto& fn, const char* name) {
    void* p = dlsym(h, name);
    if (!p) missing += (missing.empty() ? "" : ", ") + std::string(name);
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  sym(a->init, "sharp_coll_init");
  sym(a->finalize, "sharp_coll_finalize");
  sym(a->capsQuery, "sharp_coll_caps_query");
  sym(a->commInit, "sharp_coll_comm_init");
  sym(a->commDestroy, "sharp_coll_comm_destroy");
  sym(a->doBarrier, "sharp_coll_do_barrier");
  sym(a->doAllreduce, "sharp_coll_do_allreduce");
  sym(a->regMr, "sharp_coll_reg_mr");
  sym(a->deregMr, "sharp_coll_dereg_mr");
  sym(a->strerror, "sharp_coll_strerror");
  a->defaultConfig = static_cast<const sharp_coll_config*>(dlsym(h, "sharp_coll_default_config"));
  if (!a->defaultConfig)
    missing += (missing.empty() ? "" : ", ") + std::string("sharp_coll_default_config");
  if (!missing.empty()) {
    failure = fmt::format("{} is not a usable libsharp_coll: missing {}", path, missing);
    dlclose(h);
    throw Error(failure);
  }
  Dl_info info{};
  a->path = path;
  if (dladdr(reinterpret_cast<void*>(a->init), &info) && info.dli_fname) {
    char real[PATH_MAX];
    a->path = realpath(info.dli_fname, real) ? real : info.dli_fname;
  }
  api = std::move(a);
  return *api;
}

std::string describe(const Api& api, const std::string& call, int code) {
  const char* text = api.strerror ? api.strerror(code) : nullptr;
  return fmt::format("{}: {} ({})", call, text ? text : "unknown SHARP error", code);
}

sharp_datatype toSharp(DType t) {
  switch (t) {
    case DType::kInt32:
      return SHARP_DTYPE_INT;
    case DType::kInt64:
      return SHARP_DTYPE_LONG;
    case DType::kFloat32:
      return SHARP_DTYPE_FLOAT;
    case DType::kFloat64:
      return SHARP_DTYPE_DOUBLE;
  }
  return SHARP_DTYPE_NULL;
}

sharp_reduce_op toSharp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return SHARP_OP_SUM;
    case ReduceOp::kMin:
      return SHARP_OP_MIN;
    case ReduceOp::kMax:
      return SHARP_OP_MAX;
  }
  return SHARP_OP_NULL;
}

// Names of the bits of caps_query's masks, in enum order.
const char* const kDtypeNames[] = {"uint32", "int32", "uint64", "int64", "float32", "float64",
                                   "uint16", "int16", "fp16",   "bf16",  "uint8",   "int8"};
const char* const kOpNames[] = {"max", "min", "sum",  "prod", "land",   "band",
                                "lor", "bor", "lxor", "bxor", "maxloc", "minloc"};

template <size_t N>
nlohmann::json maskNames(uint64_t mask, const char* const (&names)[N]) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < N; ++i)
    if (mask & (uint64_t{1} << i)) out.push_back(names[i]);
  return out;
}

nlohmann::json capsFacts(const sharp_coll_caps& caps) {
  return {{"packet_version", caps.sharp_pkt_version},
          {"dtypes", maskNames(caps.support_mask.dtypes, kDtypeNames)},
          {"ops", maskNames(caps.support_mask.reduce_ops, kOpNames)},
          {"max_osts", caps.resources.max_osts},
          {"payload_per_ost_bytes", caps.resources.user_data_per_ost},
          {"max_groups", caps.resources.max_groups},
          {"max_group_channels", caps.resources.max_group_channels},
          {"osts_per_group", caps.resources.osts_per_group}};
}

class SharpSession : public Session {
 public:
  SharpSession(Communicator& comm, const SessionOptions& o)
      : api_(loadApi()), comm_(comm), oob_(comm, o.stageOffset, o.stageBytes) {
    // One job id for every rank: rank 0 draws it and publishes it through the store.
    if (comm.rank() == 0) {
      std::random_device rd;
      jobId_ = (uint64_t{rd()} << 32 | rd()) ^
               static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
      jobId_ &= 0x7fffffffffffffffull;
      comm.store().set("sharp/job_id", std::to_string(jobId_));
    } else {
      std::string v = comm.store().get("sharp/job_id", o.timeoutMs);
      char* end = nullptr;
      jobId_ = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || !end || *end) throw ProtocolError("malformed SHARP job id in the store");
    }
    sharp_coll_init_spec spec{};
    spec.job_id = jobId_;
    spec.world_rank = comm.rank();
    spec.world_size = comm.size();
    spec.progress_func = nullptr;
    spec.group_channel_idx = 0;
    spec.config = *api_.defaultConfig;
    if (!o.devices.empty()) {
      devices_ = o.devices;
      spec.config.ib_dev_list = devices_.c_str();
    }
    spec.config.coll_timeout = static_cast<int>(std::min<int64_t>(o.timeoutMs, INT_MAX));
    spec.oob_colls.bcast = &OobColls::bcastCb;
    spec.oob_colls.barrier = &OobColls::barrierCb;
    spec.oob_colls.gather = &OobColls::gatherCb;
    spec.world_local_rank = o.localRank;
    spec.enable_thread_support = 0;
    spec.oob_ctx = &oob_;
    check("sharp_coll_init", api_.init(&spec, &ctx_));
    check("sharp_coll_caps_query", api_.capsQuery(ctx_, &caps_));
    sharp_coll_comm_init_spec cs{};
    cs.rank = comm.rank();
    cs.size = comm.size();
    cs.oob_ctx = &oob_;
    cs.group_world_ranks = nullptr;
    check("sharp_coll_comm_init", api_.commInit(ctx_, &cs, &comm_handle_));
    if (o.registerBytes > 0)
      check("sharp_coll_reg_mr", api_.regMr(ctx_, comm.data(), o.registerBytes, &mr_));
    registered_ = o.registerBytes;
  }

  ~SharpSession() override {
    try {
      close();
    } catch (const std::exception&) {
      // Teardown after a failure: the first error was reported already.
    }
  }

  int barrier() noexcept override { return api_.doBarrier(comm_handle_); }

  int allreduce(uint64_t inOffset, uint64_t outOffset, uint64_t count, DType t,
                ReduceOp op) noexcept override {
    const uint64_t bytes = count * elementSize(t);
    sharp_coll_reduce_spec spec{};
    spec.root = 0;
    spec.sbuf_desc.type = SHARP_DATA_BUFFER;
    spec.sbuf_desc.mem_type = SHARP_MEM_TYPE_HOST;
    spec.sbuf_desc.buffer.ptr = comm_.data() + inOffset;
    spec.sbuf_desc.buffer.length = bytes;
    spec.sbuf_desc.buffer.mem_handle = mr_;
    spec.rbuf_desc = spec.sbuf_desc;
    spec.rbuf_desc.buffer.ptr = comm_.data() + outOffset;
    spec.dtype = toSharp(t);
    spec.tag_dtype = SHARP_DTYPE_NULL;
    spec.length = count;
    spec.op = toSharp(op);
    spec.aggr_mode = SHARP_AGGREGATION_NONE;
    return api_.doAllreduce(comm_handle_, &spec);
  }

  [[noreturn]] void fail(const std::string& call, int code) override {
    std::string msg = describe(api_, call, code);
    std::string oob = oob_.takeError();
    if (!oob.empty()) msg += "; out-of-band: " + oob;
    throw Error(msg);
  }

  void checkSupported(DType t, ReduceOp op) const override {
    if (!(caps_.support_mask.dtypes & (uint64_t{1} << toSharp(t))))
      throw UsageError(fmt::format(
          "--algo sharp --dtype {}: not supported by this SHARP (caps: {})", toString(t),
          fmt::join(
              maskNames(caps_.support_mask.dtypes, kDtypeNames).get<std::vector<std::string>>(),
              ", ")));
    if (!(caps_.support_mask.reduce_ops & (uint64_t{1} << toSharp(op))))
      throw UsageError(fmt::format(
          "--algo sharp --op {}: not supported by this SHARP (caps: {})", toString(op),
          fmt::join(
              maskNames(caps_.support_mask.reduce_ops, kOpNames).get<std::vector<std::string>>(),
              ", ")));
  }

  uint64_t payloadPerOst() const override {
    return static_cast<uint64_t>(std::max(0, caps_.resources.user_data_per_ost));
  }

  nlohmann::json facts() const override {
    nlohmann::json j{{"library", api_.path},
                     {"job_id", std::to_string(jobId_)},
                     {"registered_bytes", registered_},
                     {"caps", capsFacts(caps_)}};
    for (const char* v :
         {"SHARP_COLL_JOB_QUOTA_PAYLOAD_PER_OST", "SHARP_COLL_ENABLE_SAT", "SHARP_COLL_LOG_LEVEL"})
      if (const char* e = std::getenv(v)) j["env"][v] = e;
    return j;
  }

  void close() override {
    std::string first;
    auto step = [&](const char* call, int code) {
      if (code != 0 && first.empty()) first = describe(api_, call, code);
    };
    if (mr_) step("sharp_coll_dereg_mr", api_.deregMr(ctx_, mr_));
    mr_ = nullptr;
    if (comm_handle_) step("sharp_coll_comm_destroy", api_.commDestroy(comm_handle_));
    comm_handle_ = nullptr;
    if (ctx_) step("sharp_coll_finalize", api_.finalize(ctx_));
    ctx_ = nullptr;
    if (!first.empty()) throw Error(first);
  }

 private:
  void check(const char* call, int code) {
    if (code != 0) {
      close();  // what was set up so far, in reverse
      fail(call, code);
    }
  }

  const Api& api_;
  Communicator& comm_;
  OobColls oob_;
  uint64_t jobId_ = 0;
  std::string devices_;
  sharp_coll_context* ctx_ = nullptr;
  sharp_coll_comm* comm_handle_ = nullptr;
  void* mr_ = nullptr;
  uint64_t registered_ = 0;
  sharp_coll_caps caps_{};
};

// Out-of-band collectives of a job of one rank (info's probe).
int soloBcast(void*, void*, int, int) {
  return 0;
}
int soloBarrier(void*) {
  return 0;
}
int soloGather(void*, int, void* sbuf, void* rbuf, int len) {
  if (len > 0 && sbuf != rbuf) std::memmove(rbuf, sbuf, static_cast<size_t>(len));
  return 0;
}

}  // namespace

bool built() {
  return true;
}

Status probe() {
  Status s;
  s.built = true;
  const Api* api = nullptr;
  try {
    api = &loadApi();
  } catch (const std::exception& e) {
    s.reason = e.what();
    return s;
  }
  s.details["library"] = api->path;
  sharp_coll_init_spec spec{};
  spec.job_id = static_cast<uint64_t>(getpid()) << 16 | 0x5ba7;
  spec.world_rank = 0;
  spec.world_size = 1;
  spec.config = *api->defaultConfig;
  spec.config.coll_timeout = 10'000;
  spec.oob_colls = {&soloBcast, &soloBarrier, &soloGather};
  spec.oob_ctx = nullptr;
  sharp_coll_context* ctx = nullptr;
  int rc = api->init(&spec, &ctx);
  if (rc != 0) {
    s.reason = describe(*api, "sharp_coll_init", rc);
    return s;
  }
  sharp_coll_caps caps{};
  rc = api->capsQuery(ctx, &caps);
  if (rc != 0) {
    s.reason = describe(*api, "sharp_coll_caps_query", rc);
    api->finalize(ctx);
    return s;
  }
  s.details["caps"] = capsFacts(caps);
  sharp_coll_comm_init_spec cs{};
  cs.rank = 0;
  cs.size = 1;
  sharp_coll_comm* comm = nullptr;
  rc = api->commInit(ctx, &cs, &comm);
  if (rc != 0) {
    s.reason = describe(*api, "sharp_coll_comm_init", rc);
    api->finalize(ctx);
    return s;
  }
  api->commDestroy(comm);
  api->finalize(ctx);
  s.usable = true;
  s.reason = fmt::format("{} payload bytes per OST, {} OSTs", caps.resources.user_data_per_ost,
                         caps.resources.max_osts);
  return s;
}

std::unique_ptr<Session> open(Communicator& comm, const SessionOptions& options) {
  return std::make_unique<SharpSession>(comm, options);
}

}  // namespace rdmabench::collective::sharp
