# PMIx under a real Slurm (ci/slurm-cluster: emulated nodes n1..n4 on this host):
# `srun --mpi=pmix -N 2 -n 4` allreduce --check and barrier, and the case of issue #15:
# `mpirun -np 4` inside `salloc -N 2`, where every process inherits SLURM_PROCID 0 or 1 of 2
# from mpirun's own step (before: a 2-rank world and "rank 1 joined twice"). Every header must
# name pmix as the rendezvous.
source "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
  [ "${CI:-}" = true ] && fail "CI must run as root (Slurm daemons)"
  skip "needs root to run slurmctld/slurmd"
fi
command -v mpirun >/dev/null || { [ "${CI:-}" = true ] && fail "mpirun missing (ci/install-deps.sh installs openmpi-bin)"; skip "mpirun (openmpi-bin) is not installed"; }
CLUSTER="$SRC/ci/slurm-cluster"

timeout 200 "$CLUSTER" -N 2 -c 2 -- bash -c "
  set -e
  srun --mpi=list 2>&1 | grep -qx '[[:space:]]*pmix' || { echo 'srun --mpi=list has no pmix (slurm-wlm-basic-plugins)'; exit 1; }
  timeout 60 srun --mpi=pmix -N 2 -n 4 '$RB' allreduce -m 4:16K -n 10 --warmup 2 --check --timeout 20 -f json -o '$TMP/ar.json'
  timeout 60 srun --mpi=pmix -N 2 -n 4 '$RB' barrier -n 50 --timeout 20 > '$TMP/barrier.txt'
  timeout 60 salloc -N 2 -n 4 --immediate=10 timeout 50 mpirun --allow-run-as-root --oversubscribe -np 4 '$RB' allreduce -m 4:4K -n 10 --check --timeout 20 -f json -o '$TMP/salloc.json'
" >"$TMP/out" 2>&1 || fail "Slurm runs failed: $(tail -n 30 "$TMP/out")"

json_check "$TMP/ar.json" "d['run']['extra']['ranks']==4 and d['run']['extra']['nodes']==2 and d['run']['extra']['launch']=='pmix' and d['run']['extra']['rendezvous'].startswith('pmix slurm.pmix.') and all(r['collective']['wrong']==0 for r in d['rows'])"
grep -Eq "ranks: 4 ranks on 2 nodes \(n[1-4], n[1-4]\)" "$TMP/barrier.txt" && grep -q "rendezvous=pmix slurm.pmix." "$TMP/barrier.txt" ||
  fail "barrier header: $(cat "$TMP/barrier.txt")"
pass "srun --mpi=pmix -N 2 -n 4: allreduce (checked) and barrier over the pmix rendezvous, 4 ranks on 2 nodes"
json_check "$TMP/salloc.json" "d['run']['extra']['ranks']==4 and d['run']['extra']['launch']=='pmix' and all(r['collective']['wrong']==0 for r in d['rows'])"
pass "mpirun -np 4 inside salloc -N 2 (inherited SLURM_PROCID/NTASKS=2): 4 ranks over pmix, checked"
