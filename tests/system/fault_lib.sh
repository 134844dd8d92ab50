# Fault-matrix cells (sourced by tests/system/test_fault_matrix.sh on the host and by
# tests/system/rxe/fault_matrix_verbs.sh in the rxe VM; docs/fault-matrix.md). Needs lib.sh's
# fail, $RB and $TMP. Each cell runs in its own subshell and writes one line
# "TARGET|PHASE|FAULT|ok or FAIL|what the survivor did" to $RES/N.
#
# The faulted process runs with the test-only hook RDMABENCH_TEST_HOLD=PHASE[@RANK]
# (docs/testing.md): it prints "test hook: pid P holding at PHASE" and pauses HOLD_MS there
# (shorter than --timeout, so without a fault the run completes); the fault then hits P while it
# is known to be at PHASE: a marker, never a sleep.

TO=${TO:-3}                # --timeout and --connect-timeout of every process, s
HOLD_MS=${HOLD_MS:-2000}   # the hook's pause, shorter than TO
MARGIN=${MARGIN:-12}       # slack for a loaded machine, s
EVENT=(${EVENT--e})        # pair clients sleep on completion events (parallel cells, 2 CPUs)
RES=$TMP/res
mkdir -p "$RES"

# The polling loops below fork nothing: in the TCG VM (fault_matrix_verbs.sh) a sleep(1) or grep
# process per 50 ms and cell cost seconds of CPU per cell, enough to delay the faults past the
# holds. nap SECONDS sleeps in the shell (read on a FIFO nobody writes); has FILE REGEX greps.
NAP_FIFO=$(mktemp -u /tmp/fault-nap.XXXXXX)
mkfifo "$NAP_FIFO"
exec {NAP_FD}<>"$NAP_FIFO"
rm -f "$NAP_FIFO"
nap() { read -r -t "$1" -u "$NAP_FD" || true; }
has() {
  local l
  [ -r "$1" ] || return 1
  while IFS= read -r l || [ -n "$l" ]; do
    [[ $l =~ $2 ]] && return 0
  done <"$1"
  return 1
}
# wait_line FILE REGEX PID SECONDS: waits for a line of FILE matching REGEX (lib.sh's wait_for).
wait_line() {
  local i
  for ((i = 0; i < $4 * 20; i++)); do
    has "$1" "$2" && return 0
    if ! kill -0 "$3" 2>/dev/null; then
      has "$1" "$2" && return 0
      fail "process $3 ended before '$2' appeared in $1: $(tail -3 "$1" 2>/dev/null)"
    fi
    nap 0.05
  done
  fail "no line matching '$2' in $1 after ${4}s: $(tail -3 "$1" 2>/dev/null)"
}

cell_init() {
  CT=$1 CP=$2 CF=$3 CN=$4 CD=$TMP/cell$4 CKILL=() CNS=() CLINK=() CSTART=$(date +%s)
  mkdir -p "$CD"
  trap cell_exit EXIT
}
cell_exit() {
  local rc=$? p n
  set +e  # clean up everything, whatever is already gone
  for p in "${CKILL[@]}"; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
  [ ${#CLINK[@]} = 0 ] || link_set up "${CLINK[@]}"
  for n in "${CNS[@]}"; do ip netns del "$n" 2>/dev/null; done
  if [ ! -s "$RES/$CN" ] && [ "$rc" != 75 ]; then
    printf '%s|%s|%s|FAIL|%s\n' "$CT" "$CP" "$CF" \
      "$(grep -v '^+' "$TMP/cell$CN.log" 2>/dev/null | tail -2 | tr '\n|' ' /')" >"$RES/$CN"
  fi
  echo "cell $CN ($CT $CP $CF): $(($(date +%s) - CSTART)) s, exit $rc"
  exit "$rc"
}
cell_ok() { printf '%s|%s|%s|ok|%s\n' "$CT" "$CP" "$CF" "$*" >"$RES/$CN"; }
cell_na() { printf '%s|%s|%s|n/a|%s\n' "$1" "$2" "$3" "$4" >"$RES/$5"; }

# link_set up|down NETNS DEV (NETNS empty: this namespace).
link_set() {
  if [ -n "$2" ]; then ip -n "$2" link set "$3" "$1"; else ip link set "$3" "$1"; fi
}
# fault NAME PID [NETNS DEV]: injects the fault (link: takes the link down).
fault() {
  case $1 in
    kill9) kill -9 "$2" ;;
    stop) kill -STOP "$2" ;;
    int) kill -INT "$2" ;;
    link)
      CLINK=("$3" "$4")
      link_set down "$3" "$4"
      ;;
  esac
}
# link_want PHASE: a pair client's exit class after link down at PHASE (a regex: "1|3" allows
# both); the caller may define its own (the host's: 3, a timeout, wherever the link goes down).
declare -F link_want >/dev/null || link_want() { echo 3; }
# kill_want PHASE: the same after kill -9 of the server's session (host: 1, the daemon's report).
declare -F kill_want >/dev/null || kill_want() { echo 1; }
# in_hold FILE: after the fault, checks that it hit the held process inside its hold (the hook
# prints "resumes after PHASE" when the hold ended first: a machine so loaded that the fault came
# late). A late fault ends the cell with status 75: run_cells runs it again.
in_hold() {
  if grep -q "resumes after $CP" "$1"; then
    echo "the fault came after the ${HOLD_MS} ms hold at $CP: cell run again"
    exit 75
  fi
}
# wait_exit PID SECONDS: waits for a background child of this shell; sets RC and TOOK (since
# T0); fails when it outlives SECONDS or died of SIGABRT / SIGSEGV.
wait_exit() {
  local pid=$1 secs=$2 i
  for ((i = 0; i < secs * 20; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    nap 0.05
  done
  kill -0 "$pid" 2>/dev/null && fail "pid $pid still running ${secs}s after the fault (hang)"
  RC=0
  wait "$pid" || RC=$?
  TOOK=$(($(date +%s) - T0))
  case $RC in 134 | 139) fail "pid $pid died of SIGABRT/SIGSEGV (status $RC)" ;; esac
  return 0
}
# hook_pid FILE PHASE: the pid that printed the hold marker.
hook_pid() { grep -oE "test hook: pid [0-9]+ holding at $2" "$1" | head -1 | awk '{print $4}'; }
# one_error FILE REGEX: FILE has exactly one "rdmabench: error:" line and it matches REGEX.
one_error() {
  local n
  n=$(grep -c 'rdmabench: error:' "$1" || true)
  [ "$n" = 1 ] || fail "expected one error line in $1, got $n: $(cat "$1")"
  grep 'rdmabench: error:' "$1" | grep -E -- "$2" >/dev/null ||
    fail "error line lacks /$2/: $(grep 'rdmabench: error:' "$1")"
}
# short [N]: an error line for the table (addresses' ports as P, at most N characters).
short() {
  sed -E 's/^rdmabench: error: //; s/([0-9]+\.[0-9]+\.[0-9]+\.[0-9]+):[0-9]+/\1:P/g;
          s/QPN 0x[0-9a-f]+/QPN 0xN/g; s/session [0-9]+/session N/g; s/pid [0-9]+/pid N/g' |
    cut -c1-"${1:-170}"
}
# no_children PID SECONDS: waits until PID has no child processes.
no_children() {
  local i c
  for ((i = 0; i < $2 * 20; i++)); do
    c=
    read -r c <"/proc/$1/task/$1/children" 2>/dev/null || true
    [ -z "$c" ] && return 0
    nap 0.05
  done
  return 1
}

# pair_cell TARGET PHASE FAULT N: a client against `rdmabench server`. The caller defines
# pair_hosts TARGET, run inside the cell, which sets SX / CX (arrays: how to run the server /
# a client), SNS (the server's netns for wait_port, may be empty), SIP (server address), CIP_RE
# (client address, a regex), PORT, TARGS (array: transport options) and LNS / LDEV (the link
# that "link down" takes down). Connect / warmup / mid-run: the server's session is faulted and
# the client survives; teardown: the client is faulted after its last row and its session
# survives. Then the daemon must end the faulted session by itself and serve a normal client.
pair_cell() {
  cell_init "$1" "$2" "$3" "$4"
  local phase=$2 f=$3 cargs senv=() cenv=() marker victim want ph summary
  pair_hosts "$1"
  case $phase in
    connect) cargs=(-s 8 -n 100) ;;
    warmup) cargs=(-s 8 -n 100 --warmup 100) ;;
    mid-run) cargs=(-s 8,64 -n 100 --warmup 0) ;;
    teardown) cargs=(-s 8 -n 100) ;;
  esac
  if [ "$phase" = teardown ]; then
    cenv=(RDMABENCH_TEST_HOLD=teardown RDMABENCH_TEST_HOLD_MS=$HOLD_MS)
  else
    senv=(RDMABENCH_TEST_HOLD=$phase RDMABENCH_TEST_HOLD_MS=$HOLD_MS)
  fi
  "${SX[@]}" env --default-signal=INT "${senv[@]}" "$RB" server --bind "$SIP" --port "$PORT" >"$CD/server.err" 2>&1 &
  local srv=$!
  CKILL+=("$srv")
  wait_line "$CD/server.err" "listening on" "$srv" 60
  "${CX[@]}" env --default-signal=INT "${cenv[@]}" "$RB" lat "$SIP" -p "$PORT" "${TARGS[@]}" "${cargs[@]}" "${EVENT[@]}" -f csv \
    --timeout "$TO" --connect-timeout "$TO" >"$CD/out" 2>"$CD/err" &
  local client=$!
  CKILL+=("$client")
  if [ "$phase" = teardown ]; then marker=$CD/err; else marker=$CD/server.err; fi
  local i
  for ((i = 0; i < 90 * 20; i++)); do
    has "$marker" "test hook: pid [0-9]+ holding at $phase" && break
    if ! kill -0 "$client" 2>/dev/null; then
      # A start-up timeout of a loaded machine (e.g. "the server to open its device"): the
      # fault never happened, so the cell says nothing yet: run it again.
      echo "client ended before the hold at $phase: $(cat "$CD/err"): cell run again"
      exit 75
    fi
    nap 0.05
  done
  grep -qE "test hook: pid [0-9]+ holding at $phase" "$marker" || fail "no hold marker at $phase in $marker"
  victim=$(hook_pid "$marker" "$phase")
  [ -n "$victim" ] || fail "no pid in the hook marker"
  CKILL+=("$victim")
  if [ "$phase" = mid-run ]; then
    grep -qE '^lat,.*,8,100,' "$CD/out" || fail "mid-run hold before the first result row"
  fi
  T0=$(date +%s)
  fault "$f" "$victim" "$LNS" "$LDEV"
  in_hold "$marker"
  if [ "$phase" != teardown ]; then
    # The client survives: exit class, one line naming the server and the phase.
    wait_exit "$client" $((TO + MARGIN))
    case $f in kill9) want=$(kill_want "$phase") ;; int) want=1 ;; link) want=$(link_want "$phase") ;; *) want=3 ;; esac
    [[ $RC =~ ^($want)$ ]] || fail "client exit $RC, expected $want: $(cat "$CD/err")"
    case $phase in
      connect) ph='during connect' ;;
      warmup) ph='during size 8, warmup' ;;
      mid-run) ph='during size 64, measuring' ;;
    esac
    one_error "$CD/err" "${SIP//./\\.}:$PORT.*$ph|$ph.*${SIP//./\\.}:$PORT"
    summary="exit $RC in ${TOOK}s: $(grep 'rdmabench: error:' "$CD/err" | short)"
  else
    # The client is faulted after its last row; its session survives and ends naming it.
    if [ "$f" = int ]; then
      wait_exit "$client" $((TO + MARGIN))
      [ "$RC" = 4 ] || fail "interrupted client exit $RC, expected 4: $(cat "$CD/err")"
      one_error "$CD/err" "interrupted \(Ctrl-C\) during teardown"
    fi
    local ends="session [0-9]+ from $CIP_RE:[0-9]+ failed: .*teardown"
    # The caller may also accept a session that ended normally after link down at teardown
    # (teardown_link_done: the VM, where both ends share one kernel).
    if [ "$f" = link ] && declare -F teardown_link_done >/dev/null; then
      ends="($ends|session [0-9]+ from $CIP_RE:[0-9]+ done)"
    fi
    wait_line "$CD/server.err" "$ends" "$srv" $((TO + MARGIN))
    TOOK=$(($(date +%s) - T0))
    summary="session ends in ${TOOK}s: $(grep -E 'session [0-9]+ from .* (failed|done)' "$CD/server.err" |
      tail -1 | sed -E 's/^rdmabench server: //' | short)"
    [ "$f" = int ] && summary="client exit 4 ($(grep 'rdmabench: error:' "$CD/err" | short 60)); $summary"
  fi
  if [ "$f" = link ]; then
    link_set up "$LNS" "$LDEV" && CLINK=()
    # The caller may wait for the link to carry traffic again (rxe: its port ACTIVE).
    if declare -F after_link_up >/dev/null; then after_link_up; fi
  fi
  # The daemon ends the faulted session by itself (a stopped one once its client has left).
  no_children "$srv" $((TO + MARGIN)) || fail "the daemon still runs the faulted session: $(tail -3 "$CD/server.err")"
  [ "$phase" = teardown ] && [ "$f" = stop ] && kill -9 "$client"
  # (Its session holds too, at connect or warmup: the daemon's environment has the hook.)
  "${CX[@]}" timeout 60 "$RB" lat "$SIP" -p "$PORT" "${TARGS[@]}" -s 8 -n 10 "${EVENT[@]}" \
    --timeout $((TO + MARGIN)) --connect-timeout $((TO + MARGIN)) \
    >"$CD/after.out" 2>"$CD/after.err" || fail "daemon does not serve after the fault: $(cat "$CD/after.err")"
  kill -0 "$srv" || fail "daemon died"
  ! grep -qE 'died: SIG(SEGV|ABRT)' "$CD/server.err" || fail "a session crashed: $(cat "$CD/server.err")"
  if [ "$f" = stop ] && [ "$phase" != teardown ]; then
    grep -q 'session, stopped (SIGSTOP), did not end: killed' "$CD/server.err" ||
      fail "daemon did not end the stopped session: $(cat "$CD/server.err")"
    summary="$summary; the daemon kills the stopped session"
  fi
  cell_ok "$summary; then serves a client"
}

# run_cells JOBS CELL...: runs each cell (a command line ending with its number N) in its own
# subshell, at most JOBS at a time, its output in $TMP/cellN.log.
run_cells() {
  local jobs=$1 cell cn
  shift
  for cell in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    cn=${cell##* }
    (
      exec 3>&1 >"$TMP/cell$cn.log" 2>&1
      for try in 1 2 3; do
        rc=0
        ($cell) || rc=$?
        [ "$rc" = 75 ] || break
      done
      [ "$rc" != 75 ] ||
        printf 'x|x|x|FAIL|the fault came after the hold 3 times: %s\n' "$cell" >"$RES/$cn"
      echo "cell $cn: $(tail -1 "$TMP/cell$cn.log"): $(cut -d'|' -f1-4 "$RES/$cn")" >&3
    ) &
  done
  wait || true
}

# print_matrix ELAPSED TARGET=NAME...: the Markdown table of $RES (rows target x phase, columns
# faults); exit status 1 when a cell failed.
print_matrix() {
  python3 - "$RES" "$@" <<'PY'
import os, sys
res, elapsed, targets = sys.argv[1], sys.argv[2], [a.split("=", 1) for a in sys.argv[3:]]
cells = {}
for name in os.listdir(res):
    t, p, f, status, text = open(os.path.join(res, name)).read().rstrip("\n").split("|", 4)
    cells[(t, p, f)] = (status, text)
faults = [("kill9", "kill -9"), ("stop", "SIGSTOP"), ("link", "link down"), ("int", "SIGINT")]
print("| target | phase | " + " | ".join(n for _, n in faults) + " |")
print("|---|---|" + "---|" * len(faults))
bad = 0
for t, tn in targets:
    for p in ["connect", "warmup", "mid-run", "teardown"]:
        row = []
        for f, _ in faults:
            status, text = cells.get((t, p, f), ("FAIL", "cell did not run"))
            bad += status == "FAIL"
            prefix = {"FAIL": "**FAIL** ", "n/a": "n/a: "}.get(status, "")
            row.append(prefix + text.replace("|", "/"))
        print(f"| {tn} | {p} | " + " | ".join(row) + " |")
print(f"\n{len(cells)} cells, {bad} failed, {elapsed} s")
sys.exit(1 if bad else 0)
PY
}
