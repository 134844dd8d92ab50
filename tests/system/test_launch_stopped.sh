# The --np launcher (#12): a rank stopped with SIGSTOP mid-run. The other ranks time out naming
# a peer; the launcher then ends the stopped rank (SIGTERM + SIGCONT, SIGKILL after a grace
# period), names it on one line and exits non-zero. Before the fix it waited forever.
source "$(dirname "$0")/lib.sh"

timeout 90 "$RB" allreduce --np 4 -s 1K -n 100000000 --timeout 3 >"$TMP/s.out" 2>"$TMP/s.err" &
LAUNCHER=$!
CLEANUP+=("kill -9 $LAUNCHER")
RBPID=
for i in $(seq 1 200); do
  RBPID=$(pgrep -P "$LAUNCHER" -x rdmabench | head -1 || true)
  [ -n "$RBPID" ] && [ "$(pgrep -P "$RBPID" | wc -l)" = 4 ] && break
  sleep 0.05
done
[ -n "$RBPID" ] || fail "launcher did not start"
sleep 1
VICTIM=$(pgrep -P "$RBPID" | sed -n 3p)
[ -n "$VICTIM" ] || fail "no rank processes found"
CLEANUP+=("kill -9 $VICTIM")
start=$(date +%s)
kill -STOP "$VICTIM"
rc=0
wait "$LAUNCHER" || rc=$?
took=$(($(date +%s) - start))
[ "$rc" != 124 ] || fail "launcher hung with a stopped rank: $(cat "$TMP/s.err")"
[ "$rc" != 0 ] || fail "exit 0 with a stopped rank"
# --timeout 3 for the survivors + 3 s grace before SIGKILL; generous margin for a loaded machine.
[ "$took" -le 30 ] || fail "took ${took}s (timeout 3 s): $(cat "$TMP/s.err")"
grep -Eq "rdmabench: error: launcher: rank 2 \(pid $VICTIM\) is stopped \(SIGSTOP\) while the run has failed: sent SIGTERM to rank\(s\) 2" "$TMP/s.err" \
  || fail "launcher line does not name the stopped rank 2: $(cat "$TMP/s.err")"
[ "$(grep -c 'rdmabench: error: launcher' "$TMP/s.err")" = 1 ] || fail "not one launcher line: $(cat "$TMP/s.err")"
! kill -0 "$VICTIM" 2>/dev/null || fail "stopped rank $VICTIM still alive"
pass "stopped rank 2 ended and named after ${took}s (exit $rc)"
