# `rdmabench server` against a slow-hello flood (#36): 1,500 stranger connections that each send
# their hello one byte every 1.5 s (the first at once), re-opened whenever the server drops one.
# Every legitimate client, which sends its hello at once, must be served (200 hellos answered
# with HelloAck, and a whole `lat` test), with and without --token: the daemon
# holds a connection without a process until its whole hello has arrived (SO_RCVLOWAT), drops it
# at the hello deadline counted from accept, and when its pool is full drops the oldest
# incomplete one, never the new one. Before: 3-8% of the clients were kept out, and every
# dribbling connection cost a forked process (the last client's session number here: ~6,000).
# The assertions are counts (served clients, forked sessions; no timing); the flood is bounded
# (killed after the clients, at most 150 s). Loopback only, ~30 s per mode.
source "$(dirname "$0")/lib.sh"
CC="python3 $SRC/tests/system/control_client.py"
PORT=$((20000 + ($$ + 4409) % 20000))
FLOOD=1500 HELLOS=200
# The server and the flood each need more than 1,500 descriptors; raise the soft limit.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge $((FLOOD + 256)) ] ||
  fail "RLIMIT_NOFILE hard limit $(ulimit -Hn) is below the $((FLOOD + 256)) descriptors this test needs"

for mode in open token; do
  args=() token=""
  [ $mode = token ] && args=(--token s3cret) token=s3cret
  "$RB" server -p "$PORT" "${args[@]}" 2>"$TMP/server-$mode.log" &
  SERVER_PID=$!
  CLEANUP+=("kill -9 $SERVER_PID")
  wait_port "" "$PORT"
  $CC "$PORT" dribble-flood "$FLOOD 150 $token" >"$TMP/flood-$mode.out" 2>&1 &
  flood=$!
  CLEANUP+=("kill $flood")
  for _ in $(seq 1 600); do grep -q "connections open" "$TMP/flood-$mode.out" && break; sleep 0.1; done
  grep -q "^flood: $FLOOD connections open" "$TMP/flood-$mode.out" ||
    fail "$mode: the flood did not open $FLOOD connections: $(cat "$TMP/flood-$mode.out")"
  # 200 clients that only say hello (and leave at the answer), then a whole test.
  $CC "$PORT" hello-burst "$HELLOS $token" >"$TMP/burst-$mode.out" 2>&1 || true
  lat_rc=0
  RDMABENCH_TOKEN=$token timeout 60 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 64 -n 100 \
    --warmup 10 >/dev/null 2>"$TMP/lat-$mode.err" || lat_rc=$?
  # A dribbling connection is dropped 2 s after its accept: on an idle host the clients above are
  # served sooner, so wait for the first drop at the deadline before the flood goes.
  wait_for "$TMP/server-$mode.log" "dropped 127\.0\.0\.1:[0-9]+ before its hello: no complete hello within 2000 ms" "" 20
  kill "$flood" 2>/dev/null || true
  wait "$flood" 2>/dev/null || true
  kill -0 "$SERVER_PID" 2>/dev/null || fail "$mode: the server died: $(tail -5 "$TMP/server-$mode.log")"
  grep -q "^burst: $HELLOS of $HELLOS served" "$TMP/burst-$mode.out" ||
    fail "$mode: beside $FLOOD dribbling connections, $(cat "$TMP/burst-$mode.out"); server log: $(grep -v ' listening on ' "$TMP/server-$mode.log" | tail -3)"
  [ "$lat_rc" = 0 ] ||
    fail "$mode: lat beside $FLOOD dribbling connections (exit $lat_rc): $(head -2 "$TMP/lat-$mode.err")"
  # No process per dribbling connection: the sessions forked are the clients' own (the session
  # number of the last client's test counts them). Before, every connection's first byte forked
  # one, and the churn of those pre-hello children pushed real clients' sessions out.
  last=$(sed -n 's/^rdmabench server: session \([0-9]*\): lat .*/\1/p' "$TMP/server-$mode.log" | tail -1)
  [ -n "$last" ] && [ "$last" -le $((HELLOS + 11)) ] ||
    fail "$mode: the server forked ${last:-?} sessions for $HELLOS hellos and one test beside the flood"
  grep -q "dropped 127.0.0.1:[0-9]* before its hello: no complete hello within 2000 ms" \
    "$TMP/server-$mode.log" || fail "$mode: no dribbling connection was dropped at its deadline: $(tail -3 "$TMP/server-$mode.log")"
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  pass "$mode server: $HELLOS of $HELLOS hellos answered and a lat test run beside $FLOOD dribbling connections"
done
