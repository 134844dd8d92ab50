#!/usr/bin/env bash
# Socket latency, like for like, on loopback, in one run (issue #10):
#   rdmabench -t socket --use-event  vs  sockperf ping-pong (its default: epoll, blocking waits)
#   rdmabench -t socket (busy poll)  vs  bench/socket_pingpong_min.c busy (recv MSG_DONTWAIT spin)
#   rdmabench -t socket --use-event  vs  bench/socket_pingpong_min.c epoll
# at 64 B and 4 KiB. Each figure: REPS interleaved reps (A B A B ...), one ratio per rep
# (rdmabench median / anchor median, one-way us); prints the median ratio and the min-max
# spread. Goal: median ratio <= 1.00. The host's load average is printed before and after.
# Usage: bench/socket_like_for_like.sh [path/to/rdmabench] [reps, default 5] [iters, default 20000]
# (sockperf runs SP_SECONDS seconds per rep, default 2).
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RB=$(readlink -f "${1:-$SRC/build/rdmabench}")
REPS=${2:-5}
N=${3:-20000}
SP_SECONDS=${SP_SECONDS:-2}
TMP=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true; rm -rf "$TMP"' EXIT
command -v sockperf >/dev/null || { echo "bench: sockperf missing (run ci/install-deps.sh)" >&2; exit 1; }
cc -O2 -o "$TMP/minloop" "$SRC/bench/socket_pingpong_min.c"
sockperf server --tcp -i 127.0.0.1 -p 11312 >/dev/null 2>&1 & PIDS+=($!)
sleep 0.5

rb() {  # SIZE [--use-event] -> median one-way us
  "$RB" lat -t socket -s "$1" -n "$N" --warmup 1000 "${@:2}" -f json --quiet |
    grep -o '"median":[0-9.e+-]*' | head -1 | cut -d: -f2
}
sp() {  # SIZE -> sockperf median one-way us (its default: epoll; it runs for seconds, not counts)
  sockperf ping-pong --tcp -i 127.0.0.1 -p 11312 -m "$1" -t "$SP_SECONDS" 2>&1 |
    awk '/percentile 50.000/ {print $NF}'
}
mini() {  # SIZE busy|epoll -> median one-way us
  "$TMP/minloop" "$1" "$N" 1000 "$2"
}
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "# host $(nproc) CPUs, load average before: $(cut -d' ' -f1-3 /proc/loadavg); $REPS interleaved reps of $N iterations"
printf '%-44s %10s %10s %8s %13s  %s\n' figure rdmabench anchor ratio "ratio min-max" goal
figure() {  # LABEL SIZE "rdmabench args" anchor-fn anchor-args...
  local label=$1 size=$2 rbargs=$3; shift 3
  local ours=() theirs=() ratios=() r
  for ((r = 0; r < REPS; r++)); do
    # shellcheck disable=SC2086
    ours+=("$(rb "$size" $rbargs)")
    theirs+=("$("$@")")
    ratios+=("$(awk -v a="${ours[$r]}" -v b="${theirs[$r]}" 'BEGIN { printf "%.4f", a / b }')")
  done
  local m lo hi
  m=$(median "${ratios[@]}")
  lo=$(printf '%s\n' "${ratios[@]}" | sort -g | head -1)
  hi=$(printf '%s\n' "${ratios[@]}" | sort -g | tail -1)
  printf '%-44s %10.2f %10.2f %8.2f %13s  <= 1.00 %s\n' "$label" "$(median "${ours[@]}")" \
    "$(median "${theirs[@]}")" "$m" "$(printf '%.2f-%.2f' "$lo" "$hi")" \
    "$(awk -v x="$m" 'BEGIN { print (x <= 1.0) ? "met" : "MISSED" }')"
}
for s in 64 4096; do
  figure "${s} B --use-event vs sockperf (epoll)" "$s" "--use-event" sp "$s"
  figure "${s} B --use-event vs minimal epoll loop" "$s" "--use-event" mini "$s" epoll
  figure "${s} B busy poll vs minimal busy loop" "$s" "" mini "$s" busy
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg); one-way = RTT/2 medians (us)"
