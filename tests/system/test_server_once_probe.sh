# `rdmabench server --once` runs one test: the first client whose test starts. A connection that
# ends before a valid hello (a port probe such as `nc -z`, a few bytes then a hang-up, a silent
# one past the 2 s hello deadline, a bad first frame) is logged in at most one line and the
# server waits on for the real client: it counted the probe as its one test and exited 0
# (newcomer trial). So is a session that passed its hello but started no test (a stranger's hello
# and hang-up, a malformed request: it exited 1 after them). A second client during the one test
# is told it is --once, not "--max-connections". Loopback, ~8 s.
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

# A stranger's valid hello and hang-up, and a malformed test description: sessions that pass
# their hello but never start a test are not its one test either (#36: it exited 1 after them).
$CC "$PORT" hello-hangup >/dev/null || fail "control client failed (hello-hangup)"
$CC "$PORT" request '{"test": "nonsense"}' >"$TMP/malformed.out" || true
grep -q '^error: ' "$TMP/malformed.out" || fail "malformed request: $(cat "$TMP/malformed.out")"
sleep 0.5
kill -0 "$SERVER_PID" 2>/dev/null ||
  fail "server --once exited after a hello and hang-up or a malformed request: $(cat "$TMP/server.log")"
pass "server --once: a hello and hang-up and a malformed request are not its test"

# The real client: a test of 3 s, -e on so that a second client gets a CPU on 2 cores.
timeout 30 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 8 -D 3 -e on >"$TMP/lat.txt" \
  2>"$TMP/lat.err" &
LAT_PID=$!
CLEANUP+=("kill -9 $LAT_PID")
# A second client while the one test runs is told why: --once, not "--max-connections 64".
for _ in $(seq 1 40); do grep -q ' listening on ' "$TMP/server.log" && break; sleep 0.05; done
sleep 1
rc=0
timeout 30 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 8 -n 10 >/dev/null 2>"$TMP/second.err" ||
  rc=$?
[ "$rc" != 0 ] || fail "a second client ran against server --once during its test"
grep -q 'started with --once and its one test is running' "$TMP/second.err" ||
  fail "the second client is not told about --once: $(cat "$TMP/second.err")"
grep -q 'max-connections' "$TMP/second.err" &&
  fail "the second client is told about --max-connections: $(cat "$TMP/second.err")"
pass "server --once: a second client during its test is told 'started with --once' (exit $rc)"
rc=0
wait "$LAT_PID" || rc=$?
[ "$rc" = 0 ] || fail "lat against server --once after the probes (exit $rc): $(cat "$TMP/lat.err")"
grep -qE '^ +8 +[0-9]+ ' "$TMP/lat.txt" || fail "no 8 B row: $(cat "$TMP/lat.txt")"
rc=0
for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.05; done
kill -0 "$SERVER_PID" 2>/dev/null && fail "server --once still running after its test"
wait "$SERVER_PID" || rc=$?
[ "$rc" = 0 ] || fail "server --once exit status $rc after a good test: $(cat "$TMP/server.log")"
pass "server --once: the real client's test runs, then the server exits 0"
