#!/usr/bin/env bash
# What `rdmabench noise` predicts against what `rdmabench allreduce` pays (issue 27, docs/noise.md
# "Cost to a collective"). Per round, interleaved: allreduce --np 2 -m 8:8 without noise (its
# t_avg is T), noise --np 2 with --predict-time T, then both again with the injector
# (tests/system/noise_injector.c) on cpu 1. Prints per round the measured t_avg rise and the
# predicted rise (delay with injector - delay without) and their ratio. Root (SCHED_FIFO: ranks at
# 20, injector at 30, so other load on the host reaches the ranks only through the fair server).
# One command: bench/noise_vs_allreduce.sh [BUILD_DIR] [ROUNDS] [WORK_US] [PERIOD_US]
#   (defaults: build, 3 rounds, 2000 us every 10000 us).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
rounds=${2:-3}
work=${3:-2000}
period=${4:-10000}
RB=$build/rdmabench
tmp=$(mktemp -d /tmp/rdmabench-noisebench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -Wall -Wextra -o "$tmp/inj" "$here/tests/system/noise_injector.c"
tavg() { python3 -c "import json,sys; print(json.load(sys.stdin)['rows'][0]['collective']['t_avg_us'])"; }
delay() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['collective_cost']['predictions'][0]['delay_us'])" "$1"; }
allreduce() { chrt -f 20 "$RB" allreduce --np 2 -m 8:8 -t socket --cpu 0,1 -D 2 -f json 2>/dev/null | tavg; }
noise() { chrt -f 20 "$RB" noise --np 2 -D 2 --sample 0 --predict-time "$1" -f json -o "$2" 2>/dev/null; }
inject() { chrt -f 30 "$tmp/inj" 1 "$work" "$period" 3 rbnoiseinj >/dev/null & sleep 0.2; }
echo "# host $(hostname), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); injector ${work} us every ${period} us on cpu 1"
printf "%5s %10s %10s %12s %14s %7s\n" round "T[us]" "noisy[us]" "rise[us]" "predicted[us]" ratio
: >"$tmp/ratios"
for r in $(seq 1 "$rounds"); do
  t=$(allreduce)
  noise "$t" "$tmp/quiet.json"
  inject; tn=$(allreduce); wait
  inject; noise "$t" "$tmp/noisy.json"; wait
  python3 - "$r" "$t" "$tn" "$(delay "$tmp/quiet.json")" "$(delay "$tmp/noisy.json")" <<'PY'
import sys
r, t, tn, dq, dn = sys.argv[1], *map(float, sys.argv[2:])
rise, pred = tn - t, dn - dq
print(f"{r:>5} {t:10.2f} {tn:10.2f} {rise:12.2f} {pred:14.2f} {rise / pred if pred else float('nan'):7.2f}")
PY
done | tee "$tmp/rows"
awk '{print $6}' "$tmp/rows" | sort -g | awk '{v[NR]=$1} END {print "median ratio", v[int((NR+1)/2)]}'
