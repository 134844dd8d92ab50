#!/usr/bin/env bash
# Timer + sample overhead per latency iteration on this host (two clock reads + one
# SampleSet::add), for the TSC and for clock_gettime(CLOCK_MONOTONIC). Goal: < 50 ns.
# One command: bench/timer_overhead.sh [BUILD_DIR] [REPS]  (default build, 7 reps of 10^6).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
reps=${2:-7}
cmake --build "$build" --target timer_overhead >/dev/null
echo "# host $(hostname), $(nproc) CPUs, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/timer_overhead" "$reps"
