# A real Slurm (ci/slurm-cluster: slurmctld + 2-4 slurmd on this host, emulated nodes n1..n4
# with NodeAddr 127.0.0.1 that do not resolve in DNS): srun -N 2 -n 4 rdmabench allreduce and
# ring; rank 0 must report 4 ranks on 2 nodes. Rank 0's address comes from Slurm's NodeAddr.
source "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
  [ "${CI:-}" = true ] && fail "CI must run as root (Slurm daemons)"
  skip "needs root to run slurmctld/slurmd"
fi
CLUSTER="$SRC/ci/slurm-cluster"

timeout 300 "$CLUSTER" -N 4 -c 2 -- bash -c "
  set -e
  timeout 120 srun -N 2 -n 4 '$RB' allreduce -m 4:64K -n 20 --warmup 2 --check -f json -o '$TMP/ar.json'
  timeout 120 srun -N 2 -n 4 '$RB' ring -n 200 --warmup 10 -f json -o '$TMP/ring.json'
  timeout 120 srun -N 2 -n 4 '$RB' barrier -n 50 > '$TMP/barrier.txt'
" >"$TMP/out" 2>&1 || fail "srun runs failed: $(tail -n 30 "$TMP/out")"

json_check "$TMP/ar.json" "d['run']['extra']['ranks']==4 and d['run']['extra']['nodes']==2 and d['run']['extra']['launch']=='slurm' and all(r['collective']['wrong']==0 for r in d['rows'])"
json_check "$TMP/ring.json" "len(d['rows'])==8 and len({r['link']['src_host'] for r in d['rows']})==2"
grep -Eq "ranks: 4 ranks on 2 nodes \(n[1-4], n[1-4]\)" "$TMP/barrier.txt" || fail "barrier header: $(cat "$TMP/barrier.txt")"
pass "srun -N 2 -n 4: allreduce (checked), ring and barrier; rank 0 reports 4 ranks on 2 nodes"
