# Every sbatch script of examples/slurm runs on the throw-away Slurm (ci/slurm-cluster: 4
# emulated nodes n1..n4 with 2 CPUs each, on this host) with `sbatch --wait`, and what it
# prints and writes is asserted. One cluster for all five scripts; each job is bounded by
# `timeout`. OSU is not in Debian: mpi_overhead.sbatch gets a stand-in osu_latency through
# OSU_LATENCY (OSU's layout, measured by `rdmabench lat -f osu`, which labels itself MPI-free:
# the test checks the script's pipeline, not an MPI overhead).
source "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
  [ "${CI:-}" = true ] && fail "CI must run as root (Slurm daemons)"
  skip "needs root to run slurmctld/slurmd"
fi
command -v gnuplot >/dev/null || fail "gnuplot is missing (ci/install-deps.sh: gnuplot-nox)"
EX="$SRC/examples/slurm"
for f in fabric_acceptance ring_pingpong allreduce_small mpi_overhead sharp_check; do
  [ -f "$EX/$f.sbatch" ] || fail "examples/slurm/$f.sbatch is missing"
  head -12 "$EX/$f.sbatch" | grep -q '^# .*?' || fail "$f.sbatch: no comment saying what it answers"
done

cat >"$TMP/osu_latency" <<SH
#!/bin/bash
# Stand-in for OSU's osu_latency under srun -n 2: rank 0 prints OSU's layout, the other exits.
[ "\${SLURM_PROCID:-0}" = 0 ] || exit 0
exec "$RB" lat -e -t socket -f osu -m 0:4K -n 300 --warmup 30 --quiet
SH
chmod +x "$TMP/osu_latency"

# The SHARP-enabled binary and the stand-in library tests/CMakeLists.txt builds beside rdmabench
# when no real SHARP was found (CI: always).
SHARP_RB=$(dirname "$RB")/tests/rdmabench-sharp-standin
SHARP_LIB=$(dirname "$RB")/tests/sharp_standin/lib/libsharp_coll.so
if [ "${CI:-}" = true ] && [ ! -x "$SHARP_RB" ]; then fail "$SHARP_RB is not built"; fi

# job NAME SCRIPT ARGS...: sbatch --wait, output in $TMP/NAME.out, results in $TMP/NAME/,
# exit status in $TMP/NAME.rc.
cat >"$TMP/jobs.sh" <<SH
cd "$TMP"
export RDMABENCH="$RB" OSU_LATENCY="$TMP/osu_latency" SRUN_MPI=none
job() {
  local name=\$1 script=\$2; shift 2
  local rc=0
  RDMABENCH_OUT="$TMP/\$name" timeout 150 sbatch --wait --quiet -o "$TMP/\$name.out" "$EX/\$script" "\$@" || rc=\$?
  echo \$rc >"$TMP/\$name.rc"
}
# -e: 4 busy-polling ranks on 2 shared cores take 8 ms scheduler slices per message, which
# makes pairs see outliers that are the CI machine, not the fabric.
job fabric fabric_acceptance.sbatch -e -n 200 --warmup 20 --bw-size 64K --bw-iters 3 --outlier-k 1000
job ring ring_pingpong.sbatch -e -n 200 --warmup 20
job allreduce allreduce_small.sbatch -e -n 200 --warmup 20
job mpi mpi_overhead.sbatch -e -t socket -n 300 --warmup 30
job sharp sharp_check.sbatch -e -n 200 --warmup 20
# The SHARP branch of the same script: the build's SHARP-enabled binary with the stand-in
# libsharp_coll (tests/sharp_standin), when the build has them.
if [ -x "$SHARP_RB" ] && [ -f "$SHARP_LIB" ]; then
  (export RDMABENCH="$SHARP_RB" RDMABENCH_SHARP_LIBRARY="$SHARP_LIB"; job sharp2 sharp_check.sbatch -e -n 200 --warmup 20)
fi
SH
timeout 840 "$SRC/ci/slurm-cluster" -N 4 -c 2 -- bash "$TMP/jobs.sh" >"$TMP/cluster.out" 2>&1 ||
  fail "the Slurm cluster failed: $(tail -n 20 "$TMP/cluster.out")"

ok_job() {  # ok_job NAME: the job exited 0
  [ -f "$TMP/$1.rc" ] || fail "$1: never submitted: $(tail -n 20 "$TMP/cluster.out")"
  [ "$(cat "$TMP/$1.rc")" = 0 ] || fail "$1: sbatch --wait exit $(cat "$TMP/$1.rc"): $(tail -n 30 "$TMP/$1.out" 2>/dev/null)"
}
ok_job fabric
grep -Eq "4 ranks on 4 nodes" "$TMP/fabric.out" || fail "fabric: not 4 ranks on 4 nodes: $(head -30 "$TMP/fabric.out")"
[ "$(head -c 4 "$TMP/fabric/pairs.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "fabric: no PNG heat map"
pass "fabric_acceptance.sbatch: pairs over 4 nodes, heat map"

ok_job ring
python3 - "$TMP/ring/ring_sorted.csv" <<'PY' || fail "ring: $(cat "$TMP/ring.out")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 8, f"{len(rows)} links, expected 8 (4 ranks x right and left)"
col = "link_median_us"
v = [float(r[col]) for r in rows]
assert v == sorted(v, reverse=True), f"not slowest first: {v}"
PY
pass "ring_pingpong.sbatch: 8 links, slowest first"

ok_job allreduce
grep -Eq "4 ranks on 2 nodes" "$TMP/allreduce.out" || fail "allreduce: not 4 ranks on 2 nodes: $(head -30 "$TMP/allreduce.out")"
grep -Eq '^ *8 ' "$TMP/allreduce.out" && grep -Eq '^ *16 ' "$TMP/allreduce.out" ||
  fail "allreduce: no 8 B and 16 B rows: $(cat "$TMP/allreduce.out")"
pass "allreduce_small.sbatch: 8 and 16 B over every core of 2 nodes (4 ranks), checked"

ok_job mpi
json_check "$TMP/mpi/rdmabench_lat.json" "len(d['rows']) >= 10"
# The stand-in is rdmabench's OSU layout and says so ("OSU MPI-free Latency Test"), so compare
# rightly calls neither side MPI: assert it lined up both inputs at every size, 0..4096 B.
grep -q '^# \[1\] osu_latency.txt' "$TMP/mpi/compare.txt" && grep -q '^# \[2\] rdmabench_lat.json' "$TMP/mpi/compare.txt" ||
  fail "mpi: compare did not read both inputs: $(cat "$TMP/mpi/compare.txt")"
rows=$(grep -cE '^ +[0-9]+ +[0-9.]+ +[0-9.]+ +-?[0-9.]+ ' "$TMP/mpi/compare.txt" || true)
[ "$rows" = 14 ] || fail "mpi: compare lined up $rows sizes, expected 14 (0..4096): $(cat "$TMP/mpi/compare.txt")"
pass "mpi_overhead.sbatch: osu_latency (stand-in) under srun, rdmabench lat across 2 nodes, compare at 14 sizes"

ok_job sharp
grep -q "SHARP: not available on this system (not built: this rdmabench has no SHARP backend" "$TMP/sharp.out" || fail "sharp: $(cat "$TMP/sharp.out")"
grep -q "2 ranks on 2 nodes" "$TMP/sharp.out" || fail "sharp: no barrier over 2 nodes: $(cat "$TMP/sharp.out")"
pass "sharp_check.sbatch: dissemination barrier, SHARP absent said cleanly"
if [ -x "$SHARP_RB" ] && [ -f "$SHARP_LIB" ]; then
  ok_job sharp2
  grep -q "== barrier, --algo sharp (in-network)" "$TMP/sharp2.out" || fail "sharp2: $(cat "$TMP/sharp2.out")"
  grep -Eq '^ +[0-9]+ +2 +sharp ' "$TMP/sharp2.out" || fail "sharp2: no sharp barrier row over 2 ranks: $(cat "$TMP/sharp2.out")"
  pass "sharp_check.sbatch with the stand-in libsharp_coll: dissemination, then --algo sharp"
fi
