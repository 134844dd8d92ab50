#pragma once
// `rdmabench reg`: the cost of memory registration (docs/reg.md). For each size, one buffer is
// mapped (small pages, explicit huge pages or transparent huge pages), optionally touched page by
// page first, then registered with the device and deregistered `iterations` times, each call
// timed on the monotonic clock: ibv_reg_mr / ibv_dereg_mr on verbs, fi_mr_reg / fi_close on
// libfabric (what storage and MPI users time by hand; perftest has no such test). The socket
// backend's registration is bookkeeping only and is measured as such. Thread-safety: one run per
// thread; the functions are otherwise pure.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "stats/summary.h"
#include "transport/transport.h"

namespace rdmabench::reg {

// The pages behind the registered buffer (--pages).
enum class Pages : uint8_t {
  kSmall,  // anonymous mmap, the base page size (4 KiB on x86-64)
  kHuge,   // mmap(MAP_HUGETLB): the default huge page size, from the reserved pool
  kThp,    // anonymous mmap aligned to 2 MiB with madvise(MADV_HUGEPAGE)
};
const char* toString(Pages p);  // "small", "huge", "thp"

// Default iterations for `bytes` when -n is not given: 256 MiB worth, clamped to 5..100 (so a
// large size costs a few seconds, a small one gets a stable mean).
uint64_t defaultIterations(uint64_t bytes);

struct RegParams {
  std::vector<uint64_t> sizes;  // bytes, each >= 1
  uint64_t iterations = 0;      // timed register+deregister pairs per size; 0 = the default rule
  uint64_t warmup = 1;          // untimed pairs first (the first registration of a mapping
                                // pays for the IOMMU / page-table setup)
  Pages pages = Pages::kSmall;
  bool prefault = true;  // touch every page before timing (else ibv_reg_mr faults them in)
};

// One size's figures. Times in microseconds per call; regGBps = bytes / mean registration time
// in 10^9 B/s (the rate at which memory becomes registered).
struct RegRow {
  uint64_t bytes = 0;
  uint64_t mappedBytes = 0;  // the mapping (rounded up to whole pages)
  uint64_t iterations = 0;
  stats::Summary reg, dereg;
  double regGBps = 0;
};

// Measures every size of `p` on `device` in order, calling `onRow` after each (so a failure in
// a later size keeps the earlier rows). Throws UsageError for a mapping the system refuses
// (huge pages not reserved: names /proc/sys/vm/nr_hugepages), TransportError when the device
// refuses a registration (the library's text, with the size), InterruptedError on Ctrl-C.
void measureRegistration(transport::Device& device, const RegParams& p,
                         const std::function<void(const RegRow&)>& onRow);

// The calls timed on `backend`: {"ibv_reg_mr", "ibv_dereg_mr"}, {"fi_mr_reg", "fi_close"},
// socket: {"(bookkeeping)", "(bookkeeping)"}.
std::pair<std::string, std::string> timedCalls(const std::string& backend);

// Bytes of one page of `p` (the base page size, or the default huge page size from
// /proc/meminfo's Hugepagesize; 2 MiB for thp).
uint64_t pageBytes(Pages p);

}  // namespace rdmabench::reg
