#pragma once
// Element types and reduction operators of allreduce (--dtype, --op), the local reduction
// kernel, and the check data: rank r's input element i is ((r % 13) + 1) * ((i % 7) + 1), so
// sums stay exact in float32 for any world size up to 2^24 / 91 ranks and every algorithm's
// result can be compared bit for bit with the value computed locally. Pure, thread-safe.

#include <cstddef>
#include <cstdint>
#include <string>

namespace rdmabench::collective {

enum class DType { kInt32, kInt64, kFloat32, kFloat64 };
enum class ReduceOp { kSum, kMin, kMax };

// "int32" ... -> DType; UsageError naming --dtype and the valid names.
DType parseDType(const std::string& name);
ReduceOp parseOp(const std::string& name);
const char* toString(DType t);
const char* toString(ReduceOp op);
size_t elementSize(DType t);

// dst[i] = op(dst[i], src[i]) for i < count.
void reduceInto(void* dst, const void* src, uint64_t count, DType t, ReduceOp op);

// Writes rank `rank`'s input vector (count elements).
void fillInput(void* buf, uint64_t count, DType t, int rank);
// Elements of `buf` that differ from the reduction over ranks 0..worldSize-1 of fillInput.
uint64_t countWrong(const void* buf, uint64_t count, DType t, ReduceOp op, int worldSize);

}  // namespace rdmabench::collective
