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

// An -l above the --tx-depth keeps the default moderation, so validate() refuses the -l the user
// typed, not a --cq-mod they did not type (issue 36 item 9).
void applyStreamCqModeration(const boost::program_options::variables_map& vm,
                             engine::TestSpec& spec) {
  if (!spec.stream() || vm.count("cq-mod")) return;
  spec.cqModeration = spec.postList > 1 && spec.postList <= spec.streamDepth()
                          ? spec.postList
                          : std::min<uint32_t>(100, spec.streamDepth());
}

}  // namespace rdmabench::cli
