// The replaced global operator new of integration_tests (alloc_count.h).
// GCC sees malloc/free inside the replaced operators inlined into library code and warns of a
// mismatch that is not one (both sides are these replacements).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

#include "alloc_count.h"

#include <cstdlib>
#include <new>

namespace {
thread_local bool gCounting = false;
thread_local uint64_t gAllocations = 0;
}  // namespace

namespace rdmabench::testing {
void startCountingAllocations() {
  gAllocations = 0;
  gCounting = true;
}
uint64_t stopCountingAllocations() {
  gCounting = false;
  return gAllocations;
}
}  // namespace rdmabench::testing

void* operator new(size_t n) {
  if (gCounting) ++gAllocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
// Every other form that a delete above may be paired with (std::stable_sort's temporary buffer
// takes nothrow new; arrays): a sanitizer's own new freed by this delete is a mismatch (ASan:
// alloc-dealloc-mismatch). The aligned forms stay the runtime's, new and delete alike.
void* operator new[](size_t n) {
  return ::operator new(n);
}
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  if (gCounting) ++gAllocations;
  return std::malloc(n ? n : 1);
}
void* operator new[](size_t n, const std::nothrow_t& t) noexcept {
  return ::operator new(n, t);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
