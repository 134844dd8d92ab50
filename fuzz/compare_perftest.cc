// fuzz_compare_perftest: `rdmabench compare` reading perftest input (compare_common.h).
#include "compare_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return rdmabench::fuzz::fuzzCompare(data, size, rdmabench::compare::Format::kPerftest);
}
