# Issue 24 item 5: congestion with 8 ranks started by hand (--rank, rank 0 hosting the store,
# --timeout 3); an aggressor (rank 2) is killed while the victims measure their ring. Victims
# exchange only with each other, so their completions keep flowing and the stall watchdog never
# runs: before, they went on measuring (still at 116 s) and never named rank 2. Now every rank
# asks the store about dead peers every 100 ms while busy: every survivor exits within --timeout
# + a margin, non-zero, its one error line naming rank 2, and the victims' lines say they were
# measuring ("during isolated: ring ...").
source "$(dirname "$0")/lib.sh"
# Ranks started by hand: rank 0's store requires a token (docs/rendezvous.md, "Access token").
export RDMABENCH_TOKEN=${RDMABENCH_TOKEN:-systest-$$}

N=8 TO=3 MARGIN=12
small=(-n 20 --warmup 2 --bw-size 1K --bw-iters 2 --window 1 --agg-size 1K --timeout 20)
# Which ranks are victims for this seed (the split depends on the seed and the ranks only).
timeout 120 "$RB" congestion --np $N --seed 1 "${small[@]}" -f json -o "$TMP/plan.json" \
  2>"$TMP/plan.err" || fail "congestion --np $N: $(cat "$TMP/plan.err")"
read -r victims killed < <(python3 -c "
import json
s = json.load(open('$TMP/plan.json'))['split']
v = s['victims']
k = 2 if 2 not in v else [a for a in s['aggressors'] if a != 0][0]
print(','.join(map(str, v)), k)")
[ -n "$killed" ] || fail "no aggressor to kill: $(cat "$TMP/plan.json")"

PORT=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
# Measurements long enough (minutes) that the victims are still busy when the aggressor dies.
args=(congestion --world-size $N --rendezvous 127.0.0.1:$PORT --seed 1 -n 5000000 --warmup 10
  --bw-size 1K --bw-iters 1000000 --window 1 --agg-size 1K -e on --timeout $TO -f json)
for r in $(seq 0 $((N - 1))); do
  (
    if [ "$r" = "$killed" ]; then
      export RDMABENCH_TEST_HOLD=isolated@$r RDMABENCH_TEST_HOLD_MS=30000
    fi
    "$RB" "${args[@]}" --rank "$r" >"$TMP/out.$r" 2>"$TMP/err.$r" &
    echo $! >"$TMP/pid.$r"
    rc=0
    wait $! || rc=$?
    echo "$rc $(date +%s.%N)" >"$TMP/rc.$r.tmp"
    mv "$TMP/rc.$r.tmp" "$TMP/rc.$r"
  ) &
  CLEANUP+=("kill -9 \$(cat $TMP/pid.$r)")
done
for _ in $(seq 1 900); do
  grep -q "holding at isolated" "$TMP/err.$killed" 2>/dev/null && break
  sleep 0.1
done
pid=$(sed -n 's/.*test hook: pid \([0-9]*\) holding at isolated.*/\1/p' "$TMP/err.$killed" | head -1)
[ -n "$pid" ] || fail "rank $killed never reached the isolated phase: $(cat "$TMP"/err.*)"
CLEANUP+=("kill -9 $pid")
sleep 1  # the victims are in their ring exchange now
t0=$(date +%s.%N)
kill -9 "$pid"
deadline=$(python3 -c "print($t0 + $TO + $MARGIN)")
while :; do
  missing=""
  for r in $(seq 0 $((N - 1))); do
    [ "$r" = "$killed" ] || [ -e "$TMP/rc.$r" ] || missing="$missing $r"
  done
  [ -z "$missing" ] && break
  python3 -c "import sys, time; sys.exit(time.time() > $deadline)" || break
  sleep 0.1
done
[ -z "$missing" ] ||
  fail "rank(s)$missing (victims: $victims) still running $((TO + MARGIN)) s after aggressor rank $killed was killed (--timeout $TO): $(cat "$TMP"/err.*)"
for r in $(seq 0 $((N - 1))); do
  [ "$r" = "$killed" ] && continue
  read -r rc at <"$TMP/rc.$r"
  line=$(grep '^rdmabench: error:' "$TMP/err.$r" || true)
  [ "$rc" != 0 ] || fail "rank $r exit 0 after rank $killed died: $(cat "$TMP/err.$r")"
  [ "$(echo "$line" | grep -c .)" = 1 ] || fail "rank $r: not one error line: $(cat "$TMP/err.$r")"
  echo "$line" | grep -q "rank $killed on host [^ ]* died" ||
    fail "rank $r does not name the dead rank $killed: $line"
  took=$(python3 -c "print(f'{$at - $t0:.1f}')")
  echo "  rank $r: exit $rc after $took s: ${line#rdmabench: error: }"
done
for v in ${victims//,/ }; do
  grep -q "during isolated: ring" "$TMP/err.$v" ||
    fail "victim $v was not measuring when rank $killed died: $(cat "$TMP/err.$v")"
done
pass "aggressor rank $killed killed while victims $victims measured: all $((N - 1)) others exit within $((TO + MARGIN)) s naming it"
