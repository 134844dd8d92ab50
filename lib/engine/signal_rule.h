#pragma once
// Which post asks for a completion (moderated completions: perftest's cq_mod, --cq-mod): the one
// rule every post path of the engines applies -- bandwidth's window, stream, batch and run posts
// (bandwidth_posts.cc, bandwidth_stream.cc, bandwidth_run.h) and the ping-pong's data posts
// (pingpong.cc). Only a signaled post produces a completion; an unsignaled one is retired by the
// completion of a later signaled post on the same queue.
//
// A batch of `n` posts (n = 1: a single post) whose last post has sequence number `last` is
// signaled (on that last post) when
//  - it holds `runLast`, the last post of the run or of a window: the run, or the window, ends
//    on a completion;
//  - the unsignaled posts before it (`since`) and its own reach `cqMod`: since + n >= cqMod;
//  - after it, less than a batch (`batch`, --post-list) fits below `limit`, the first sequence
//    number that does not fit in flight (oldest post not known complete + depth). Otherwise the
//    next signaled post might never be posted -- with a --cq-mod that does not divide the room
//    the cq-mod-th post may not fit -- and a stream whose posts in flight are all unsignaled
//    waits for a completion forever. kNoLimit: no such bound (one post in flight, or a post that
//    is not the last of its batch).
// Pure arithmetic, inlined into the timed loops; thread-safe.

#include <cstdint>

namespace rdmabench::engine {

struct SignalRule {
  static constexpr uint64_t kNoLimit = UINT64_MAX;
  uint64_t cqMod = 1;  // at most this many posts per completion (>= 1)
  uint64_t batch = 1;  // posts per batch (--post-list, >= 1)

  bool signals(uint64_t last, uint64_t n, uint64_t since, uint64_t runLast, uint64_t limit) const {
    return last == runLast || since + n >= cqMod || limit < last + 1 + batch;
  }
};

}  // namespace rdmabench::engine
