# `srun -n 4 rdmabench pairs` on a throw-away Slurm (ci/slurm-cluster: slurmctld + 2 slurmd on
# this host, emulated nodes n1, n2 with NodeAddr 127.0.0.1): the matrix has all 12 ordered
# pairs, named by the Slurm node names, and the header says 4 ranks on 2 nodes.
source "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
  [ "${CI:-}" = true ] && fail "CI must run as root (Slurm daemons)"
  skip "needs root to run slurmctld/slurmd"
fi
CLUSTER="$SRC/ci/slurm-cluster"

timeout 300 "$CLUSTER" -N 2 -c 2 -- bash -c "
  set -e
  timeout 120 srun -N 2 -n 4 '$RB' pairs -n 200 --warmup 10 --bw-size 64K -w 4 --bw-iters 3 \
    -f json -o '$TMP/pairs.json'
" >"$TMP/out" 2>&1 || fail "srun pairs failed: $(tail -n 30 "$TMP/out")"

json_check "$TMP/pairs.json" "d['run']['extra']['ranks']==4 and d['run']['extra']['nodes']==2 and d['run']['extra']['launch']=='slurm' and len(d['links'])==12 and all(l['mb_per_s']>0 and l['lat_median_us']>0 for l in d['links']) and {r['host'] for r in d['ranks']}=={'n1','n2'}"
pass "srun -N 2 -n 4 rdmabench pairs: 12 ordered pairs on nodes n1, n2"
