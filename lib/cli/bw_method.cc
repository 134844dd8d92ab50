// The bandwidth method's options of bw and pairs (bw_method.h).
#include "cli/bw_method.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "cli/options.h"
#include "common/error.h"

namespace rdmabench::cli {

namespace {

std::string str(const boost::program_options::variables_map& vm, const char* k) {
  return vm[k].as<std::string>();
}

}  // namespace

void parseModeOption(const boost::program_options::variables_map& vm, engine::TestSpec& spec) {
  // The format only formats: -f perftest keeps the mode (docs/metrics.md).
  if (vm.count("mode")) spec.mode = engine::parseBwMode(str(vm, "mode"));
  if (spec.stream() && vm.count("window"))
    throw UsageError(
        "--window: only for --mode window (stream mode keeps --tx-depth posts in flight)");
}

void parsePostOptions(const boost::program_options::variables_map& vm, engine::TestSpec& spec) {
  if (vm.count("cq-mod"))
    spec.cqModeration =
        static_cast<uint32_t>(parseUnsigned(str(vm, "cq-mod"), "--cq-mod", 1, engine::kMaxWindow));
  if (vm.count("post-list"))
    spec.postList = static_cast<uint32_t>(
        parseUnsigned(str(vm, "post-list"), "--post-list", 1, engine::kMaxWindow));
}

uint32_t parseTxDepth(const boost::program_options::variables_map& vm) {
  if (!vm.count("tx-depth")) return 0;
  return static_cast<uint32_t>(parseUnsigned(str(vm, "tx-depth"), "--tx-depth", 1, 1 << 20));
}

// An -l above the --tx-depth is named as typed, with the --cq-mod it implies (validate() would
// name --cq-mod alone, an option the user did not type).
void applyStreamCqModeration(const boost::program_options::variables_map& vm,
                             engine::TestSpec& spec) {
  if (!spec.stream() || vm.count("cq-mod")) return;
  if (spec.postList > spec.streamDepth())
    throw UsageError(fmt::format(
        "--post-list {0}: out of range 1..{1} (the --tx-depth); -l {0} sets --cq-mod to {0}, "
        "above --tx-depth {1} (lower -l to {1} or raise --tx-depth to {0})",
        spec.postList, spec.streamDepth()));
  spec.cqModeration =
      spec.postList > 1 ? spec.postList : std::min<uint32_t>(100, spec.streamDepth());
}

}  // namespace rdmabench::cli
