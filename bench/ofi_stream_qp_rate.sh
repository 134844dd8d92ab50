#!/usr/bin/env bash
# Message rate of `bw -t ofi --provider 'tcp;ofi_rxm' --mode stream` with 1, 2 and 4 connections
# (-q), 8 B messages, on loopback (issue #36 item 4: -q 2 ran ~9x below -q 1, 16k against 142k
# msg/s, while one connection's receives ran dry). REPS interleaved reps (-q 1, 2, 4, -q 1, ...);
# per -q the median msg/s and the ratio to -q 1's median. Goal: no -q below 0.5 x -q 1 (the
# connections share one socket and one CPU pair here, so more connections add no rate; an order
# of magnitude less is the bug). Rates are a host's property: kept out of tests/.
# Usage: bench/ofi_stream_qp_rate.sh [path/to/rdmabench] [reps, default 5] [iters, default 50000]
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RB=$(readlink -f "${1:-$SRC/build/rdmabench}")
REPS=${2:-5}
N=${3:-50000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg); tcp;ofi_rxm on lo, -s 8, -n $N"
for rep in $(seq 1 "$REPS"); do
  for q in 1 2 4; do
    "$RB" bw -t ofi --provider "tcp;ofi_rxm" --mode stream -q "$q" -s 8 -n "$N" --timeout 120 \
      -f json -o "$TMP/q$q.$rep.json"
  done
done
python3 - "$TMP" "$REPS" <<'PY'
import json, statistics, sys
tmp, reps = sys.argv[1], int(sys.argv[2])
med = {}
for q in (1, 2, 4):
    rates = [json.load(open(f"{tmp}/q{q}.{r}.json"))["rows"][0]["msg_per_s"] for r in range(1, reps + 1)]
    med[q] = statistics.median(rates)
    print(f"-q {q}: median {med[q]:12.0f} msg/s  (min {min(rates):.0f}, max {max(rates):.0f})"
          f"  ratio to -q 1: {med[q] / med[1]:.2f}  goal >= 0.5")
PY
