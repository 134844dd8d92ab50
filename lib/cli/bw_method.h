#pragma once
// The options of the bandwidth method and the data operation that `bw` and `pairs` share: their
// help texts and their parse into an engine::TestSpec (engine/spec.h), so both commands accept
// the same values with the same messages, and TestSpec::validate checks the result for both.
// Every bad value is a one-line UsageError naming the option, the value and the range.
// Thread-safe (no shared state).

#include <boost/program_options.hpp>

#include <cstdint>

#include "engine/spec.h"

namespace rdmabench::cli {

// --op (lat, bw, pairs).
inline constexpr const char* kOpHelp =
    "send | write | read | tagged: write/read are RDMA write/read (socket emulates them, ofi "
    "needs FI_RMA), tagged is ofi --ep rdm only (default send)";
// --mode (bw, pairs); each command adds its default.
inline constexpr const char* kModeHelp =
    "window | stream: osu_bw's windows of --window messages, acked, or perftest's --tx-depth "
    "posts kept in flight";
// --cq-mod (bw, pairs).
inline constexpr const char* kCqModHelp =
    "request a completion every N posts, at most the window (window mode) or --tx-depth "
    "(stream mode) (default: window mode 1, stream mode min(100, --tx-depth) as perftest -Q, "
    "or the --post-list size when above 1 as perftest -l)";
// -l / --post-list (bw, pairs).
inline constexpr const char* kPostListHelp =
    "posts handed to the transport per call, 1..the window or --tx-depth; verbs chains them "
    "in one ibv_post_send (perftest -l) (default 1)";

// --mode into spec.mode; UsageError for an unknown name (engine::parseBwMode) and for --window
// given with --mode stream (stream mode keeps --tx-depth posts in flight).
void parseModeOption(const boost::program_options::variables_map& vm, engine::TestSpec& spec);

// --cq-mod and -l / --post-list into spec (1..engine::kMaxWindow here; TestSpec::validate
// bounds them by the window or the stream depth).
void parsePostOptions(const boost::program_options::variables_map& vm, engine::TestSpec& spec);

// --tx-depth N (1..2^20): the send queue depth and stream mode's posts in flight; 0 when absent.
uint32_t parseTxDepth(const boost::program_options::variables_map& vm);

// Stream mode without --cq-mod: perftest's moderation, -Q 100 capped at the stream depth, or one
// completion per post list when -l is above 1 (perftest -l). Call once spec.txDepth is set. An
// -l above the stream depth keeps -Q 100, so TestSpec::validate() names the -l as typed. Window
// mode, or --cq-mod given: spec unchanged. Throws nothing.
void applyStreamCqModeration(const boost::program_options::variables_map& vm,
                             engine::TestSpec& spec);

}  // namespace rdmabench::cli
