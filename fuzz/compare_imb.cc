// fuzz_compare_imb: `rdmabench compare` reading IMB-MPI1 input (compare_common.h).
#include "compare_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return rdmabench::fuzz::fuzzCompare(data, size, rdmabench::compare::Format::kImb);
}
