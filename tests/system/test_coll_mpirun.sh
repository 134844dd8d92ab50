# Open MPI's mpirun as a pure launcher (rdmabench makes no MPI call): rank, size and rank 0's
# store address come from mpirun's PMIx server (--rendezvous auto picks pmix); allreduce --check
# and barrier with 4 ranks, the header names pmix. Then the contradictory environments of
# docs/rendezvous.md ("Who am I") without any launcher: one exact error line each, no hang, and
# OMPI_COMM_WORLD_* beating inherited SLURM_* (before: "rank 0 joined twice").
source "$(dirname "$0")/lib.sh"
command -v mpirun >/dev/null || { [ "${CI:-}" = true ] && fail "mpirun missing (ci/install-deps.sh installs openmpi-bin)"; skip "mpirun (openmpi-bin) is not installed"; }
# Into a file, not `| grep -q`: grep quits at the first match, and the rest of the help then
# meets a closed pipe (a lost report exits 1, which pipefail turned into this failure under load).
"$RB" allreduce --help >"$TMP/help" || fail "allreduce --help failed"
grep -q "pmix" "$TMP/help" || fail "--help does not mention --rendezvous pmix"
# A clean environment: this test may itself run inside a Slurm job or an mpirun.
CLEAN=(env -i PATH="$PATH" HOME="${HOME:-/root}" TMPDIR=/tmp)
# As root mpirun needs --allow-run-as-root; --oversubscribe: 4 ranks on 2 cores. Nothing else is
# needed here (the ranks talk over our own TCP store and transport, not Open MPI's BTLs).
MPIRUN=(timeout 60 mpirun --allow-run-as-root --oversubscribe -np 4)

if ! "${CLEAN[@]}" "${MPIRUN[@]}" true >"$TMP/probe" 2>&1; then
  fail "mpirun -np 4 true does not work here: $(tail -n 5 "$TMP/probe")"
fi

"${CLEAN[@]}" "${MPIRUN[@]}" "$RB" allreduce -m 4:64K -n 20 --warmup 2 --check --timeout 20 \
  -f json -o "$TMP/ar.json" >"$TMP/out" 2>&1 || fail "mpirun allreduce: $(tail -n 20 "$TMP/out")"
json_check "$TMP/ar.json" "d['run']['extra']['ranks']==4 and d['run']['extra']['launch']=='pmix' and d['run']['extra']['rendezvous'].startswith('pmix ') and ' (tcp ' in d['run']['extra']['rendezvous'] and d['run']['extra']['check'] and len(d['rows'])==15 and all(r['collective']['wrong']==0 for r in d['rows'])"
pass "mpirun -np 4 allreduce --check: pmix rendezvous, 4 ranks, no wrong element"

"${CLEAN[@]}" "${MPIRUN[@]}" "$RB" barrier -n 50 --timeout 20 >"$TMP/barrier.txt" 2>&1 ||
  fail "mpirun barrier: $(tail -n 20 "$TMP/barrier.txt")"
grep -Eq "launch=pmix" "$TMP/barrier.txt" && grep -Eq "rendezvous=pmix [0-9]+ \(tcp [0-9.]+:[0-9]+\)" "$TMP/barrier.txt" ||
  fail "barrier table header does not name the pmix rendezvous: $(head -n 20 "$TMP/barrier.txt")"
pass "mpirun -np 4 barrier: the table header names the pmix rendezvous"

# A rank that never reaches the PMIx fence (MPMD: the second "rank" is sleep): rank 0 gives up
# after --timeout naming the fence (the server's PMIX_TIMEOUT or rdmabench's own deadline,
# whichever ends it first), exit status 3 (timeout), and mpirun ends the job.
rc=0
"${CLEAN[@]}" timeout 30 mpirun --allow-run-as-root --oversubscribe -np 1 "$RB" barrier --timeout 3 : -np 1 sleep 20 \
  >"$TMP/fence.out" 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "fence timeout: exit status $rc, expected 3: $(cat "$TMP/fence.out")"
grep -Eq "^rdmabench: error: rank 0 on .*(the PMIx server ended the fence|waited 3.0 s in the PMIx fence) of namespace '[^']+' \(2 ranks\) for rank 0's rendezvous store address.*a rank never reached it" "$TMP/fence.out" ||
  fail "fence timeout message: $(cat "$TMP/fence.out")"
pass "a rank that never reaches the PMIx fence: rank 0 gives up after --timeout naming the fence"

# --- contradictory or mixed environments, no launcher: exact one-line errors -------------------
expect_status 2 "rdmabench: error: contradictory launcher environment: PMIX_RANK=0 but OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2; both claim to have started this process (unset the stale ones, or give --rank/--world-size)" \
  "${CLEAN[@]}" PMIX_RANK=0 PMIX_NAMESPACE=stale OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 "$RB" barrier
expect_status 2 "rdmabench: error: --rendezvous pmix: no PMIx server started this process (PMIX_NAMESPACE unset, PMIX_RANK unset); run it under \`srun --mpi=pmix\`, mpirun or prterun" \
  "${CLEAN[@]}" "$RB" allreduce --rendezvous pmix
SALLOC_ENV=(SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_LOCALID=0 SLURM_JOB_ID=9 SLURM_STEP_ID=0 SLURM_STEP_NODELIST=localhost)
expect_status 2 "rdmabench: error: launched by mpirun (OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2; ignoring the inherited SLURM_PROCID=0 SLURM_NTASKS=2): give --rendezvous pmix (needs a PMIx server), HOST:PORT (the host of rank 0) or file:DIR" \
  "${CLEAN[@]}" "${SALLOC_ENV[@]}" OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 "$RB" barrier
# Stale PMIx variables (no server behind them): PMIx_Init fails at once, one line.
expect_error "rdmabench: error: PMIx_Init: UNREACHABLE (PMIX_NAMESPACE=bogus, PMIX_RANK=1: no PMIx server answers; stale variables from an enclosing launcher?)" \
  "${CLEAN[@]}" PMIX_RANK=1 PMIX_NAMESPACE=bogus "$RB" barrier
pass "contradictory environments: one exact error line each, exit 2; stale PMIx variables: one line"

# Env only: OMPI ranks 0 and 1 of 2 that both inherited SLURM_PROCID=0 SLURM_NTASKS=2 run as
# ranks 0 and 1 (Open MPI's variables win), through an explicit store address. Identical command
# lines (only rank 0 writes -o): the run id is a hash of the command line.
PORT=$((20000 + RANDOM % 12000))
for r in 0 1; do
  "${CLEAN[@]}" "${SALLOC_ENV[@]}" OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=2 \
    timeout 60 "$RB" allreduce --rendezvous "tcp://127.0.0.1:$PORT" -m 4:4K -n 5 --check --timeout 20 \
    -f json -o "$TMP/env.json" >"$TMP/env$r.out" 2>&1 &
  eval "PID$r=\$!"
done
wait "$PID0" || fail "rank 0 (OMPI_COMM_WORLD_RANK=0, inherited SLURM_PROCID=0): $(cat "$TMP/env0.out")"
wait "$PID1" || fail "rank 1 (OMPI_COMM_WORLD_RANK=1, inherited SLURM_PROCID=0): $(cat "$TMP/env1.out")"
json_check "$TMP/env.json" "d['run']['extra']['ranks']==2 and d['run']['extra']['launch']=='openmpi' and d['run']['extra']['rendezvous']=='tcp 127.0.0.1:$PORT' and all(r['collective']['wrong']==0 for r in d['rows'])"
pass "OMPI_COMM_WORLD_RANK 0/1 of 2 beat an inherited SLURM_PROCID=0 of 2: one run of 2 ranks, checked"
