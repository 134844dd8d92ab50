#!/usr/bin/env bash
# Runs INSIDE the soft-RoCE VM (tests/system/rxe/run_check_vm.sh): `rdmabench check` on rxe0 with known answers
# (issue 34), in one VM boot:
#  1. clean: exit 0; the rxe counter names are printed (docs/check.md lists them);
#  2. loss: netem loss 2% on the interface that carries rxe0's loopback traffic (found by
#     measuring, below) -> retransmit / sequence error counters rise, are named, exit 1;
#  3. regression: record runs; with 2 the baseline passes and says it could not judge; with 5,
#     netem delay 50us -> fails on latency against the baseline printing both figures;
#  4. budget: every vCPU busy with a pinned hog, `check --budget 30` returns within 30 s + 5 s
#     (the VM has 4 vCPUs, as the other rxe tests: with 2 the loopback's rxe tasklet waits for
#     the timer tick behind two busy-polling sides, docs/ci-rxe-vm.md "vCPUs vs busy polling");
#  5. link down: veth0 down -> fails on port state within the budget.
# Usage: bash tests/system/rxe/check_verbs.sh /path/to/rdmabench      Exit 0 = pass, 1 = fail.
set -uo pipefail
RB=$(readlink -f "${1:?usage: $0 /path/to/rdmabench}")
[ -n "${RXE_IP:-}" ] || { echo "FAIL: RXE_IP not set (run me inside ci/rxe-vm)" >&2; exit 1; }
DEV=${RXE_DEV:-rxe0} NETDEV=${RXE_NETDEV:-veth0}
TMP=$(mktemp -d /tmp/rxe-check.XXXXXX)
PIDS=()
QDISC=
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  [ -n "$QDISC" ] && tc qdisc del dev "$QDISC" root 2>/dev/null
  ip link set "$NETDEV" up 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
T0=$(date +%s)
# Budget for the cases that measure: at host load ~20 the TCG VM needed more than 11 s for the
# two engine runs of one port (fork, device open, QP connection, 2 x 2.2 s timed) and the step
# was killed at its deadline, so 40 s (22 s for the port, 3 s per timed loop); noise is skipped
# where it is not the subject (its share would only lengthen the test).
ARGS=(-d "$DEV" --budget 40 --skip noise)
check() { # check NAME ARGS...: stdout NAME.out, stderr NAME.err, status in $rc, seconds in $took
  local name=$1 t
  shift
  t=$(date +%s%N)
  rc=0
  timeout 120 "$RB" check "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
  took=$((($(date +%s%N) - t) / 1000000))
}
show() { echo "--- $1 (exit $rc, ${took} ms):"; head -40 "$TMP/$1.out"; cat "$TMP/$1.err"; }

# 1. Clean runs. rxe retransmits without any loss when its 67 ms ACK timeout fires because the
# host descheduled a TCG vCPU (seen at host load ~20: completer_retry_err +1..+33 and
# duplicate_request +1..+946 per 11 s window, on 4 idle vCPUs). So the clean link's own spread
# sets the limits (--counter-limit, 3 x the largest of two calibration runs + 10): a third clean
# run must pass within them, and netem loss must exceed them.
for i in 1 2; do
  check cal$i "${ARGS[@]}" -f json -o "$TMP/cal$i.json"
  [ "$rc" = 0 ] || [ "$rc" = 1 ] || { show cal$i; fail "calibration run $i: exit $rc"; }
done
python3 -S - "$TMP/cal1.json" "$TMP/cal2.json" >"$TMP/limits" <<'PY' || fail "calibration runs' JSON"
import json, sys
seen = {}
for path in sys.argv[1:]:
    d = json.load(open(path))
    m = d["measurements"][0]
    assert m["error"] == "" and m["lat"]["wrong"] == 0 and m["bw"]["wrong"] == 0, m
    sys.stderr.write("%s: lat p50 %.1f us p99 %.1f us, bw %.0f MB/s, %.1f s; connection %s\n" % (
        path, m["lat"]["p50_us"], m["lat"]["p99_us"], m["bw"]["mb_s"], d["seconds"], m["connection"]))
    c = d["counters"][0]["counters"]
    sys.stderr.write("rxe counters: %s\n" % " ".join(x["name"] for x in c))
    sys.stderr.write("moved: %s\n" % " ".join("%s+%d(%s)" % (x["name"], x["delta"], x["class"]) for x in c if x["delta"]))
    assert any(x["name"].startswith("hw_counters/") and x["delta"] > 0 for x in c), c
    for x in c:
        if x["class"] == "error" and x["delta"]:
            seen[x["name"]] = max(seen.get(x["name"], 0), x["delta"])
print(" ".join("--counter-limit %s=%d" % (k, 3 * v + 10) for k, v in sorted(seen.items())))
PY
read -r -a LIMITS <"$TMP/limits"
echo "limits from the clean spread: ${LIMITS[*]:-none}"
ARGS+=("${LIMITS[@]}")
check clean "${ARGS[@]}"
[ "$rc" = 0 ] || { show clean; fail "clean check within the clean spread's limits: exit $rc"; }
pass "clean: exit 0 in ${took} ms"

# Which interface carries rxe0's loopback (RoCE v2 to its own IPv4 address is routed through
# lo, not the veth; measured, not assumed): the one whose tx_packets rose most during a run.
for i in lo "$NETDEV"; do echo "$i $(cat /sys/class/net/$i/statistics/tx_packets)"; done >"$TMP/tx0"
"$RB" lat -t verbs -d "$DEV" -n 2000 -s 8 --quiet >/dev/null 2>&1 || fail "probe lat run"
for i in lo "$NETDEV"; do echo "$i $(cat /sys/class/net/$i/statistics/tx_packets)"; done >"$TMP/tx1"
QDEV=$(paste "$TMP/tx0" "$TMP/tx1" | awk '{print $4 - $2, $1}' | sort -rn | head -1 | awk '{print $2}')
echo "rxe0's loopback traffic goes through $QDEV: $(paste "$TMP/tx0" "$TMP/tx1" | awk '{printf "%s +%d  ", $1, $4 - $2}')"

# 2. Loss: the error counters rise, are named, exit 1.
tc qdisc add dev "$QDEV" root netem loss 2% || fail "tc netem loss on $QDEV"
QDISC=$QDEV
check loss "${ARGS[@]}"
tc qdisc del dev "$QDEV" root
QDISC=
[ "$rc" = 1 ] || { show loss; fail "netem loss 2%: exit $rc, expected 1"; }
head -1 "$TMP/loss.out" | grep -Eq "^rdmabench check: $DEV/1: error counters? rose in [0-9.]+ s: .*(retry|seq|duplicate)" ||
  { show loss; fail "loss: reason does not name a retransmit/sequence counter"; }
pass "loss 2%: exit 1, $(head -1 "$TMP/loss.out")"

# 3. Regression against the baseline.
H=$TMP/hist
mkdir -p "$H"
for i in 1 2; do
  check rec$i "${ARGS[@]}" --record "$H"
  [ "$rc" = 0 ] || { show rec$i; fail "record run $i: exit $rc"; }
done
check few "${ARGS[@]}" --baseline "$H"
[ "$rc" = 0 ] || { show few; fail "2 runs recorded: exit $rc, expected 0 (nothing judged)"; }
grep -q "^note baseline $H/.*could not judge .*(2 of 5 runs needed)" "$TMP/few.out" ||
  { show few; fail "no could-not-judge note"; }
for i in 3 4 5; do
  check rec$i "${ARGS[@]}" --record "$H"
  [ "$rc" = 0 ] || { show rec$i; fail "record run $i: exit $rc"; }
done
# The delay: 50 us, or twice the recorded median p50 when TCG made that larger; netem on the
# loopback path delays both directions, so the one-way latency rises by at least the delay, to
# >= 3 x the median, beyond median + max(3 MAD, 10%) unless 3 MAD > 2 x median (then the
# history is too noisy to gate on, and the message shows it).
DELAY=$(python3 -S -c "
import json, statistics; r = json.load(open('$H/' + [f for f in __import__('os').listdir('$H') if f.endswith('.json')][0]))['runs']
m = statistics.median(x['figures']['$DEV/1 lat_p50_us'] for x in r); print(max(50, int(2 * m)))")
echo "netem delay ${DELAY}us (recorded p50 median x 2, at least 50)"
tc qdisc add dev "$QDEV" root netem delay "${DELAY}us" || fail "tc netem delay on $QDEV"
QDISC=$QDEV
check slow "${ARGS[@]}" --baseline "$H"
tc qdisc del dev "$QDEV" root
QDISC=
[ "$rc" = 1 ] || { show slow; fail "netem delay ${DELAY}us: exit $rc, expected 1"; }
head -1 "$TMP/slow.out" | grep -Eq "^rdmabench check: $DEV/1: p(50|99) latency [0-9.]+ us, baseline [0-9.]+ us \[\+[0-9]+%\]" ||
  { show slow; fail "regression reason: $(head -1 "$TMP/slow.out")"; }
pass "regression: 2 runs judge nothing; 5 runs + netem delay ${DELAY}us: $(head -1 "$TMP/slow.out")"

# 4. Budget: every vCPU busy (a hog pinned on each), the whole default set of steps.
for c in $(seq 0 $(($(nproc) - 1))); do
  taskset -c "$c" sh -c 'while :; do :; done' &
  PIDS+=($!)
done
check busy -d "$DEV" --budget 30
for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
PIDS=()
[ "$took" -le 35000 ] || { show busy; fail "check --budget 30 on busy vCPUs took $took ms (limit 30 s + 5 s)"; }
grep -q "^steps: " "$TMP/busy.out" || { show busy; fail "no steps line"; }
pass "budget 30 on $(nproc) busy vCPUs: exit $rc in $took ms; $(grep '^steps: ' "$TMP/busy.out")$(grep -h '^note .* \(skipped\|cut\):' "$TMP/busy.out" | tr '\n' ' ')"

# 5. Link down: fails on port state within the budget.
ip link set "$NETDEV" down
for i in $(seq 1 50); do grep -q DOWN "/sys/class/infiniband/$DEV/ports/1/state" && break; sleep 0.1; done
check down "${ARGS[@]}"
ip link set "$NETDEV" up
[ "$rc" = 1 ] || { show down; fail "$NETDEV down: exit $rc, expected 1"; }
head -1 "$TMP/down.out" | grep -q "^rdmabench check: $DEV/1: port state DOWN" || { show down; fail "down reason"; }
[ "$took" -le 45000 ] || fail "link down check took $took ms (budget 40 s)"
pass "link down: $(head -1 "$TMP/down.out") in $took ms"
echo "check_verbs.sh: all cases in $(($(date +%s) - T0)) s"
