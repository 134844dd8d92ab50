# Issue 36 item 6: signals at the phases a user meets them. (a) SIGHUP (the terminal closed) is
# an interruption like Ctrl-C: exit 4, the -o temporary file removed. (b) A run killed by SIGKILL
# leaves its temporary file, named .FILE.rdmabench-HOST-PID.XXXXXX; the next run writing FILE
# removes it. (c) SIGINT at any moment of the start (0-0.5 s) ends the run as interrupted (exit 4
# with its message) or, before main() ran, by the signal (130): never a silent exit 0 or 1.
# (d) A background job of a script (`rdmabench server &`: SIGINT ignored on entry) keeps
# ignoring the terminal's Ctrl-C; SIGTERM stops it. (e) Ctrl-C while the client waits for the
# hello answer of a server that never answers ends it at once, not after the 5 s hello deadline.
# Loopback, ~15 s. Processes meant to take SIGINT start with `env --default-signal=INT` (a script
# starts its background jobs with SIGINT ignored, and rdmabench keeps that).
source "$(dirname "$0")/lib.sh"
INT=(env --default-signal=INT)
# gone_within PID POLLS: the process ended within POLLS polls of 100 ms.
gone_within() {
  local i
  for ((i = 0; i < $2; i++)); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  return 1
}
temps() { ls -A "$TMP/d" | grep -E '^\.r\.json\.' || true; }

# (a) SIGHUP mid-run with -o: exit 4, no temporary file left.
mkdir -p "$TMP/d"
"$RB" lat -t socket -s 8 -n 100000000 --warmup 1 -f json -o "$TMP/d/r.json" 2>"$TMP/hup.err" &
pid=$!
CLEANUP+=("kill -9 $pid")
for i in $(seq 1 600); do [ -n "$(temps)" ] && break; sleep 0.1; done
[ -n "$(temps)" ] || fail "no temporary file for -o within 60 s: $(cat "$TMP/hup.err")"
temps | grep -qE "^\.r\.json\.rdmabench-.*-$pid\.......$" || fail "temporary file not named .r.json.rdmabench-HOST-$pid.XXXXXX: $(temps)"
kill -HUP "$pid"
gone_within "$pid" 100 || fail "still running 10 s after SIGHUP"
rc=0; wait "$pid" || rc=$?
[ "$rc" = 4 ] || fail "SIGHUP: exit $rc, expected 4 (interrupted): $(cat "$TMP/hup.err")"
grep -q "SIGHUP" "$TMP/hup.err" || fail "SIGHUP not named: $(cat "$TMP/hup.err")"
[ -z "$(temps)" ] || fail "SIGHUP left the temporary file: $(temps)"
pass "SIGHUP mid-run: exit 4 naming SIGHUP, temporary -o file removed"

# (b) SIGKILL leaves the temporary file; the next run to the same FILE removes it.
echo '{"old": true}' >"$TMP/d/r.json"
"$RB" lat -t socket -s 8 -n 100000000 --warmup 1 -f json -o "$TMP/d/r.json" 2>/dev/null &
pid=$!
CLEANUP+=("kill -9 $pid")
for i in $(seq 1 600); do [ -n "$(temps)" ] && break; sleep 0.1; done
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
stale=$(temps)
[ -n "$stale" ] || fail "SIGKILL: expected the killed run's temporary file"
timeout 60 "$RB" lat -t socket -s 8 -n 10 --warmup 1 -f json -o "$TMP/d/r.json" 2>"$TMP/next.err" ||
  fail "next run: $(cat "$TMP/next.err")"
[ -z "$(temps)" ] || fail "the next run left the stale temporary file $stale: $(temps)"
json_check "$TMP/d/r.json" "d['rows'][0]['bytes'] == 8"
pass "a SIGKILLed run's temporary file ($stale) is removed by the next run to the same file"

# (c) SIGINT early in the start: interrupted (4, with its message) or killed before main (130).
for d in 0 0.02 0.05 0.1 0.2 0.3 0.5; do
  "${INT[@]}" "$RB" lat -t socket -s 8 -n 100000000 >"$TMP/early.out" 2>"$TMP/early.err" &
  pid=$!
  CLEANUP+=("kill -9 $pid")
  # From the exec of rdmabench (env has reset SIGINT by then), not from the fork.
  for i in $(seq 1 1000); do [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$RB" ] && break; sleep 0.01; done
  sleep "$d"
  kill -INT "$pid"
  gone_within "$pid" 100 || fail "SIGINT after ${d}s: still running 10 s later"
  rc=0; wait "$pid" || rc=$?
  case $rc in
    130) [ ! -s "$TMP/early.err" ] || fail "SIGINT after ${d}s: exit 130 with output: $(cat "$TMP/early.err")" ;;
    4) grep -q "interrupted (Ctrl-C)" "$TMP/early.err" || fail "SIGINT after ${d}s: exit 4 without the message: $(cat "$TMP/early.err")" ;;
    *) fail "SIGINT after ${d}s: exit $rc (expected 4, or 130 before main): '$(cat "$TMP/early.err")'" ;;
  esac
done
pass "SIGINT at 0-0.5 s of a start: exit 4 with its message, or 130 before main(); never silent"

# (d) A script's background server ignores the terminal's Ctrl-C; SIGTERM stops it.
PORT=$((20000 + $$ % 20000))
bash -c "\"$RB\" server -p $PORT 2>\"$TMP/bg.err\" & echo \$! >\"$TMP/bg.pid\"; wait"  &
CLEANUP+=("kill -9 \$(cat $TMP/bg.pid)")
wait_port "" "$PORT"
spid=$(cat "$TMP/bg.pid")
kill -INT "$spid"
timeout 60 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 8 -n 10 >/dev/null 2>"$TMP/bgc.err" ||
  fail "the background server stopped serving after SIGINT: $(cat "$TMP/bgc.err" "$TMP/bg.err")"
kill -0 "$spid" || fail "the background server died of SIGINT: $(cat "$TMP/bg.err")"
kill -TERM "$spid"
gone_within "$spid" 100 || fail "background server still running 10 s after SIGTERM"
grep -q "stopped (SIGTERM)" "$TMP/bg.err" || fail "server did not say it stopped: $(cat "$TMP/bg.err")"
pass "a background server (SIGINT ignored on entry) keeps serving after SIGINT; SIGTERM stops it"

# (e) Ctrl-C in the hello wait: a server that accepts and never answers.
python3 -c "
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $PORT + 1)); s.listen(4); print('listening', flush=True)
c, _ = s.accept(); print('accepted', flush=True); time.sleep(60)" >"$TMP/mute.out" 2>&1 &
CLEANUP+=("kill -9 $!")
wait_for "$TMP/mute.out" listening
"${INT[@]}" "$RB" lat 127.0.0.1 -p $((PORT + 1)) -t socket -s 8 --timeout 60 >/dev/null 2>"$TMP/hello.err" &
pid=$!
CLEANUP+=("kill -9 $pid")
wait_for "$TMP/mute.out" accepted "$pid" 60
sleep 0.3  # the hello is sent; the client polls for the answer
kill -INT "$pid"
# The poll slice is 100 ms: 20 polls of 100 ms are 5x the slowest answer on a loaded host and
# well below the 5 s hello deadline that ended it before.
gone_within "$pid" 20 || fail "Ctrl-C in the hello wait: still running 2 s later"
rc=0; wait "$pid" || rc=$?
[ "$rc" = 4 ] || fail "Ctrl-C in the hello wait: exit $rc, expected 4: $(cat "$TMP/hello.err")"
grep -q "interrupted (Ctrl-C) during the hello answer" "$TMP/hello.err" ||
  fail "Ctrl-C in the hello wait: $(cat "$TMP/hello.err")"
pass "Ctrl-C while waiting for the hello answer ends the client within 2 s (exit 4)"
