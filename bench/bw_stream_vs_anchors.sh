#!/usr/bin/env bash
# Socket stream bandwidth vs qperf tcp_bw and iperf3 on loopback, interleaved reps.
#
#   bench/bw_stream_vs_anchors.sh [--build DIR] [--reps N] [--seconds S]
#
# Figures: 64 KiB and 1 MiB messages. rdmabench `bw -t socket --mode stream -D S` (clock stops on
# delivery at the target, docs/metrics.md) vs `qperf -m SIZE tcp_bw` (MB/sec, 10^6 B/s) and
# `iperf3 -l SIZE` (receiver's bits/s / 8 / 10^6). Each rep runs the three tools one after the
# other; per figure the script prints the median of the per-rep ratios rdmabench/anchor and their
# spread (min..max). Goal: ratio >= 1.00. Loopback only; the machine's load is printed with the
# results (a shared 2-core host is noisy: read the spread).
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$SRC/build
REPS=5
T=2
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$(readlink -f "$2"); shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --seconds) T=$2; shift 2 ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
RB=$BUILD/rdmabench
[ -x "$RB" ] || { echo "no $RB: build first" >&2; exit 2; }
for tool in qperf python3; do
  command -v $tool >/dev/null || { echo "$tool is not installed" >&2; exit 2; }
done
HAVE_IPERF=0
command -v iperf3 >/dev/null && HAVE_IPERF=1
[ $HAVE_IPERF = 1 ] || echo "# iperf3 not installed: its column is skipped (ci/install-deps.sh installs it)"

PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done' EXIT
qperf --listen_port 19767 >/dev/null 2>&1 & PIDS+=($!)
[ $HAVE_IPERF = 1 ] && { iperf3 -s -p 19768 >/dev/null 2>&1 & PIDS+=($!); }
"$RB" server --port 18517 --bind 127.0.0.1 >/dev/null 2>&1 & PIDS+=($!)
sleep 0.5

rb() {
  "$RB" bw 127.0.0.1 --port 18517 -t socket --mode stream -s "$1" -D "$T" -f json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["mb_per_s"])'
}
qp() {
  qperf --listen_port 19767 -t "$T" -m "$1" 127.0.0.1 tcp_bw |
    awk '/bw *=/ {v=$3; u=$4; if (u ~ /^GB/) v*=1000; else if (u ~ /^KB/) v/=1000; print v}'
}
ip3() {
  iperf3 -c 127.0.0.1 -p 19768 -t "$T" -l "$1" -J |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/8e6)'
}

OUT=$(mktemp)
for rep in $(seq 1 "$REPS"); do
  for s in 65536 1048576; do
    a=$(rb $s); b=$(qp $s); c=nan
    [ $HAVE_IPERF = 1 ] && c=$(ip3 $s)
    echo "$s $a $b $c" >>"$OUT"
  done
done
python3 - "$OUT" <<'PY'
import math, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    s, a, b, c = line.split()
    rows.setdefault(int(s), []).append((float(a), float(b), float(c)))
print(f"{'size':>8} {'anchor':<8} {'rdmabench':>10} {'anchor':>10} {'ratio':>6} {'spread':>13}  goal")
for s, reps in rows.items():
    for i, name in ((1, "qperf"), (2, "iperf3")):
        ratios = [r[0] / r[i] for r in reps if not math.isnan(r[i]) and r[i] > 0]
        if not ratios:
            continue
        med = statistics.median(ratios)
        ours = statistics.median(r[0] for r in reps)
        theirs = statistics.median(r[i] for r in reps)
        print(f"{s:>8} {name:<8} {ours:10.1f} {theirs:10.1f} {med:6.2f} {min(ratios):6.2f}..{max(ratios):<5.2f}"
              f"  >= 1.00 {'met' if med >= 1.0 else 'NOT met'}")
PY
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); loopback; MB/s = 10^6 B/s; $REPS reps of ${T}s, tools interleaved"
