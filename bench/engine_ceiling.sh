#!/usr/bin/env bash
# Instrument 1 of issue #26: the engine's own ceiling on one core, over the null transport
# (lib/transport/null_device.h). Builds engine_ceiling and runs it pinned to one CPU:
# bw stream (write, 8 B) with post lists of 1 and 32, and send ping-pong iterations/s;
# median and [min, max] over interleaved reps. Instrument 2 (instructions per message,
# callgrind) is tests/perf/instructions_per_message.sh.
#
# Usage: bench/engine_ceiling.sh [BUILD_DIR] [REPS]      (default build, 7)
#
# Results on this machine (2 shared cores, Debian 12, GCC 12 RelWithDebInfo -O2 -g1, taskset -c 1,
# 8 B; 7 interleaved rounds of the binary before (52a4f2c: null device, old loop) and after the
# batch contract (81b1fac); median [min-max], M messages/s or M iterations/s):
#   case                     before              after               after/before
#   bw write, post list 1    172.7 [167.7-176.3] 143.5 [131.4-147.1] 0.81 [0.78-0.87]
#   bw write, post list 32   174.4 [163.8-177.6] 366.1 [359.7-379.4] 2.13 [2.03-2.21]
#     (before: no post lists, the same loop as list 1)
#   ping-pong send           20.3 [19.9-20.7]    20.2 [19.8-20.8]    1.00 [0.98-1.03]
# Issue #26's goal, >= 50 M msg/s with post lists of 32 on one core: met (366 M/s, 2.7 ns/msg).
# Instructions per message (callgrind, tests/perf/instructions_per_message.sh): bw 131 -> 167,
# bw32 131 -> 49, pp 395 -> 395. A post list of 1 got slower on the null device (the batch
# call's bookkeeping); on a NIC the doorbell per post dominates and -l 32 removes 31 of 32.
# With the post-list-1 fast path (97cdfd2, postOneData), 2026-12-02, 3 interleaved rounds of 3 reps
# against 9a48f1e (the state above), medians of the rounds, M messages/s (host: an rxe VM running
# beside): bw list 1 129.0 / 127.9 / 138.7 -> 169.2 / 165.5 / 180.8 (1.28-1.31x; back at the
# pre-contract 172.7); list 32 292.6 / 332.1 / 327.7 -> 334.0 / 327.3 / 340.6; ping-pong 18.8-19.7
# -> 17.8-20.3 (unchanged). Instructions per message: bw 167 -> 120, bw32 49, pp 395-402.
# Earlier single runs under load ranged 2x lower: compare only interleaved runs.

set -euo pipefail
build=${1:-build} reps=${2:-7}
ninja -C "$build" engine_ceiling >/dev/null
exec taskset -c "${CPU:-1}" "$build/engine_ceiling" --reps "$reps"
