#!/usr/bin/env bash
# Runs INSIDE the client VM of `ci/rxe-vm pair` (tests/system/test_rxe_check.sh), with
# `rdmabench server --token T` in the server VM: `rdmabench check --peer` known answers that need
# the traffic on a wire (issue 34). In one VM, rxe hands a packet for its own address straight to
# its receive path, past every qdisc, so netem cannot touch check's loopback traffic; here the
# RoCE v2 packets leave through eth0, where netem acts.
#  1. clean (latency loop only): two calibration runs set the limits of the error counters that a
#     clean TCG link moves by itself; the next run exits 0 within them;
#  2. regression: 2 runs recorded judge nothing and say so; 5 recorded, then netem delay on eth0
#     (4 x the recorded median p50, one direction): check fails on latency against the
#     baseline, printing both figures;
#  3. loss (bandwidth loop only: 64-packet messages, where a lost packet is a sequence gap):
#     one calibration run, then netem loss 2% on eth0: the error counters rise past the clean
#     limits, are named on the first line, exit 1.
# Measured in the TCG pair (1 vCPU per VM, host idle): round trip ~50 ms (rxe's work waits for
# guest timer ticks), lat p50 22-28 ms, a latency-only check 6-7 s, a bandwidth-only check
# 40-50 s (its --check verification pass sends 256 messages one at a time): in CI on 2026-12-05
# the calibration run passed 49.5 s and was cut at a 90 s budget's share, so the clean run gets
# --budget 150; the loss run keeps 90 (cut there or not, the counters are read after it).
# Usage: bash check_pair_verbs.sh /path/to/rdmabench TOKEN       Exit 0 = pass, 1 = fail.
set -uo pipefail
RB=$(readlink -f "${1:?usage: $0 /path/to/rdmabench TOKEN}")
TOKEN=${2:?usage: $0 /path/to/rdmabench TOKEN}
[ -n "${PEER_IP:-}" ] || { echo "FAIL: PEER_IP not set (run me as ci/rxe-vm pair's client)" >&2; exit 1; }
DEV=${RXE_DEV:-rxe0} NETDEV=${RXE_NETDEV:-eth0}
TMP=$(mktemp -d /tmp/rxe-check-pair.XXXXXX)
QDISC=
cleanup() {
  [ -n "$QDISC" ] && tc qdisc del dev "$NETDEV" root 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
T0=$(date +%s)
SUBJECT="$DEV/1->$PEER_IP"
ARGS=(-d "$DEV" --peer "$PEER_IP" --token "$TOKEN" --skip noise --skip ofi)
LAT=(--skip bw --budget 20)
BWCAL=(--skip lat --budget 150)
BW=(--skip lat --budget 90)
check() { # check NAME ARGS...: stdout NAME.out, stderr NAME.err, status in $rc, seconds in $took
  local name=$1 t
  shift
  t=$(date +%s%N)
  rc=0
  timeout 200 "$RB" check "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
  took=$((($(date +%s%N) - t) / 1000000))
}
show() { echo "--- $1 (exit $rc, ${took} ms):"; head -40 "$TMP/$1.out"; cat "$TMP/$1.err"; }
# limits FILE...: --counter-limit options from the calibration runs' JSON: every error counter
# that moved on the clean link may rise by 5 x its largest clean rise + 20; so may rxe's two
# timeout-driven counters (completer_retry_err, duplicate_request: its 67 ms ACK timeout fires
# when the host deschedules a TCG vCPU) even when the calibration saw them at 0 (a clean record
# run once showed completer_retry_err +1 after two calibrations at 0). Any other error counter
# keeps the rule's 0: a sequence error never moved on a clean link. Prints what was measured.
limits() {
  python3 -S - "$@" <<'PY'
import json, sys
seen = {"hw_counters/completer_retry_err": 0, "hw_counters/duplicate_request": 0}
for path in sys.argv[1:]:
    d = json.load(open(path))
    m = d["measurements"][0]
    assert m["error"] == "" and not m["cut"], m
    assert m.get("lat", {}).get("wrong", 0) == 0 and m.get("bw", {}).get("wrong", 0) == 0, m
    sys.stderr.write("%s: %s; lat p50 %s us, bw %s MB/s, %.1f s\n" % (
        path, m["connection"], m.get("lat", {}).get("p50_us"), m.get("bw", {}).get("mb_s"),
        d["seconds"]))
    c = d["counters"][0]["counters"]
    sys.stderr.write("moved: %s\n" % " ".join(
        "%s+%d(%s)" % (x["name"], x["delta"], x["class"]) for x in c if x["delta"]))
    for x in c:
        if x["class"] == "error" and x["delta"]:
            seen[x["name"]] = max(seen.get(x["name"], 0), x["delta"])
print(" ".join("--counter-limit %s=%d" % (k, 5 * v + 20) for k, v in sorted(seen.items())))
PY
}

# 1. Clean, latency only.
for i in 1 2; do
  check cal$i "${ARGS[@]}" "${LAT[@]}" -f json -o "$TMP/cal$i.json"
  [ "$rc" = 0 ] || [ "$rc" = 1 ] || { show cal$i; fail "calibration run $i: exit $rc"; }
done
limits "$TMP/cal1.json" "$TMP/cal2.json" >"$TMP/limits" || fail "latency calibration runs' JSON"
read -r -a LIMITS <"$TMP/limits"
echo "latency-loop limits from the clean spread: ${LIMITS[*]:-none}"
python3 -S -c "import json,sys; m=json.load(open('$TMP/cal1.json'))['measurements'][0]; assert m['subject']=='$SUBJECT' and m['peer']=='$PEER_IP' and 'on the peer' in m['connection'], m" ||
  fail "the measurement is not against the peer"

# 2. Regression against the baseline; the records double as the clean case.
H=$TMP/hist
mkdir -p "$H"
for i in 1 2 3 4 5; do
  extra=()
  [ "$i" = 3 ] && extra=(--baseline "$H") # 2 runs recorded: judges nothing, says so
  check rec$i "${ARGS[@]}" "${LAT[@]}" "${LIMITS[@]}" --record "$H" "${extra[@]}"
  [ "$rc" = 0 ] || { show rec$i; fail "clean record run $i within the clean limits: exit $rc"; }
  if [ "$i" = 3 ]; then
    grep -q "^note baseline $H/.*could not judge .*(2 of 5 runs needed)" "$TMP/rec3.out" ||
      { show rec3; fail "2 runs recorded: no could-not-judge note"; }
  fi
done
pass "clean: 5 runs against the peer exit 0 within the clean limits (last ${took} ms); with 2 recorded: 'could not judge'"
DELAY=$(python3 -S -c "
import json, os, statistics
h = '$H'; f = [x for x in os.listdir(h) if x.endswith('.json')][0]
r = json.load(open(os.path.join(h, f)))['runs']
print(max(100, int(4 * statistics.median(x['figures']['$SUBJECT lat_p50_us'] for x in r))))") ||
  fail "no '$SUBJECT lat_p50_us' figure in the history"
# One direction delayed by 4 x the median one-way latency (~95 ms). In theory 2 x would do (the
# one-way figure, round trip / 2, +100%), but measured on 2026-12-05 a 47 ms delay raised p50
# only from 23.5 to 26.5 ms (+12%, just past the 10% margin): in the TCG pair most of the delay
# did not show in the figure (not understood; rxe's 67 ms ACK timeout retransmits under it). 8 x
# (218 ms) made the latency loop overrun its 11 s share (cut, no figure); the slow run therefore
# gets --budget 40.
tc qdisc add dev "$NETDEV" root netem delay "${DELAY}us" || fail "tc netem delay on $NETDEV"
QDISC=1
check slow "${ARGS[@]}" --skip bw --budget 40 "${LIMITS[@]}" --baseline "$H"
tc qdisc del dev "$NETDEV" root
QDISC=
[ "$rc" = 1 ] || { show slow; fail "netem delay ${DELAY}us: exit $rc, expected 1"; }
grep -Eq "^FAIL $SUBJECT: p(50|99) latency [0-9.]+ us, baseline [0-9.]+ us \[\+[0-9]+%\]" "$TMP/slow.out" ||
  { show slow; fail "netem delay ${DELAY}us: no latency finding against the baseline"; }
pass "regression: netem delay ${DELAY}us: exit 1, $(grep -E "^FAIL $SUBJECT: p50 latency" "$TMP/slow.out" | head -1)"

# 3. Loss, bandwidth only.
check bcal "${ARGS[@]}" "${BWCAL[@]}" -f json -o "$TMP/bcal.json"
[ "$rc" = 0 ] || [ "$rc" = 1 ] || { show bcal; fail "bandwidth calibration run: exit $rc"; }
limits "$TMP/bcal.json" >"$TMP/blimits" || { show bcal; fail "bandwidth calibration run's JSON"; }
read -r -a BLIMITS <"$TMP/blimits"
echo "bandwidth-loop limits from the clean run: ${BLIMITS[*]:-none}"
tc qdisc add dev "$NETDEV" root netem loss 2% || fail "tc netem loss on $NETDEV"
QDISC=1
check loss "${ARGS[@]}" "${BW[@]}" "${BLIMITS[@]}"
tc qdisc del dev "$NETDEV" root
QDISC=
[ "$rc" = 1 ] || { show loss; fail "netem loss 2%: exit $rc, expected 1"; }
head -1 "$TMP/loss.out" | grep -Eq "^rdmabench check: $DEV/1: error counters? rose in [0-9.]+ s: .*(retry|seq|duplicate)" ||
  { show loss; fail "loss: the first line does not name a retransmit/sequence counter"; }
pass "loss 2%: exit 1 in ${took} ms, $(head -1 "$TMP/loss.out")"
echo "check_pair_verbs.sh: all cases in $(($(date +%s) - T0)) s"
