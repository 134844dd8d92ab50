#!/usr/bin/env bash
# Side by side on loopback, in one run: rdmabench -t socket against sockperf (TCP ping-pong,
# median one-way latency) and qperf (tcp_bw, MB/s), and the ratio per figure.
#   latency ratio   = rdmabench median / sockperf median      (goal <= 1.0)
#   bandwidth ratio = rdmabench MB/s   / qperf tcp_bw MB/s    (goal >= 1.0)
# Usage: bench/socket_vs_anchors.sh [path/to/rdmabench] [seconds per figure, default 3]
# Needs sockperf and qperf (ci/install-deps.sh installs them). Loopback only.
set -euo pipefail
RB=$(readlink -f "${1:-build/rdmabench}")
T=${2:-3}
TMP=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true; rm -rf "$TMP"' EXIT
for tool in sockperf qperf python3; do
  command -v "$tool" >/dev/null || { echo "bench: $tool missing (run ci/install-deps.sh)" >&2; exit 1; }
done

sockperf server --tcp -i 127.0.0.1 -p 11311 >/dev/null 2>&1 & PIDS+=($!)
qperf --listen_port 19765 >/dev/null 2>&1 & PIDS+=($!)
sleep 0.5

rb_lat() {  # median one-way latency, us
  "$RB" lat -t socket -s "$1" -D "$T" -f json | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["latency_us"]["median"])'
}
rb_bw() {  # MB/s (10^6 B/s)
  "$RB" bw -t socket -s "$1" -D "$T" -f json | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["mb_per_s"])'
}
sp_lat() {
  sockperf ping-pong --tcp -i 127.0.0.1 -p 11311 -m "$1" -t "$T" 2>&1 |
    awk '/percentile 50.000/ {print $NF}'
}
qp_bw() {  # qperf prints GB/sec or MB/sec (decimal); convert to MB/s
  qperf --listen_port 19765 -t "$T" -m "$1" 127.0.0.1 tcp_bw |
    awk '/bw *=/ {v=$3; u=$4; if (u ~ /^GB/) v*=1000; else if (u ~ /^KB/) v/=1000; print v}'
}

printf "%-28s %14s %14s %8s  %s\n" figure rdmabench anchor ratio goal
row() {  # name ours theirs goal(le|ge)
  python3 - "$@" <<'PY'
import sys
name, ours, theirs, goal = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
r = ours / theirs if theirs else float("nan")
ok = (r <= 1.0) if goal == "le" else (r >= 1.0)
print(f"{name:<28} {ours:14.2f} {theirs:14.2f} {r:8.2f}  {'<=' if goal=='le' else '>='} 1.0 {'met' if ok else 'NOT met'}")
PY
}
for s in 64 4096; do
  row "lat ${s}B median us (sockperf)" "$(rb_lat $s)" "$(sp_lat $s)" le
done
for s in 65536 1048576; do
  row "bw ${s}B MB/s (qperf)" "$(rb_bw $s)" "$(qp_bw $s)" ge
done
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); loopback; sockperf median vs rdmabench t_typical; qperf tcp_bw vs rdmabench bw (window 64)"
