#!/usr/bin/env bash
# Collective benchmarks (docs/collectives.md):
#  1. rendezvous wire-up time for 16, 64 and 256 local ranks (socket transport, a barrier):
#     rank 0's time from opening its device to the end of the first barrier, and the wall time
#     of the whole `rdmabench barrier --np N` run;
#  2. tree allreduce at 8 B and 64 KiB over 4 local ranks beside Open MPI (an osu_allreduce-
#     style program, mpi_allreduce.c, built here with mpicc) on the same host.
# Usage: bench/collectives/run.sh path/to/rdmabench [ITERS]   (prints a Markdown report)
set -euo pipefail
RB=$(readlink -f "${1:?usage: $0 path/to/rdmabench [iters]}")
ITERS=${2:-1000}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "## Rendezvous wire-up (socket, --np N, barrier)"
echo
echo "| ranks | wire-up rank 0 [s] | whole run wall [s] | barrier t_avg [us] |"
echo "|---|---|---|---|"
for n in 16 64 256; do
  start=$(date +%s.%N)
  timeout 600 "$RB" barrier --np "$n" -n 10 --warmup 1 -f json -o "$TMP/w$n.json"
  end=$(date +%s.%N)
  python3 - "$TMP/w$n.json" "$n" "$start" "$end" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"| {sys.argv[2]} | {d['run']['extra']['wireup_s']:.3f} | {float(sys.argv[4]) - float(sys.argv[3]):.2f} | {d['rows'][0]['collective']['t_avg_us']:.1f} |")
PY
done
echo

echo "## Tree allreduce vs Open MPI, 4 local ranks, float32 sum (t_avg over ranks, us)"
echo
timeout 300 "$RB" allreduce --np 4 --algo tree -m 8:8 -n "$ITERS" -f json -o "$TMP/r8.json"
timeout 300 "$RB" allreduce --np 4 --algo tree -m 64K:64K -n "$((ITERS / 10 > 10 ? ITERS / 10 : 10))" -f json -o "$TMP/r64.json"
mpi="n/a (mpicc/mpirun not installed: apt-get install openmpi-bin libopenmpi-dev)"
if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
  mpicc -O2 -o "$TMP/mpi_allreduce" "$HERE/mpi_allreduce.c"
  timeout 300 mpirun --allow-run-as-root --oversubscribe -np 4 "$TMP/mpi_allreduce" "$ITERS" 100 8 >"$TMP/m8.txt"
  timeout 300 mpirun --allow-run-as-root --oversubscribe -np 4 "$TMP/mpi_allreduce" "$((ITERS / 10 > 10 ? ITERS / 10 : 10))" 10 65536 >"$TMP/m64.txt"
  # The same over TCP only (btl tcp,self on lo), the closest match to rdmabench's socket transport.
  tcp=(--mca btl tcp,self --mca btl_tcp_if_include lo --mca pml ob1)
  timeout 300 mpirun --allow-run-as-root --oversubscribe "${tcp[@]}" -np 4 "$TMP/mpi_allreduce" "$ITERS" 100 8 >"$TMP/t8.txt"
  timeout 300 mpirun --allow-run-as-root --oversubscribe "${tcp[@]}" -np 4 "$TMP/mpi_allreduce" "$((ITERS / 10 > 10 ? ITERS / 10 : 10))" 10 65536 >"$TMP/t64.txt"
  mpi=ok
fi
python3 - "$TMP" "$mpi" <<'PY'
import json, sys, os
tmp, mpi = sys.argv[1], sys.argv[2]
def rb(f):
    r = json.load(open(os.path.join(tmp, f)))['rows'][0]['collective']
    return r['t_avg_us'], r['t_min_us'], r['t_max_us']
def m(f):
    if mpi != 'ok': return None
    for line in open(os.path.join(tmp, f)):
        if not line.startswith('#'):
            b, mn, mx, avg = line.split()
            return float(avg), float(mn), float(mx)
print("| bytes | rdmabench tree, socket | Open MPI (default: shared memory) | Open MPI (btl tcp,self) |")
print("|---|---|---|---|")
fmt = lambda o: f"{o[0]:.2f} ({o[1]:.2f}..{o[2]:.2f})" if o else mpi
for b, fr, fm, ft in ((8, 'r8.json', 'm8.txt', 't8.txt'), (65536, 'r64.json', 'm64.txt', 't64.txt')):
    print(f"| {b} | {fmt(rb(fr))} | {fmt(m(fm))} | {fmt(m(ft))} |")
print()
print("t_avg (min..max) in us; min/max over ranks of each rank's mean, as OSU -f.")
PY
