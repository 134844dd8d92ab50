#include "transport/ofi/ofi_library.h"

#include <dlfcn.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <signal.h>

#include <atomic>
#include <iterator>
#include <mutex>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench::transport::ofi {
namespace {

constexpr const char* kSoname = "libfabric.so.1";

struct Entry {
  decltype(&::fi_getinfo) getinfo = nullptr;
  decltype(&::fi_freeinfo) freeinfo = nullptr;
  decltype(&::fi_dupinfo) dupinfo = nullptr;
  decltype(&::fi_fabric) fabric = nullptr;
  decltype(&::fi_strerror) strerror = nullptr;
  decltype(&::fi_version) version = nullptr;
  decltype(&::fi_getparams) getparams = nullptr;
  decltype(&::fi_freeparams) freeparams = nullptr;
};

Entry gEntry;
std::string gError;
std::atomic<bool> gLoaded{false};
std::once_flag gOnce;

template <typename F>
bool bind(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(::dlsym(lib, name));
  if (!fn) gError = fmt::format("{}: no symbol {}", kSoname, name);
  return fn != nullptr;
}

// The signal dispositions a library loaded now must not change. libfabric is opened on first use,
// after main() set them up, and the PSM libraries it pulls in install handlers in their
// constructors: libinfinipath's SIGINT handler exits 1 silently (a Ctrl-C of an A/B run with an
// ofi variant left its temporary -o file and no word), and its backtrace printer on SIGSEGV & co.
// turns a crashing server session into an ordinary exit (docs/cli.md, crash isolation).
class KeepSignals {
 public:
  KeepSignals() {
    for (size_t i = 0; i < std::size(kSignals); ++i)
      ::sigaction(kSignals[i], nullptr, &saved_[i]);
  }
  ~KeepSignals() {
    for (size_t i = 0; i < std::size(kSignals); ++i)
      ::sigaction(kSignals[i], &saved_[i], nullptr);
  }
  KeepSignals(const KeepSignals&) = delete;
  KeepSignals& operator=(const KeepSignals&) = delete;

 private:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGSEGV,
                                     SIGBUS, SIGILL,  SIGFPE, SIGABRT};
  struct sigaction saved_[std::size(kSignals)]{};
};

void load() {
  const KeepSignals keep;
  // RTLD_LOCAL: the providers libfabric opens link it themselves.
  void* lib = ::dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
#ifdef RDMABENCH_LIBFABRIC_LIBDIR
  if (!lib) {
    const std::string first = ::dlerror();
    lib = ::dlopen((std::string(RDMABENCH_LIBFABRIC_LIBDIR) + "/" + kSoname).c_str(),
                   RTLD_NOW | RTLD_LOCAL);
    if (!lib) gError = first;
  }
#endif
  if (!lib) {
    if (gError.empty()) gError = ::dlerror();
    return;
  }
  Entry e;
  if (!bind(lib, "fi_getinfo", e.getinfo) || !bind(lib, "fi_freeinfo", e.freeinfo) ||
      !bind(lib, "fi_dupinfo", e.dupinfo) || !bind(lib, "fi_fabric", e.fabric) ||
      !bind(lib, "fi_strerror", e.strerror) || !bind(lib, "fi_version", e.version) ||
      !bind(lib, "fi_getparams", e.getparams) || !bind(lib, "fi_freeparams", e.freeparams))
    return;  // kept open: a library that lacks an entry point stays unusable, not unloaded
  gEntry = e;
  gLoaded.store(true, std::memory_order_release);
}

const Entry* entry() {
  return loadLibfabric().empty() ? &gEntry : nullptr;
}

}  // namespace

const std::string& loadLibfabric() {
  std::call_once(gOnce, load);
  return gError;
}

bool libfabricLoaded() {
  return gLoaded.load(std::memory_order_acquire);
}

void requireLibfabric() {
  if (const std::string& why = loadLibfabric(); !why.empty())
    throw TransportError(fmt::format("{} could not be loaded: {}", kSoname, why));
}

}  // namespace rdmabench::transport::ofi

// The exported entry points, forwarded. Without the library: -FI_ENOSYS / nullptr / 0, as a
// libfabric without the call would answer; the backend calls requireLibfabric() first.
using rdmabench::transport::ofi::entry;

extern "C" {

int fi_getinfo(uint32_t version, const char* node, const char* service, uint64_t flags,
               const struct fi_info* hints, struct fi_info** info) {
  const auto* e = entry();
  return e ? e->getinfo(version, node, service, flags, hints, info) : -FI_ENOSYS;
}

void fi_freeinfo(struct fi_info* info) {
  if (const auto* e = entry()) e->freeinfo(info);
}

struct fi_info* fi_dupinfo(const struct fi_info* info) {
  const auto* e = entry();
  return e ? e->dupinfo(info) : nullptr;
}

int fi_fabric(struct fi_fabric_attr* attr, struct fid_fabric** fabric, void* context) {
  const auto* e = entry();
  return e ? e->fabric(attr, fabric, context) : -FI_ENOSYS;
}

const char* fi_strerror(int errnum) {
  const auto* e = entry();
  return e ? e->strerror(errnum) : "libfabric.so.1 not loaded";
}

uint32_t fi_version(void) {
  const auto* e = entry();
  return e ? e->version() : 0;
}

int fi_getparams(struct fi_param** params, int* count) {
  const auto* e = entry();
  return e ? e->getparams(params, count) : -FI_ENOSYS;
}

void fi_freeparams(struct fi_param* params) {
  if (const auto* e = entry()) e->freeparams(params);
}

}  // extern "C"
