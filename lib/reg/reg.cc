#include "reg/reg.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/units.h"

namespace rdmabench::reg {

namespace {

constexpr uint64_t kThpBytes = 2ull << 20;

// A value of /proc/meminfo in bytes ("Hugepagesize:    2048 kB"); 0 when absent.
uint64_t meminfoBytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string name, unit;
  uint64_t value = 0;
  while (in >> name >> value) {
    std::getline(in, unit);
    if (name == key + ":") return value * 1024;
  }
  return 0;
}

std::string readLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// One mapping of `bytes` (rounded up to whole pages of `pages`); unmapped in the destructor.
class Mapping {
 public:
  Mapping(uint64_t bytes, Pages pages) {
    const uint64_t page = pageBytes(pages);
    size_ = (bytes + page - 1) / page * page;
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
    if (pages == Pages::kHuge) flags |= MAP_HUGETLB;
    // thp: map one huge page more and start at a 2 MiB boundary, so every 2 MiB can be a huge page.
    const uint64_t extra = pages == Pages::kThp ? kThpBytes : 0;
    void* p = mmap(nullptr, size_ + extra, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      if (pages == Pages::kHuge)
        throw UsageError(fmt::format(
            "--pages huge: mmap(MAP_HUGETLB) of {} bytes failed: {} ({} huge pages of {} free, "
            "/proc/sys/vm/nr_hugepages is {}: reserve more, e.g. sysctl vm.nr_hugepages={})",
            size_, std::strerror(err), meminfoBytes("HugePages_Free") / 1024, formatSize(page),
            readLine("/proc/sys/vm/nr_hugepages"), size_ / page + 1));
      throw SystemError(fmt::format("mmap of {} bytes", size_), err);
    }
    base_ = static_cast<uint8_t*>(p);
    mapped_ = size_ + extra;
    data_ = base_;
    if (extra) {
      const auto a = reinterpret_cast<uintptr_t>(base_);
      data_ = base_ + ((kThpBytes - a % kThpBytes) % kThpBytes);
      madvise(data_, size_, MADV_HUGEPAGE);  // advice: the kernel may still use small pages
    }
  }
  ~Mapping() { munmap(base_, mapped_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  void touch(uint64_t page) const {
    for (uint64_t o = 0; o < size_; o += page)
      data_[o] = static_cast<uint8_t>(o);
  }

 private:
  uint8_t* base_ = nullptr;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0, mapped_ = 0;
};

}  // namespace

const char* toString(Pages p) {
  switch (p) {
    case Pages::kHuge:
      return "huge";
    case Pages::kThp:
      return "thp";
    default:
      return "small";
  }
}

uint64_t defaultIterations(uint64_t bytes) {
  return std::clamp<uint64_t>((256ull << 20) / std::max<uint64_t>(bytes, 1), 5, 100);
}

uint64_t pageBytes(Pages p) {
  if (p == Pages::kThp) return kThpBytes;
  if (p == Pages::kHuge) {
    const uint64_t h = meminfoBytes("Hugepagesize");
    return h ? h : kThpBytes;
  }
  return static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

std::pair<std::string, std::string> timedCalls(const std::string& backend) {
  if (backend == "verbs") return {"ibv_reg_mr", "ibv_dereg_mr"};
  if (backend == "ofi") return {"fi_mr_reg", "fi_close"};
  return {"(bookkeeping)", "(bookkeeping)"};
}

void measureRegistration(transport::Device& device, const RegParams& p,
                         const std::function<void(const RegRow&)>& onRow) {
  for (const uint64_t bytes : p.sizes) {
    Mapping m(bytes, p.pages);
    if (p.prefault) m.touch(static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
    RegRow row;
    row.bytes = bytes;
    row.mappedBytes = m.size();
    row.iterations = p.iterations ? p.iterations : defaultIterations(bytes);
    stats::SampleSet reg, dereg;
    reg.reserve(row.iterations);
    dereg.reserve(row.iterations);
    for (uint64_t i = 0; i < p.warmup + row.iterations; ++i) {
      throwIfInterrupted("memory registration");
      const int64_t t0 = nowNs();
      std::unique_ptr<transport::MemoryRegion> mr;
      try {
        mr = device.registerMemory(m.data(), bytes);
      } catch (const TransportError& e) {
        throw TransportError(fmt::format("registering {} bytes ({} pages) on {}: {}", bytes,
                                         toString(p.pages), device.name(), e.what()));
      }
      const int64_t t1 = nowNs();
      mr.reset();
      const int64_t t2 = nowNs();
      if (i < p.warmup) continue;
      reg.add(t1 - t0);
      dereg.add(t2 - t1);
    }
    row.reg = reg.summarize();
    row.dereg = dereg.summarize();
    row.regGBps = row.reg.mean > 0 ? static_cast<double>(bytes) / (row.reg.mean * 1e3) : 0;
    onRow(row);
  }
}

}  // namespace rdmabench::reg
