#!/usr/bin/env bash
# libfabric latency, like for like, on loopback, in one run (issue #10): `rdmabench lat -t ofi`
# (busy poll) vs bench/ofi_pingpong_min.c, a minimal busy-poll FI_EP_RDM fi_send/fi_recv loop on
# the same provider, at 64 B and 4 KiB. Each figure: REPS interleaved reps (A B A B ...), one
# ratio per rep (rdmabench median / minimal-loop median, one-way us), then the median ratio and
# the min-max spread. Goal: median ratio <= 1.05. rdmabench reads its default clock (the TSC
# where invariant); the minimal loop reads clock_gettime (two reads, ~50 ns, per iteration).
# Usage: bench/ofi_like_for_like.sh [path/to/rdmabench] [reps, default 5] [iters, default 5000]
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RB=$(readlink -f "${1:-$SRC/build/rdmabench}")
REPS=${2:-5}
N=${3:-5000}
PROV="tcp;ofi_rxm"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -o "$TMP/min" "$SRC/bench/ofi_pingpong_min.c" -lfabric
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg); $PROV on lo, $N iterations, warmup 200"
printf "%-40s %10s %10s %8s %14s  %s\n" figure rdmabench anchor ratio "ratio min-max" goal
for size in 64 4096; do
  ratios=() rbs=() mins=()
  for ((r = 0; r < REPS; r++)); do
    rb=$(timeout 120 "$RB" lat -t ofi --provider "$PROV" --domain lo -s "$size" -n "$N" --warmup 200 -f json |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["latency_us"]["median"])')
    mn=$(timeout 120 "$TMP/min" "$PROV" "$size" "$N" 200)
    rbs+=("$rb") mins+=("$mn")
    ratios+=("$(python3 -c "print($rb / $mn)")")
  done
  python3 - "$size" "${rbs[*]}" "${mins[*]}" "${ratios[*]}" <<'PY'
import statistics, sys
size = sys.argv[1]
rb, mn, ra = ([float(x) for x in a.split()] for a in sys.argv[2:5])
med = statistics.median(ra)
print("%-40s %10.2f %10.2f %8.2f %14s  <= 1.05 %s" % (
    "%s B busy poll vs minimal fi_send/fi_recv" % size, statistics.median(rb),
    statistics.median(mn), med, "%.2f-%.2f" % (min(ra), max(ra)), "met" if med <= 1.05 else "MISSED"))
PY
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg); one-way = RTT/2 medians (us)"
