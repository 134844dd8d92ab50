// fuzz_compare_json: `rdmabench compare` reading rdmabench JSON input (compare_common.h).
#include "compare_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return rdmabench::fuzz::fuzzCompare(data, size, rdmabench::compare::Format::kRdmabenchJson);
}
