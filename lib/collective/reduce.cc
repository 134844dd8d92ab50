#include "collective/reduce.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench::collective {

DType parseDType(const std::string& n) {
  if (n == "int32") return DType::kInt32;
  if (n == "int64") return DType::kInt64;
  if (n == "float32" || n == "float") return DType::kFloat32;
  if (n == "float64" || n == "double") return DType::kFloat64;
  throw UsageError(fmt::format("--dtype {}: unknown (valid: int32, int64, float32, float64)", n));
}

ReduceOp parseOp(const std::string& n) {
  if (n == "sum") return ReduceOp::kSum;
  if (n == "min") return ReduceOp::kMin;
  if (n == "max") return ReduceOp::kMax;
  throw UsageError(fmt::format("--op {}: unknown (valid: sum, min, max)", n));
}

const char* toString(DType t) {
  switch (t) {
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
  }
  return "?";
}

const char* toString(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kMax:
      return "max";
  }
  return "?";
}

size_t elementSize(DType t) {
  return (t == DType::kInt32 || t == DType::kFloat32) ? 4 : 8;
}

namespace {

template <typename T>
void reduceT(T* __restrict d, const T* __restrict s, uint64_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      for (uint64_t i = 0; i < n; ++i)
        d[i] += s[i];
      break;
    case ReduceOp::kMin:
      for (uint64_t i = 0; i < n; ++i)
        d[i] = std::min(d[i], s[i]);
      break;
    case ReduceOp::kMax:
      for (uint64_t i = 0; i < n; ++i)
        d[i] = std::max(d[i], s[i]);
      break;
  }
}

inline int64_t inputValue(int rank, uint64_t i) {
  return static_cast<int64_t>(rank % 13 + 1) * static_cast<int64_t>(i % 7 + 1);
}

template <typename T>
void fillT(T* b, uint64_t n, int rank) {
  for (uint64_t i = 0; i < n; ++i)
    b[i] = static_cast<T>(inputValue(rank, i));
}

template <typename T>
uint64_t wrongT(const T* b, uint64_t n, ReduceOp op, int world) {
  // The expected value depends only on i % 7: compute the 7 values once.
  T expect[7];
  for (uint64_t m = 0; m < 7; ++m) {
    int64_t acc = inputValue(0, m);
    for (int r = 1; r < world; ++r) {
      int64_t v = inputValue(r, m);
      acc = op == ReduceOp::kSum ? acc + v
                                 : (op == ReduceOp::kMin ? std::min(acc, v) : std::max(acc, v));
    }
    expect[m] = static_cast<T>(acc);
  }
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < n; ++i)
    wrong += b[i] != expect[i % 7];
  return wrong;
}

}  // namespace

void reduceInto(void* dst, const void* src, uint64_t count, DType t, ReduceOp op) {
  switch (t) {
    case DType::kInt32:
      return reduceT(static_cast<int32_t*>(dst), static_cast<const int32_t*>(src), count, op);
    case DType::kInt64:
      return reduceT(static_cast<int64_t*>(dst), static_cast<const int64_t*>(src), count, op);
    case DType::kFloat32:
      return reduceT(static_cast<float*>(dst), static_cast<const float*>(src), count, op);
    case DType::kFloat64:
      return reduceT(static_cast<double*>(dst), static_cast<const double*>(src), count, op);
  }
}

void fillInput(void* buf, uint64_t count, DType t, int rank) {
  switch (t) {
    case DType::kInt32:
      return fillT(static_cast<int32_t*>(buf), count, rank);
    case DType::kInt64:
      return fillT(static_cast<int64_t*>(buf), count, rank);
    case DType::kFloat32:
      return fillT(static_cast<float*>(buf), count, rank);
    case DType::kFloat64:
      return fillT(static_cast<double*>(buf), count, rank);
  }
}

uint64_t countWrong(const void* buf, uint64_t count, DType t, ReduceOp op, int world) {
  switch (t) {
    case DType::kInt32:
      return wrongT(static_cast<const int32_t*>(buf), count, op, world);
    case DType::kInt64:
      return wrongT(static_cast<const int64_t*>(buf), count, op, world);
    case DType::kFloat32:
      return wrongT(static_cast<const float*>(buf), count, op, world);
    case DType::kFloat64:
      return wrongT(static_cast<const double*>(buf), count, op, world);
  }
  return count;
}

}  // namespace rdmabench::collective
