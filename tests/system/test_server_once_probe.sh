# `rdmabench server --once` runs one test: the first client whose hello passes. A connection that
# ends before a valid hello (a port probe such as `nc -z`, a few bytes then a hang-up, a silent
# one past the 2 s hello deadline, a bad first frame) is logged in at most one line and the
# server waits on for the real client: it counted the probe as its one test and exited 0
# (newcomer trial). Loopback, ~4 s.
source "$(dirname "$0")/lib.sh"
CC="python3 $SRC/tests/system/control_client.py"
PORT=$((20000 + ($$ + 11) % 20000))

"$RB" server -p "$PORT" --once 2>"$TMP/server.log" &
SERVER_PID=$!
CLEANUP+=("kill -9 $SERVER_PID")
# wait_port is itself a probe: connect, then close without a byte (`nc -z`).
wait_port "" "$PORT"
wait_port "" "$PORT"
# A few bytes, then a hang-up before the hello is complete.
bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT; printf 'RDMA' >&3; exec 3>&-"
# A bad first frame: refused with one Error frame (test_server_refusal_once.sh).
$CC "$PORT" bad-hello magic >/dev/null || fail "control client failed"
# Silent past the hello deadline (2 s): the server drops it.
exec 4<>"/dev/tcp/127.0.0.1/$PORT"
sleep 2.5
exec 4>&-
kill -0 "$SERVER_PID" 2>/dev/null || fail "server --once exited after probes: $(cat "$TMP/server.log")"
lines=$(grep -vc ' listening on ' "$TMP/server.log" || true)
[ "$lines" -le 3 ] || fail "more than one log line per probe that sent bytes: $(cat "$TMP/server.log")"
pass "server --once: 2 port probes, a partial hello, a bad frame and a silent connection are not its test"

timeout 30 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 8 -n 10 >"$TMP/lat.txt" 2>"$TMP/lat.err" ||
  fail "lat against server --once after the probes: $(cat "$TMP/lat.err")"
grep -qE '^ +8 +10 ' "$TMP/lat.txt" || fail "no 8 B row: $(cat "$TMP/lat.txt")"
rc=0
for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.05; done
kill -0 "$SERVER_PID" 2>/dev/null && fail "server --once still running after its test"
wait "$SERVER_PID" || rc=$?
[ "$rc" = 0 ] || fail "server --once exit status $rc after a good test: $(cat "$TMP/server.log")"
pass "server --once: the real client's test runs, then the server exits 0"
