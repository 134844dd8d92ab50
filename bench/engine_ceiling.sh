#!/usr/bin/env bash
# Instrument 1 of issue #26: the engine's own ceiling on one core, over the null transport
# (lib/transport/null_device.h). Builds engine_ceiling and runs it pinned to one CPU:
# bw stream (write, 8 B) with post lists of 1 and 32, and send ping-pong iterations/s;
# median and [min, max] over interleaved reps. Instrument 2 (instructions per message,
# callgrind) is tests/perf/instructions_per_message.sh.
#
# Usage: bench/engine_ceiling.sh [BUILD_DIR] [REPS]      (default build, 7)
#
# Results on this machine (2 shared cores, loaded by other jobs; Debian 12, RelWithDebInfo -O2
# -g1; taskset -c 1; 8 B; median [min-max] of 5 interleaved reps, M messages or iterations/s):
#   before the batch contract (9d5ada9 + null device):
#     bw write, post list 1      101.4 [84.7-125.4]  M msg/s   9.9 ns/msg
#     bw write, "post list 32"   126.1 [99.3-127.1]  (no post lists yet: the same loop as 1)
#     ping-pong send              14.2 [9.9-16.1]    M it/s   70.7 ns/it
set -euo pipefail
build=${1:-build} reps=${2:-7}
ninja -C "$build" engine_ceiling >/dev/null
exec taskset -c "${CPU:-1}" "$build/engine_ceiling" --reps "$reps"
