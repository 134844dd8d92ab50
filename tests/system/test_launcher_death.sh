# Issue 24 item 4: kill -9 of the `--np` launcher while its ranks measure. The ranks die with it
# (PR_SET_PDEATHSIG = SIGTERM in every forked rank, and the closing of the launcher's store
# connection noticed in every loop, busy or not) within a few seconds, each naming the launcher:
# "launcher (pid N) died: ...". Before, six `allreduce --np 6` ranks were still running 90 s
# later with parent 1 and no message. Asserted by pid, for an event-driven run (the default with
# more ranks than cores) and a busy-polling one (-e off).
source "$(dirname "$0")/lib.sh"

# gone PID: the process no longer exists (or is a zombie waiting for its new parent to reap it).
gone() {
  [ ! -e "/proc/$1/stat" ] && return 0
  local state
  state=$(sed -E 's/^[0-9]+ \(.*\) ([A-Za-z]) .*/\1/' "/proc/$1/stat" 2>/dev/null) || return 0
  [ -z "$state" ] || [ "$state" = Z ] || [ "$state" = X ]
}

run_case() {
  local mode=$1 out=$TMP/$1.out err=$TMP/$1.err
  # Long enough that the ranks are still measuring when the launcher dies (~minutes).
  "$RB" allreduce --np 6 -m 8:8 -n 100000000 --warmup 10 --timeout 10 -e "$mode" >"$out" 2>"$err" &
  local launcher=$!
  CLEANUP+=("kill -9 $launcher")
  # The header is printed by rank 0 when the ranks are connected; the measured loop follows.
  local i
  for i in $(seq 1 600); do
    [ -s "$out" ] && break
    kill -0 "$launcher" 2>/dev/null || fail "-e $mode: launcher exited early: $(cat "$err")"
    sleep 0.1
  done
  [ -s "$out" ] || fail "-e $mode: no header within 60 s: $(cat "$err")"
  local ranks
  ranks=$(ps -o pid= --ppid "$launcher" | tr -d ' ' | tr '\n' ' ')
  [ "$(echo $ranks | wc -w)" = 6 ] || fail "-e $mode: expected 6 ranks under launcher $launcher, got '$ranks'"
  for p in $ranks; do CLEANUP+=("kill -9 $p"); done
  sleep 1
  local t0
  t0=$(date +%s.%N)
  kill -9 "$launcher"
  wait "$launcher" 2>/dev/null || true
  # A few seconds: SIGTERM arrives at once, the store connection closes at once; the busy
  # check runs every 100 ms. 10 s is far above that and below --timeout's own path (10 s +).
  local left
  for i in $(seq 1 100); do
    left=""
    for p in $ranks; do gone "$p" || left="$left $p"; done
    [ -z "$left" ] && break
    sleep 0.1
  done
  local took
  took=$(python3 -c "import time; print(f'{time.time() - $t0:.1f}')")
  [ -z "$left" ] || fail "-e $mode: rank(s)$left still running ${took} s after kill -9 of launcher $launcher: $(cat "$err")"
  local named
  named=$(grep -c "launcher (pid $launcher) died" "$err" || true)
  [ "$named" -ge 6 ] ||
    fail "-e $mode: $named of 6 ranks named the dead launcher $launcher: $(cat "$err")"
  grep -qE "rdmabench: error: rank [0-5] on [^:]*: (rank [0-5]: )?launcher \(pid $launcher\) died" "$err" ||
    fail "-e $mode: no rank's error line starts with the launcher's death: $(cat "$err")"
  pass "-e $mode: kill -9 of launcher $launcher: its 6 ranks gone within ${took} s, each naming it"
}

run_case on
run_case off
