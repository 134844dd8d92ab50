# The fabric-wide commands under the real launchers, with one throw-away Slurm start
# (ci/slurm-cluster: emulated nodes n1, n2 on this host) for all of them: Open MPI's
# `mpirun -np 4` (a pure launcher: identity and rank 0's store address come from its PMIx
# server), `srun --mpi=pmix -N 2 -n 4` and plain `srun -N 2 -n 4` (identity from SLURM_*, the
# store on a job-derived port). Each run's header must name 4 ranks, the launcher's hosts and
# the rendezvous; each command then has its own checks (check_pairs, check_congestion).
# To cover one more command: one `run_under "$launcher" CMD ARGS...` line in the loop at the end
# (plus a check_CMD for what only that command reports).
source "$(dirname "$0")/lib.sh"

if [ -z "${FABRIC_LAUNCHERS_IN_CLUSTER:-}" ]; then
  if [ "$(id -u)" != 0 ]; then
    [ "${CI:-}" = true ] && fail "CI must run as root (Slurm daemons)"
    skip "needs root to run slurmctld/slurmd"
  fi
  command -v mpirun >/dev/null || { [ "${CI:-}" = true ] && fail "mpirun missing (ci/install-deps.sh installs openmpi-bin)"; skip "mpirun (openmpi-bin) is not installed"; }
  # This script again, inside the cluster (SLURM_CONF exported): runs and checks everything.
  rc=0
  FABRIC_LAUNCHERS_IN_CLUSTER=1 timeout 300 "$SRC/ci/slurm-cluster" -N 2 -c 2 -- \
    bash "$0" "$RB" || rc=$?
  [ "$rc" = 0 ] || fail "inside the Slurm cluster (exit status $rc; 124 = the 300 s bound)"
  exit 0
fi

# A clean environment: this test may itself run inside a Slurm job or an mpirun.
CLEAN=(env -i PATH="$PATH" HOME="${HOME:-/root}" TMPDIR=/tmp SLURM_CONF="$SLURM_CONF")
# mpirun as root needs --allow-run-as-root; --oversubscribe: 4 ranks on 2 cores.
LAUNCHER_mpirun=(timeout 60 mpirun --allow-run-as-root --oversubscribe -np 4)
LAUNCHER_srun_pmix=(timeout 60 srun --mpi=pmix -N 2 -n 4)
LAUNCHER_srun=(timeout 60 srun --mpi=none -N 2 -n 4)

# run_under LAUNCHER CMD ARGS...: `rdmabench CMD ARGS` under LAUNCHER (mpirun | srun_pmix |
# srun), JSON to $TMP/LAUNCHER.CMD.json; asserts what every command's header says about the
# launch: 4 ranks, the launcher's hosts by rank (mpirun: this host; srun: the emulated nodes n1,
# n1, n2, n2) and the rendezvous: "pmix NAMESPACE (tcp ADDR:PORT)" under PMIx, "tcp ADDR:PORT"
# with launch "slurm" under plain srun.
run_under() {
  local launcher=$1 cmd=$2; shift 2
  local -n argv="LAUNCHER_$launcher"
  local out="$TMP/$launcher.$cmd"
  "${CLEAN[@]}" "${argv[@]}" "$RB" "$cmd" --timeout 20 "$@" -f json -o "$out.json" \
    >"$out.log" 2>&1 || fail "$launcher $cmd: $(tail -n 20 "$out.log")"
  # mpirun's PMIx namespaces are numbers, srun's slurm.pmix.JOB.STEP.
  local hosts="['$(hostname)']*4" nodes=1 launch=pmix rv='pmix [0-9]+ \(tcp [0-9.]+:[0-9]+\)'
  case $launcher in
  srun_pmix) hosts="['n1','n1','n2','n2']" nodes=2 rv='pmix slurm[.]pmix[.][0-9]+[.][0-9]+ \(tcp [0-9.]+:[0-9]+\)' ;;
  srun) hosts="['n1','n1','n2','n2']" nodes=2 launch=slurm rv='tcp [0-9.]+:[0-9]+' ;;
  esac
  json_check "$out.json" "d['run']['extra']['ranks']==4 and d['run']['extra']['nodes']==$nodes and d['run']['extra']['launch']=='$launch' and __import__('re').fullmatch(r'$rv', d['run']['extra']['rendezvous']) and ([r['host'] for r in d['ranks']] if 'ranks' in d else [q['node'].split(' ')[0] for q in d['split']['placement']])==$hosts"
}

# pairs: all 12 ordered pairs measured.
check_pairs() {
  json_check "$TMP/$1.pairs.json" "len(d['links'])==12 and len({(l['src'],l['dst']) for l in d['links']})==12 and all(l['mb_per_s']>0 and l['lat_median_us']>0 for l in d['links'])"
}

# congestion: 2 victims, 2 aggressors, both metrics with finite factors > 0 (the two emulated nodes
# share one host: the figures prove the mechanics only).
check_congestion() {
  json_check "$TMP/$1.congestion.json" "d['run']['test']=='congestion' and d['run']['extra']['victims']==2 and d['run']['extra']['aggressors']==2 and len(d['metrics'])==2 and all(m[ph][q]>0 and m[ph][q]<1e12 for m in d['metrics'] for ph in ('isolated','congested','impact') for q in ('p50','p99'))"
}

PAIRS=(-n 100 --warmup 5 --bw-size 16K -w 2 --bw-iters 2)
CONGESTION=(--victims 0.5 -n 100 --warmup 5 --bw-size 16K --bw-iters 4 --window 2 --agg-size 16K)
srun --mpi=list 2>&1 | grep -qx '[[:space:]]*pmix' || fail "srun --mpi=list has no pmix (slurm-wlm-basic-plugins, libpmix2)"
for launcher in mpirun srun_pmix srun; do
  run_under "$launcher" pairs "${PAIRS[@]}"
  check_pairs "$launcher"
  pass "$launcher: pairs, 4 ranks, 12 ordered pairs, rendezvous and hosts named"
  run_under "$launcher" congestion "${CONGESTION[@]}"
  check_congestion "$launcher"
  pass "$launcher: congestion, 2 victims / 2 aggressors, finite impact factors"
done
