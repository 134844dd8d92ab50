# Issue 22, items 4-7: the N-rank commands' launch rules.
#  4. the derived run id covers only what defines the measurement: ranks started by hand with
#     different --bind (and output options, --timeout) form one run; a rank with another
#     measurement is refused, and the others fail at once naming the refusal and its reason;
#  5. the default transport is lat/bw's rule (verbs where usable, else socket), said in the header;
#  6. a world of 1 without a launcher and without --np is a usage error naming --np, srun, mpirun;
#  7. the --np launcher folds identical error lines of several ranks into one "ranks 0-2 on H".
source "$(dirname "$0")/lib.sh"
# Ranks started by hand: rank 0's store requires a token (docs/rendezvous.md, "Access token").
export RDMABENCH_TOKEN=${RDMABENCH_TOKEN:-systest-$$}

# No launcher environment leaks in from the caller (a CI job under Slurm, say).
CLEAN=(env -u SLURM_PROCID -u SLURM_NTASKS -u SLURM_JOB_ID -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE
  -u PMI_RANK -u PMI_SIZE -u PMIX_RANK -u PMIX_NAMESPACE -u RDMABENCH_RUN_ID)

# 6. World of 1 by accident.
for t in allreduce barrier ring pairs congestion; do
  expect_status 2 "$t: no launcher found and no --np" "${CLEAN[@]}" "$RB" "$t" -n 5
  grep -q -- "--np N" "$TMP/err" && grep -q srun "$TMP/err" && grep -q mpirun "$TMP/err" && grep -q -- "--np 1" "$TMP/err" ||
    fail "$t: the error does not name --np, srun, mpirun and --np 1: $(cat "$TMP/err")"
done
timeout 60 "${CLEAN[@]}" "$RB" barrier --np 1 -n 5 -f json -o "$TMP/one.json" || fail "barrier --np 1"
json_check "$TMP/one.json" "d['run']['extra']['ranks']==1 and len(d['rows'])==1"
timeout 60 "${CLEAN[@]}" "$RB" barrier --rank 0 --world-size 1 -n 5 >/dev/null || fail "--rank 0 --world-size 1"
pass "a world of 1 without a launcher: exit 2 naming --np, srun, mpirun; --np 1 and --world-size 1 run"

# 5. One default transport rule, said in the header.
timeout 60 "${CLEAN[@]}" "$RB" barrier --np 2 -n 5 -f json -o "$TMP/t.json" || fail "barrier default transport"
json_check "$TMP/t.json" "d['run']['extra']['transport_note'].startswith('auto: ' + d['run']['transport'] + ' (')"
if "$RB" info 2>/dev/null | grep -E '^verbs +usable ' >/dev/null; then
  json_check "$TMP/t.json" "d['run']['transport']=='verbs'"
else
  json_check "$TMP/t.json" "d['run']['transport']=='socket' and 'verbs not usable' in d['run']['extra']['transport_note']"
fi
timeout 60 "${CLEAN[@]}" "$RB" barrier --np 2 -n 5 >"$TMP/t.txt" || fail "barrier table"
grep -q "^# extra: .*transport_note=auto: " "$TMP/t.txt" || fail "table header lacks the transport note: $(cat "$TMP/t.txt")"
timeout 60 "${CLEAN[@]}" "$RB" barrier --np 2 -n 5 -t socket -f json -o "$TMP/ts.json" || fail "barrier -t socket"
json_check "$TMP/ts.json" "d['run']['transport']=='socket' and 'transport_note' not in d['run']['extra']"
timeout 120 "${CLEAN[@]}" "$RB" pairs --np 2 -n 5 --bw-size 4K --bw-iters 2 -f json -o "$TMP/p.json" || fail "pairs"
json_check "$TMP/p.json" "d['run']['extra']['transport_note'].startswith('auto: ')"
pass "collectives default to lat/bw's transport rule and say why in the header; -t is kept"

# 4. Hand-started ranks differing in --bind, output options and --timeout share one run id.
PORT=$((20000 + RANDOM % 12000))
B=(barrier --world-size 2 --rendezvous "127.0.0.1:$PORT" -n 5)
timeout 60 "${CLEAN[@]}" "$RB" "${B[@]}" --rank 0 --bind 127.0.0.1 --timeout 20 -f json -o "$TMP/h0.json" 2>"$TMP/h0.err" &
P0=$!
timeout 60 "${CLEAN[@]}" "$RB" "${B[@]}" --rank 1 --bind 127.0.0.2 --timeout 15 -f csv >/dev/null 2>"$TMP/h1.err" ||
  fail "rank 1 with --bind 127.0.0.2: $(cat "$TMP/h1.err")"
wait $P0 || fail "rank 0 with --bind 127.0.0.1: $(cat "$TMP/h0.err")"
json_check "$TMP/h0.json" "d['run']['extra']['ranks']==2 and len(d['rows'])==1"
pass "ranks with different --bind, --timeout and output options form one run"

# A rank with another measurement (-n 7) is refused; the others fail at once, naming it and why.
PORT=$((20000 + RANDOM % 12000))
B=(barrier --world-size 3 --rendezvous "127.0.0.1:$PORT" --timeout 20)
start=$(date +%s)
timeout 60 "${CLEAN[@]}" "$RB" "${B[@]}" --rank 0 -n 5 >/dev/null 2>"$TMP/r0.err" &
P0=$!
timeout 60 "${CLEAN[@]}" "$RB" "${B[@]}" --rank 1 -n 5 >/dev/null 2>"$TMP/r1.err" &
P1=$!
rc2=0
timeout 60 "${CLEAN[@]}" "$RB" "${B[@]}" --rank 2 -n 7 >/dev/null 2>"$TMP/r2.err" || rc2=$?
rc0=0 rc1=0
wait $P0 || rc0=$?
wait $P1 || rc1=$?
took=$(($(date +%s) - start))
[ "$rc0" != 0 ] && [ "$rc1" != 0 ] && [ "$rc2" != 0 ] || fail "exits $rc0 $rc1 $rc2: a refused rank must fail the run"
# Usually 0.2 s. The bound is far below the --timeout of 20 s: a rank that waited for its
# timeout (as rank 1 did before, when rank 0 failed and closed its store before rank 1 was in)
# takes 20 s.
[ "$took" -lt 15 ] || fail "the others took ${took}s to fail (--timeout 20)"
for r in 0 1; do
  grep -q "^rdmabench: error: rank $r on .*rank 2 on host .* was refused by the store: different test description ('barrier --iters=7 --world-size=3'; this run: 'barrier --iters=5 --world-size=3')" "$TMP/r$r.err" ||
    fail "rank $r does not name the refusal: $(cat "$TMP/r$r.err")"
done
grep -q "different test description" "$TMP/r2.err" || fail "the refused rank does not say why: $(cat "$TMP/r2.err")"
pass "a rank with another measurement is refused; ranks 0 and 1 fail in ${took}s, naming it and why"

# The same, with rank 1 started only after rank 2 was refused and rank 0 failed: rank 0 keeps its
# store up for the ranks still to come, so rank 1 learns why at once (before: "Connection
# refused" until its --timeout, rank 0 having closed the store).
PORT=$((20000 + RANDOM % 12000))
B=(barrier --world-size 3 --rendezvous "127.0.0.1:$PORT" --timeout 20)
start=$(date +%s)
timeout 60 "${CLEAN[@]}" "$RB" "${B[@]}" --rank 0 -n 5 >/dev/null 2>"$TMP/l0.err" &
P0=$!
rc2=0
timeout 60 "${CLEAN[@]}" "$RB" "${B[@]}" --rank 2 -n 7 >/dev/null 2>"$TMP/l2.err" || rc2=$?
for i in $(seq 1 100); do grep -q "was refused" "$TMP/l0.err" && break; sleep 0.1; done
grep -q "was refused" "$TMP/l0.err" || fail "rank 0 did not fail on rank 2's refusal: $(cat "$TMP/l0.err")"
rc1=0
timeout 60 "${CLEAN[@]}" "$RB" "${B[@]}" --rank 1 -n 5 >/dev/null 2>"$TMP/l1.err" || rc1=$?
rc0=0
wait $P0 || rc0=$?
took=$(($(date +%s) - start))
[ "$rc0" != 0 ] && [ "$rc1" != 0 ] && [ "$rc2" != 0 ] || fail "exits $rc0 $rc1 $rc2: a refused rank must fail the run"
grep -q "^rdmabench: error: rank 1 on .*rank 2 on host .* was refused by the store: different test description" "$TMP/l1.err" ||
  fail "rank 1, started late, does not name the refusal: $(cat "$TMP/l1.err")"
[ "$took" -lt 15 ] || fail "rank 0 and the late rank 1 took ${took}s (--timeout 20)"
pass "a rank started after the run failed finds rank 0's store and the reason (${took}s)"

# A rank whose store never listens names who serves a store, not `rdmabench server`.
PORT=$((20000 + RANDOM % 12000))
rc=0
timeout 60 "${CLEAN[@]}" "$RB" barrier --world-size 2 --rendezvous "127.0.0.1:$PORT" --rank 1 --timeout 1 -n 5 \
  >/dev/null 2>"$TMP/nostore.err" || rc=$?
[ "$rc" != 0 ] || fail "rank 1 without a store exited 0"
grep -q "rendezvous store 127.0.0.1:$PORT: nothing listened there for 1.0 s (rank 0 serves the store" "$TMP/nostore.err" ||
  fail "no store: $(cat "$TMP/nostore.err")"
! grep -q "rdmabench server" "$TMP/nostore.err" || fail "no store: names rdmabench server: $(cat "$TMP/nostore.err")"
pass "a rank without a store names who serves one"

# 7. Identical error lines of several --np ranks are printed once: every rank is given a CPU that
# does not exist here, fails with the same line, and the launcher folds them.
rc=0
timeout 60 "${CLEAN[@]}" "$RB" barrier --np 3 --cpu 9999 -n 5 >/dev/null 2>"$TMP/f.err" || rc=$?
[ "$rc" = 2 ] || fail "--cpu 9999 under --np 3: exit $rc: $(cat "$TMP/f.err")"
[ "$(error_ranks "$TMP/f.err")" = "0 1 2" ] || fail "not every rank's error is there: $(cat "$TMP/f.err")"
grep -Eq "^rdmabench: error: ranks [0-9,-]+ on [^:]+: .*--cpu 9999" "$TMP/f.err" || fail "identical lines not folded: $(cat "$TMP/f.err")"
[ "$(grep -c '^rdmabench: error: rank' "$TMP/f.err")" -lt 3 ] || fail "three lines for one error: $(cat "$TMP/f.err")"
pass "identical error lines of the --np ranks are folded: $(grep -m1 '^rdmabench: error: ranks' "$TMP/f.err")"

