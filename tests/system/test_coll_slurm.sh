# A real Slurm (ci/slurm-cluster: slurmctld + 2-4 slurmd on this host, emulated nodes n1..n4
# with NodeAddr 127.0.0.1 that do not resolve in DNS): srun -N 2 -n 4 rdmabench allreduce and
# ring; rank 0 must report 4 ranks on 2 nodes. Rank 0's address comes from Slurm's NodeAddr.
source "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
  [ "${CI:-}" = true ] && fail "CI must run as root (Slurm daemons)"
  skip "needs root to run slurmctld/slurmd"
fi
CLUSTER="$SRC/ci/slurm-cluster"

# The store's default token under Slurm is the job's secret in a file only the user can read
# (#36; it was a hash of the job id, cluster name and user id, which anyone can compute): every
# rank of the job reads it from the shared $RDMABENCH_TOKEN_DIR. A process in the job's step that
# cannot read it (rank 1 looking in another directory: a stranger's view) is refused at the
# store's hello.
mkdir -m 700 "$TMP/tokens" "$TMP/stranger"
timeout 300 "$CLUSTER" -N 4 -c 2 -- bash -c "
  set -e
  export RDMABENCH_TOKEN_DIR='$TMP/tokens'
  rc=0
  timeout 60 srun -N 2 -n 2 bash -c '[ \$SLURM_PROCID = 1 ] && export RDMABENCH_TOKEN_DIR=$TMP/stranger
    exec $RB barrier -n 20 --timeout 10' >'$TMP/stranger.out' 2>&1 || rc=\$?
  [ \$rc != 0 ] || { echo 'the rank without the job secret was admitted'; exit 1; }
  timeout 120 srun -N 2 -n 4 '$RB' allreduce -m 4:64K -n 20 --warmup 2 --check -f json -o '$TMP/ar.json'
  timeout 120 srun -N 2 -n 4 '$RB' ring -n 200 --warmup 10 -f json -o '$TMP/ring.json'
  timeout 120 srun -N 2 -n 4 '$RB' barrier -n 50 > '$TMP/barrier.txt'
" >"$TMP/out" 2>&1 || fail "srun runs failed: $(tail -n 30 "$TMP/out")"
grep -q "access refused: wrong token" "$TMP/stranger.out" ||
  fail "rank 1 without the job's secret: $(tail -n 5 "$TMP/stranger.out")"
ls "$TMP/tokens" | grep -q '^slurm-.*\.token$' || fail "no job secret in \$RDMABENCH_TOKEN_DIR: $(ls -la "$TMP/tokens")"
[ "$(stat -c %a "$TMP"/tokens/slurm-*.token | sort -u)" = 600 ] || fail "job secret not mode 600: $(ls -la "$TMP/tokens")"

json_check "$TMP/ar.json" "d['run']['extra']['ranks']==4 and d['run']['extra']['nodes']==2 and d['run']['extra']['launch']=='slurm' and all(r['collective']['wrong']==0 for r in d['rows'])"
json_check "$TMP/ring.json" "len(d['rows'])==8 and len({r['link']['src_host'] for r in d['rows']})==2"
grep -Eq "ranks: 4 ranks on 2 nodes \(n[1-4], n[1-4]\)" "$TMP/barrier.txt" || fail "barrier header: $(cat "$TMP/barrier.txt")"
pass "srun -N 2 -n 4: allreduce (checked), ring and barrier; rank 0 reports 4 ranks on 2 nodes"
pass "Slurm: the ranks share the job's secret (mode 600); a rank without it is refused"
