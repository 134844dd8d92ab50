# Crash isolation: a server session that dies of a signal is reported by name to its client and
# in the daemon's log, and the daemon serves the next client. Before the fix the PSM libraries
# loaded with libfabric (libinfinipath's constructor) held SIGSEGV with a backtrace printer that
# turned the crash into an ordinary exit: the client read "Connection reset by peer" and the
# daemon "the session failed". No IPATH_NO_BACKTRACE here on purpose. Loopback, ~3 s.
source "$(dirname "$0")/lib.sh"
PORT=$((20000 + ($$ + 23) % 20000))

# Test-only hook (docs/cli.md): a session raises SIGSEGV when it is about to run 8 B.
RDMABENCH_TEST_SESSION_CRASH_AT=8 "$RB" server -p "$PORT" 2>"$TMP/server.log" &
SERVER_PID=$!
CLEANUP+=("kill -9 $SERVER_PID")
wait_port "" "$PORT"

rc=0
timeout 30 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 8 -n 10 >"$TMP/crash.txt" 2>"$TMP/crash.err" || rc=$?
[ "$rc" != 0 ] || fail "lat exit status 0 although its server session crashed"
grep -q 'server session 1 died: SIGSEGV' "$TMP/crash.err" ||
  fail "the client was not told the session died of SIGSEGV: $(cat "$TMP/crash.err")"
grep -q 'session 1 from .* died: SIGSEGV' "$TMP/server.log" ||
  fail "the daemon did not log the SIGSEGV: $(cat "$TMP/server.log")"
grep -q 'Backtrace' "$TMP/server.log" && fail "a library's backtrace handler took the SIGSEGV: $(cat "$TMP/server.log")"
pass "a session's SIGSEGV is named to the client (exit $rc) and in the daemon's log"

timeout 30 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 16 -n 10 >"$TMP/next.txt" 2>"$TMP/next.err" ||
  fail "the next client after a crashed session failed: $(cat "$TMP/next.err")"
grep -qE '^ +16 +10 ' "$TMP/next.txt" || fail "no 16 B row: $(cat "$TMP/next.txt")"
kill -0 "$SERVER_PID" 2>/dev/null || fail "the daemon exited: $(cat "$TMP/server.log")"
pass "the daemon serves the next client after a crashed session"
