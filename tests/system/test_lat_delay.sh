# Known answer for latency (issue #9): two netns hosts joined through a constant-delay wire, and
# `rdmabench lat` must report a one-way median within 5% of the configured delay plus the
# unshaped median. The host kernel has neither sch_netem nor sch_fq (for an EDT delay) and the
# rxe VM's netem fires 17-40% late under TCG emulation (bench/netem_lat_vm.sh), so the wire is
# tests/system/delay_line.c: two TUN devices, every packet held exactly DELAY us (FIFO, no jitter
# of its own beyond a wake-up, measured below with the 0 us baseline through the same program).
# Socket and tcp;ofi_rxm, 64 B and 4 KiB, busy polling (the default). The delay line runs
# SCHED_FIFO above both rdmabench processes (chrt 30 vs 20): on 2 cores two busy-polling sides
# and the delay line would otherwise wait for a scheduler tick (4 ms at HZ=250), and other load on
# the machine does not move the medians (what is tested is the measurement, not the scheduler).
# Not in event mode (-e): after each 1 ms of idle, a sleeping receiver's wake-up in a VM costs
# 60-130 us more than in the unshaped run, which is event mode's real cost, not a delay error.
# Baseline and delayed runs are interleaved (0, D, 0, D); the baseline is the mean of its two
# medians and each delayed median must hold. About 60 s.
source "$(dirname "$0")/lib.sh"
need_root
[ -c /dev/net/tun ] || fail "/dev/net/tun is missing (the delay wire needs TUN devices)"
CC=${CC:-cc}
command -v "$CC" >/dev/null || fail "no C compiler ($CC) to build tests/system/delay_line.c"
"$CC" -O2 -Wall -Wextra -Werror -o "$TMP/delay_line" "$SRC/tests/system/delay_line.c" ||
  fail "building delay_line.c"

DELAY=1000 # us, each direction
id=$$
NA=dlA$id NB=dlB$id TA=dla$id TB=dlb$id
IP_A=10.78.$((id % 200)).1 IP_B=10.78.$((id % 200)).2
ip netns add "$NA"; CLEANUP+=("ip netns del $NA")
ip netns add "$NB"; CLEANUP+=("ip netns del $NB")
for ns in "$NA" "$NB"; do ip -n "$ns" link set lo up; done

DL_PID=
# wire DELAY_US: (re)creates the two TUN devices behind a delay line of DELAY_US.
wire() {
  if [ -n "$DL_PID" ]; then kill "$DL_PID"; wait "$DL_PID" 2>/dev/null || true; fi
  chrt -f 30 "$TMP/delay_line" "$TA" "$TB" "$1" >"$TMP/dl.out" 2>>"$TMP/dl.err" &
  DL_PID=$!
  CLEANUP+=("kill -9 $DL_PID")
  wait_for "$TMP/dl.out" '^ready$' "$DL_PID" 10
  ip link set "$TA" netns "$NA"
  ip link set "$TB" netns "$NB"
  ip -n "$NA" addr add "$IP_A" peer "$IP_B" dev "$TA"
  ip -n "$NB" addr add "$IP_B" peer "$IP_A" dev "$TB"
  ip -n "$NA" link set "$TA" up
  ip -n "$NB" link set "$TB" up
}

PORT=18590
# median TRANSPORT SIZE -> one-way median in us ("lat" reports RTT/2 per iteration)
median() {
  local t=$1 s=$2 extra=()
  [ "$t" = ofi ] && extra=(--provider "tcp;ofi_rxm")
  ip netns exec "$NB" timeout 60 chrt -f 20 "$RB" lat "$IP_A" --port $PORT -t "$t" "${extra[@]}" -s "$s" \
    -n 300 --warmup 20 -f json -o "$TMP/lat.json" 2>"$TMP/lat.err" ||
    fail "lat -t $t -s $s: $(cat "$TMP/lat.err")"
  python3 -c "import json; print(json.load(open('$TMP/lat.json'))['rows'][0]['latency_us']['median'])"
}

declare -A BASE1 BASE2 DELAYED1 DELAYED2
CASES=("socket 64" "socket 4096" "ofi 64" "ofi 4096")
measure_all() {  # ARRAY-NAME
  local -n into=$1
  local c
  background ip netns exec "$NA" chrt -f 20 "$RB" server --port $PORT --quiet
  wait_port "$NA" $PORT
  for c in "${CASES[@]}"; do into[$c]=$(median $c); done
  kill "$BG_PID"
}
wire 0; measure_all BASE1
wire "$DELAY"; measure_all DELAYED1
wire 0; measure_all BASE2
wire "$DELAY"; measure_all DELAYED2
kill "$DL_PID"; wait "$DL_PID" 2>/dev/null || true

printf '%-12s %12s %12s %14s %10s\n' case "unshaped us" "delayed us" "expected us" deviation
bad=()
for c in "${CASES[@]}"; do
  # Each delayed run against the mean unshaped median; both must hold.
  read -r base exp d1 d2 dev < <(python3 -c "
b = (${BASE1[$c]} + ${BASE2[$c]}) / 2
e = b + $DELAY
d1, d2 = ${DELAYED1[$c]}, ${DELAYED2[$c]}
print(f'{b:.1f} {e:.1f} {d1:.1f} {d2:.1f} {max(abs(d1 - e), abs(d2 - e)) / $DELAY * 100:.1f}')")
  printf '%-12s %12s %12s %14s %9s%%\n' "$c" "$base" "$d1 / $d2" "$exp" "$dev"
  python3 -c "import sys; sys.exit(0 if $dev <= 5.0 else 1)" || bad+=("$c: ${dev}% of the delay;")
done
cat "$TMP/dl.err"
[ ${#bad[@]} = 0 ] || fail "one-way median off by more than 5% of the ${DELAY} us delay: ${bad[*]}"
pass "lat one-way medians within 5% of ${DELAY} us + the unshaped median (socket, tcp;ofi_rxm; 64 B, 4 KiB)"
