# The fault matrix of issue #12 (docs/fault-matrix.md): faults {kill -9, SIGSTOP, link down,
# SIGINT} x phases {connect, warmup, mid-run, teardown} x targets {socket and tcp;ofi_rxm pairs
# against `rdmabench server` across two netns hosts, allreduce --np 4, allreduce across four
# netns hosts}. The verbs target runs in the rxe VM (tests/system/rxe/fault_matrix_verbs.sh, in
# test_rxe_cli's boot).
#
# Phases are reached by markers, never sleeps: the faulted process runs with the test-only hook
# RDMABENCH_TEST_HOLD=PHASE[@RANK] (docs/testing.md), prints "test hook: pid P holding at PHASE"
# and pauses there for RDMABENCH_TEST_HOLD_MS (shorter than --timeout: without a fault the run
# completes, the control column); the fault hits P. Pairs: the server's session is faulted at
# connect / warmup / mid-run (the client survives), the client at teardown (the session
# survives: after the last row only the server still waits). Collectives: rank 2 is faulted.
# Per cell: every survivor exits within --timeout + a margin, with the documented status
# (docs/cli.md), one error line naming the peer and the phase; the daemon serves a normal
# client afterwards; no process died of SIGSEGV/SIGABRT (status 134/139, "died: SIGSEGV").
# Cells run in parallel (own netns per cell, event-driven waits so the ranks do not spin) and
# the matrix is printed at the end as a Markdown table.
source "$(dirname "$0")/lib.sh"
# Ranks started by hand: rank 0's store requires a token (docs/rendezvous.md, "Access token").
export RDMABENCH_TOKEN=${RDMABENCH_TOKEN:-systest-$$}
need_root

source "$(dirname "$0")/fault_lib.sh"
ID=$$
# Cells delete their namespaces; this catches a cell killed half-way.
CLEANUP+=("for n in \$(ip netns list | awk '{print \$1}' | grep '^fm$ID'); do ip netns del \$n; done")

# Two netns hosts per pair cell: server 10.79.0.1 (link fm<ID>x<N>), client 10.79.0.2.
pair_hosts() {
  local na=fm${ID}a$CN nb=fm${ID}b$CN
  ip netns add "$na"; CNS+=("$na")
  ip netns add "$nb"; CNS+=("$nb")
  ip link add "fm${ID}x$CN" netns "$na" type veth peer name "fm${ID}y$CN" netns "$nb"
  ip -n "$na" addr add 10.79.0.1/24 dev "fm${ID}x$CN"
  ip -n "$nb" addr add 10.79.0.2/24 dev "fm${ID}y$CN"
  for ns in "$na" "$nb"; do ip -n "$ns" link set lo up; done
  ip -n "$na" link set "fm${ID}x$CN" up
  ip -n "$nb" link set "fm${ID}y$CN" up
  SX=(ip netns exec "$na") CX=(ip netns exec "$nb") SNS=$na SIP=10.79.0.1 CIP_RE='10\.79\.0\.2'
  PORT=18600 LNS=$na LDEV=fm${ID}x$CN
  if [ "$1" = socket ]; then TARGS=(-t socket); else TARGS=(-t ofi --provider "tcp;ofi_rxm"); fi
}

# Collective expectations: each survivor's one line names a rank and the phase.
coll_phase() {
  case $1 in
    connect) echo 'during connect' ;;
    warmup) echo 'size 8, warmup' ;;
    mid-run) echo 'size 16, measuring' ;;
    teardown) echo 'teardown' ;;
  esac
}
# names_peer RANK LINE: past its own "rank R on HOST: rank R: " prefix, LINE names another rank
# (or its rendezvous key 'addr/K/...', the address a connecting rank waits for).
names_peer() {
  echo "$2" | sed -E "s/^rdmabench: error: //; s/^ranks? [0-9,-]+ on [^:]*: //; s/^rank $1: //" |
    grep -oE "rank [0-9]+|'addr/[0-9]+/" | grep -oE '[0-9]+' | grep -vx "$1" >/dev/null
}
COLL=(allreduce -m 8:16 -n 50 --warmup 20 -e on --timeout $TO -f csv)

# np_cell PHASE FAULT N: allreduce --np 4 on this host, rank 2 faulted.
np_cell() {
  cell_init np4 "$1" "$2" "$3"
  local phase=$1 f=$2 victim r line ph
  ph=$(coll_phase "$phase")
  env RDMABENCH_TEST_HOLD="$phase@2" RDMABENCH_TEST_HOLD_MS=$HOLD_MS \
    env --default-signal=INT "$RB" "${COLL[@]}" --np 4 >"$CD/out" 2>"$CD/err" &
  local launcher=$!
  CKILL+=("$launcher")
  wait_for "$CD/err" "test hook: pid [0-9]+ holding at $phase" "$launcher" 60
  victim=$(hook_pid "$CD/err" "$phase")
  CKILL+=("$victim")
  T0=$(date +%s)
  fault "$f" "$victim"
  in_hold "$CD/err"
  # Survivors time out (TO), then the launcher's grace (3 s) for a stopped rank.
  wait_exit "$launcher" $((TO + 3 + MARGIN))
  # The launcher returns the first status it reaps (docs/rendezvous.md): the faulted rank's
  # (137 = killed, 4 = interrupted), a survivor's timeout (3), or a survivor that heard of the
  # fault first (1).
  case $f in kill9) local want='137|1' ;; stop) local want='3|1' ;; int) local want='4|1' ;; esac
  echo "$RC" | grep -qxE "$want" || fail "launcher exit $RC, expected $want: $(cat "$CD/err")"
  # The launcher folds the survivors' identical lines ("ranks 0-1,3 on HOST: ...").
  for r in 0 1 3; do
    [ "$(error_line "$CD/err" $r | wc -l)" = 1 ] || fail "rank $r: not one error line: $(cat "$CD/err")"
    line=$(error_line "$CD/err" $r)
    names_peer "$r" "$line" || fail "rank $r does not name a peer rank: $line"
    echo "$line" | grep -qF -- "$ph" || fail "rank $r does not name the phase '$ph': $line"
  done
  if [ "$RC" = 137 ]; then
    grep -q "launcher: rank 2 (pid $victim) failed first: killed by SIGKILL" "$CD/err" || fail "launcher line: $(cat "$CD/err")"
  fi
  if [ "$f" = stop ]; then
    grep -q "launcher: rank 2 (pid $victim) is stopped (SIGSTOP)" "$CD/err" || fail "launcher line: $(cat "$CD/err")"
  fi
  if [ "$f" = int ]; then
    error_line "$CD/err" 2 | grep "interrupted (Ctrl-C) during" | grep -F -- "$ph" >/dev/null ||
      fail "rank 2 line: $(cat "$CD/err")"
  fi
  grep -qE 'SIGSEGV|SIGABRT' "$CD/err" && fail "a rank crashed: $(cat "$CD/err")"
  cell_ok "launcher exit $RC in ${TOOK}s; rank 0: $(error_line "$CD/err" 0 |
    sed -E 's/^rdmabench: error: ranks? [0-9,-]+ on [^:]*: (rank 0: )?//' | short 150)"
}

# net_cell PHASE FAULT N: allreduce, one rank per netns host (4 hosts on a bridge), rank 2 (host
# 3) faulted; every survivor's own exit status is checked.
net_cell() {
  cell_init netns4 "$1" "$2" "$3"
  local phase=$1 f=$2 k ns br=fm${ID}r$3 pids=() victim ph
  ph=$(coll_phase "$phase")
  ip netns add "$br"; CNS+=("$br")
  ip -n "$br" link add br0 type bridge
  ip -n "$br" link set br0 up
  for k in 1 2 3 4; do
    ns=fm${ID}h$k.$3
    ip netns add "$ns"; CNS+=("$ns")
    ip link add "fm${ID}h$k.$3" netns "$ns" type veth peer name "fm${ID}p$k.$3" netns "$br"
    ip -n "$br" link set "fm${ID}p$k.$3" master br0
    ip -n "$br" link set "fm${ID}p$k.$3" up
    ip -n "$ns" addr add "10.79.1.$k/24" dev "fm${ID}h$k.$3"
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "fm${ID}h$k.$3" up
  done
  for k in 1 2 3 4; do
    local env=()
    [ $k = 3 ] && env=(RDMABENCH_TEST_HOLD="$phase@2" RDMABENCH_TEST_HOLD_MS=$HOLD_MS)
    ip netns exec "fm${ID}h$k.$3" env --default-signal=INT "${env[@]}" "$RB" "${COLL[@]}" --rank $((k - 1)) --world-size 4 \
      --rendezvous 10.79.1.1:18700 --run-id fm >"$CD/out$k" 2>"$CD/err$k" &
    pids+=($!)
    CKILL+=($!)
  done
  wait_for "$CD/err3" "test hook: pid [0-9]+ holding at $phase" "${pids[2]}" 60
  victim=$(hook_pid "$CD/err3" "$phase")
  CKILL+=("$victim")
  T0=$(date +%s)
  fault "$f" "$victim" "fm${ID}h3.$3" "fm${ID}h3.$3"
  in_hold "$CD/err3"
  local rcs=() k2
  for k in 1 2 4; do
    wait_exit "${pids[$((k - 1))]}" $((TO + MARGIN))
    rcs+=("$RC")
    # 1: a peer failed (store's news, or its Error frame); 3: this rank's own timeout.
    case $f in kill9 | int) [ "$RC" = 1 ] ;; *) [ "$RC" = 1 ] || [ "$RC" = 3 ] ;; esac ||
      fail "rank $((k - 1)) exit $RC: $(cat "$CD/err$k")"
    one_error "$CD/err$k" .
    names_peer $((k - 1)) "$(grep 'rdmabench: error:' "$CD/err$k")" ||
      fail "rank $((k - 1)) does not name a peer rank: $(cat "$CD/err$k")"
    grep 'rdmabench: error:' "$CD/err$k" | grep -F -- "$ph" >/dev/null || fail "rank $((k - 1)) lacks the phase '$ph': $(cat "$CD/err$k")"
  done
  if [ "$f" = int ]; then
    wait_exit "${pids[2]}" $((TO + MARGIN))
    [ "$RC" = 4 ] || fail "interrupted rank 2 exit $RC: $(cat "$CD/err3")"
  fi
  cell_ok "ranks 0,1,3 exit $(IFS=,; echo "${rcs[*]}") in ${TOOK}s; rank 0: $(grep 'rdmabench: error:' "$CD/err1" |
    sed -E 's/^rdmabench: error: rank 0 on [^:]*: (rank 0: )?//' | short 150)"
}

START=$(date +%s)
CELLS=()
n=0
for phase in connect warmup mid-run teardown; do
  for f in kill9 stop link int; do
    CELLS+=("pair_cell socket $phase $f $((n += 1))")
    CELLS+=("pair_cell ofi $phase $f $((n += 1))")
    CELLS+=("net_cell $phase $f $((n += 1))")
    if [ "$f" = link ]; then
      cell_na np4 "$phase" link "no link: the 4 ranks share one host (loopback)" $((n += 1))
    else
      CELLS+=("np_cell $phase $f $((n += 1))")
    fi
  done
done
run_cells "${FAULT_MATRIX_JOBS:-8}" "${CELLS[@]}"
ELAPSED=$(($(date +%s) - START))
print_matrix "$ELAPSED" "socket=socket pair" "ofi=tcp;ofi_rxm pair" "np4=allreduce --np 4" \
  "netns4=allreduce, 4 netns hosts" || fail "fault matrix: failed cells above (logs: KEEP_TMP=1)"
pass "fault matrix: every survivor exits in time naming the peer and the phase (${ELAPSED}s)"
