# Issue 24 items 7 and 8 (collectives): memory that grew with the run, and barrier errors that
# always said "during connect".
# 1. `barrier -n 50000000` by hand (--rank): allreduce and barrier kept every iteration's time
#    (8 B per iteration per rank, reserved up front: 400 MB here); now a rank buffers 16384 times
#    and folds them into rank 0's bounded histogram. Rank 1's data segment (VmData, which counts
#    a reservation at once) stays below 100 MB and does not grow while it measures.
# 2. Ctrl-C of both ranks mid-measurement: exit 4, and the line says "during barrier, measuring".
# 3. A rank killed at the barrier's measured iterations: the others name it and the phase.
# 4. allreduce --check over more iterations than a rank buffers (the buffered times are reduced
#    through the data area mid-run, the input is written again): no wrong element, every
#    iteration counted.
source "$(dirname "$0")/lib.sh"
# Ranks started by hand: rank 0's store requires a token (docs/rendezvous.md, "Access token").
export RDMABENCH_TOKEN=${RDMABENCH_TOKEN:-systest-$$}

vmdata_kb() { sed -n 's/^VmData:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }

PORT=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
args=(barrier --world-size 2 --rendezvous 127.0.0.1:$PORT -n 50000000 --warmup 10 --timeout 10 -e on)
pids=()
for r in 0 1; do
  env --default-signal=INT "$RB" "${args[@]}" --rank $r >"$TMP/out.$r" 2>"$TMP/err.$r" &
  pids+=($!)
  CLEANUP+=("kill -9 $!")
done
for _ in $(seq 1 600); do
  [ -s "$TMP/out.0" ] && break
  kill -0 "${pids[1]}" 2>/dev/null || fail "rank 1 ended early: $(cat "$TMP/err.1")"
  sleep 0.1
done
[ -s "$TMP/out.0" ] || fail "no header from rank 0 within 60 s: $(cat "$TMP/err.0" "$TMP/err.1")"
sleep 2
a=$(vmdata_kb "${pids[1]}")
sleep 3
b=$(vmdata_kb "${pids[1]}")
[ -n "$a" ] && [ -n "$b" ] || fail "rank 1 is gone: $(cat "$TMP/err.1")"
[ "$b" -lt 102400 ] || fail "rank 1's VmData is $b kB measuring 50000000 iterations (limit 100 MB)"
[ $((b - a)) -lt 8192 ] || fail "rank 1's VmData grew from $a to $b kB in 3 s of measuring"
pass "barrier -n 50000000: rank 1's VmData $a -> $b kB while measuring"

kill -INT "${pids[0]}" "${pids[1]}"
for r in 0 1; do
  rc=0
  wait "${pids[$r]}" || rc=$?
  [ "$rc" = 4 ] || fail "rank $r: exit $rc after Ctrl-C, expected 4: $(cat "$TMP/err.$r")"
  grep -q "^rdmabench: error: rank $r on [^:]*: .*interrupted (Ctrl-C) during barrier, measuring" "$TMP/err.$r" ||
    fail "rank $r does not name the barrier's measuring phase: $(cat "$TMP/err.$r")"
done
pass "Ctrl-C mid-measurement: exit 4, 'during barrier, measuring' (not 'during connect')"

RDMABENCH_TEST_HOLD=mid-run@2 RDMABENCH_TEST_HOLD_MS=2000 timeout 60 "$RB" barrier --np 4 \
  -n 1000 --warmup 10 --timeout 3 -e on >"$TMP/np.out" 2>"$TMP/np.err" &
launcher=$!
CLEANUP+=("kill -9 $launcher")
for _ in $(seq 1 600); do
  grep -q "holding at mid-run" "$TMP/np.err" && break
  sleep 0.1
done
hold=$(sed -n 's/.*test hook: pid \([0-9]*\) holding at mid-run.*/\1/p' "$TMP/np.err" | head -1)
[ -n "$hold" ] || fail "rank 2 never held at mid-run: $(cat "$TMP/np.err")"
kill -9 "$hold"
rc=0
wait "$launcher" || rc=$?
[ "$rc" != 0 ] || fail "barrier --np 4: exit 0 after rank 2 was killed"
# The launcher folds identical lines ("ranks 0-1,3 on HOST: ..."): unfolded, one per rank.
for r in 0 1 3; do
  unfold_errors "$TMP/np.err" | grep -E "rank $r on [^:]*: .*rank 2 on host [^ ]* died .*during barrier, measuring" >/dev/null ||
    fail "rank $r does not name rank 2 and the phase: $(cat "$TMP/np.err")"
done
grep -q "during connect" "$TMP/np.err" && fail "'during connect' mid-measurement: $(cat "$TMP/np.err")"
pass "rank 2 killed mid-measurement: ranks 0, 1, 3 name it 'during barrier, measuring'"

timeout 300 "$RB" allreduce --np 2 -m 8:8 -n 40000 --warmup 10 --check -e on -f json \
  -o "$TMP/ar.json" 2>"$TMP/ar.err" || fail "allreduce -n 40000 --check: $(cat "$TMP/ar.err")"
json_check "$TMP/ar.json" "d['rows'][0]['iterations']==40000 and d['rows'][0]['collective']['wrong']==0 and 0 < d['rows'][0]['collective']['slowest_p50_us'] <= d['rows'][0]['collective']['slowest_p99_us'] <= d['rows'][0]['collective']['slowest_max_us']"
pass "allreduce -n 40000 --check (buffered times reduced mid-run twice): 0 wrong"
