# --clock on the N-rank commands (issue #26): the clock asked for is the one every rank's timed
# loop reads and the one the header reports (JSON run.clock, the table's clock: line, the CSV
# columns); an unknown clock is refused with lat/bw's one-line error and exit status 2, before
# any rank starts.
source "$(dirname "$0")/lib.sh"
# Ranks started by hand: rank 0's store requires a token (docs/rendezvous.md, "Access token").
export RDMABENCH_TOKEN=${RDMABENCH_TOKEN:-systest-$$}

timeout 60 "$RB" allreduce -t socket -e on --np 2 -s 8 -n 5 --warmup 1 --clock monotonic \
  -f json -o "$TMP/ar.json" || fail "allreduce --clock monotonic"
json_check "$TMP/ar.json" "d['run']['clock']['requested']=='monotonic' and d['run']['clock']['used']=='monotonic' and 'tsc_ghz' not in d['run']['clock'] and d['run']['clock']['read_cost_ns']>0"
timeout 60 "$RB" barrier -t socket -e on --np 2 -n 5 --warmup 1 --clock monotonic -f csv \
  >"$TMP/b.csv" || fail "barrier --clock monotonic"
python3 -c "import csv; r=list(csv.DictReader(open('$TMP/b.csv'))); assert r and all(x['clock']=='monotonic' for x in r), r" \
  || fail "barrier csv clock column: $(cat "$TMP/b.csv")"
pass "allreduce json and barrier csv: used=monotonic"

for cmd in ring pairs congestion; do
  args=(-n 5 --warmup 1)
  [ "$cmd" = pairs ] && args+=(--bw-iters 1 --bw-size 4K)
  [ "$cmd" = congestion ] && args+=(--victims 0.5 --bw-iters 1 --bw-size 4K --agg-size 4K)
  np=2
  [ "$cmd" = congestion ] && np=4
  timeout 120 "$RB" "$cmd" -t socket -e on --np "$np" "${args[@]}" --clock monotonic \
    >"$TMP/$cmd.txt" || fail "$cmd --clock monotonic"
  grep -q "^# clock: clock_gettime(CLOCK_MONOTONIC), one read .* ns; kernel clocksource .*--clock monotonic" "$TMP/$cmd.txt" \
    || fail "$cmd: no monotonic clock line: $(head -12 "$TMP/$cmd.txt")"
done
pass "ring, pairs, congestion tables: clock: CLOCK_MONOTONIC"

# Ranks started by hand (no --np launcher): each selects the clock itself before measuring.
PORT=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
CLEAN=(env -u SLURM_PROCID -u SLURM_NTASKS -u SLURM_JOB_ID -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE
  -u PMI_RANK -u PMI_SIZE -u PMIX_RANK -u PMIX_NAMESPACE -u RDMABENCH_RUN_ID)
B=(barrier -t socket -e on --world-size 2 --rendezvous "127.0.0.1:$PORT" -n 5 --warmup 1 --clock monotonic)
timeout 60 "${CLEAN[@]}" "$RB" "${B[@]}" --rank 0 \
  -f json -o "$TMP/h0.json" 2>"$TMP/h0.err" &
P0=$!
timeout 60 "${CLEAN[@]}" "$RB" "${B[@]}" --rank 1 \
  >/dev/null 2>"$TMP/h1.err" || fail "rank 1 by hand: $(cat "$TMP/h1.err")"
wait $P0 || fail "rank 0 by hand: $(cat "$TMP/h0.err")"
json_check "$TMP/h0.json" "d['run']['extra']['launch']!='np' and d['run']['clock']['used']=='monotonic'"
pass "ranks started by hand: used=monotonic"

# The TSC where there is one (x86-64 with a calibrating TSC); elsewhere --clock tsc is refused
# with a one-line usage error naming why, which is also checked.
if timeout 60 "$RB" barrier -t socket -e on --np 2 -n 5 --warmup 1 --clock tsc -f json \
  -o "$TMP/b.json" 2>"$TMP/tsc.err"; then
  json_check "$TMP/b.json" "d['run']['clock']['requested']=='tsc' and d['run']['clock']['used']=='tsc' and d['run']['clock']['tsc_ghz']>0"
  pass "barrier --clock tsc: used=tsc"
else
  rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l <"$TMP/tsc.err")" = 1 ] && grep -q "^rdmabench: error: --clock tsc" "$TMP/tsc.err" \
    || fail "barrier --clock tsc: exit $rc: $(cat "$TMP/tsc.err")"
  pass "barrier --clock tsc refused here: $(cat "$TMP/tsc.err")"
fi

for cmd in barrier allreduce ring pairs congestion; do
  rc=0
  timeout 30 "$RB" "$cmd" --np 2 --clock bogus >"$TMP/out" 2>"$TMP/err" || rc=$?
  [ "$rc" = 2 ] || fail "$cmd --clock bogus: exit $rc, not 2: $(cat "$TMP/err")"
  [ "$(cat "$TMP/err")" = "rdmabench: error: --clock bogus: unknown clock (valid: auto, tsc, monotonic)" ] \
    || fail "$cmd --clock bogus: $(cat "$TMP/err")"
  [ ! -s "$TMP/out" ] || fail "$cmd --clock bogus wrote a report: $(cat "$TMP/out")"
done
pass "--clock bogus: one-line error, exit 2, on every N-rank command"
