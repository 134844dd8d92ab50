#!/usr/bin/env bash
# Instrument 2 of issue #26 on a real verbs device: user-space instructions per message of the
# client, rdmabench against perftest, on soft-RoCE in one VM boot (ci/rxe-vm run).
#
#   bench/rxe_instructions.sh [--build DIR] [--reps N] [--messages N]
#
# Method: the client (the side that posts and polls) runs under valgrind's callgrind, the server
# natively. Each figure is counted with N and with 2N messages (or iterations); the difference of
# the two totals divided by N cancels start-up, connection set-up, the handshakes and the report,
# so what is left is the post path, the completion path and the loop around them, in the tool
# and in the provider library (librxe, libibverbs) alike: user space only, as callgrind counts.
# The kernel's share (rxe's doorbell write() and its soft interrupt) is not counted for either.
# Empty polls are counted too: where the client waits for the device (a full send queue) the
# number of empty polls depends on timing, which the spread over --reps shows; a difference that
# comes out at or below zero in any rep (more empty polls in the shorter run) makes the case
# "invalid", not met. Latency is not measured here: a ping-pong client spends tens of thousands
# of empty polls per round trip on TCG soft-RoCE, which swamps the post and completion paths
# (tried: send_lat/write_lat differences of -21000..+23000 instructions per iteration).
# Cases (both tools, same size, same count, same depth; rdmabench bw --mode stream --tx-depth 128
# is ib_*_bw's method and default depth, rdmabench --clock tsc reads rdtsc as perftest does):
#   write  8 B  ib_write_bw -s 8            rdmabench bw --op write -s 8
#   write  8 B  ib_write_bw -s 8 -l 32      rdmabench bw --op write -s 8 --post-list 32
#   send   8 B  ib_send_bw -s 8             rdmabench bw --op send -s 8
# Output: per case each tool's median instructions per message [min-max over reps] and the
# ratio rdmabench / perftest of the medians. Goal (issue #26): ratio <= 1.00 for every op.
# Takes about 5 min per rep on a 2-core TCG host (callgrind in an emulated CPU).
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$SRC/build
REPS=3
MSGS=2000
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$(readlink -f "$2"); shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --messages) MSGS=$2; shift 2 ;;
    -h|--help) sed -n 2,27p "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
RB=$BUILD/rdmabench
[ -x "$RB" ] || { echo "no $RB: build first" >&2; exit 2; }
command -v ib_send_lat >/dev/null || { echo "perftest is not installed" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
[ $((MSGS % 32)) -eq 0 ] || { echo "--messages must be a multiple of 32 (perftest -l 32)" >&2; exit 2; }

if [ "${RXE_VM:-}" != 1 ]; then
  echo "host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  exec timeout 3600 "$SRC/ci/rxe-vm" run --timeout 3300 -- \
    bash "$0" --build "$BUILD" --reps "$REPS" --messages "$MSGS"
fi

# ---- inside the VM ----------------------------------------------------------------------
TMP=$(mktemp -d)
PORT=18710
"$RB" server --bind "$RXE_IP" --port $PORT --quiet &
SERVER=$!
trap 'kill -9 $SERVER 2>/dev/null; rm -rf "$TMP"' EXIT
sleep 1
X=(-d "$RXE_DEV" -x "$RXE_GID_INDEX")
CG=(valgrind --tool=callgrind --dump-instr=no --callgrind-out-file="$TMP/cg.out")

total_ir() { awk '/^summary:/ { print $2 }' "$TMP/cg.out"; }

# perftest_ir TOOL N ARGS... -> user-space instructions of the client run
perftest_ir() {
  local tool=$1 n=$2 i
  shift 2
  for i in 1 2 3; do  # perftest's clock calibration sometimes fails on a loaded host: retry
    rm -f "$TMP/cg.out"
    timeout 300 "$tool" "${X[@]}" "$@" -n "$n" -p 18810 >/dev/null 2>&1 &
    local spid=$!
    sleep 1
    if timeout 300 "${CG[@]}" "$tool" "${X[@]}" "$@" -n "$n" -p 18810 "$RXE_IP" >"$TMP/pt.out" 2>&1; then
      wait $spid || true
      total_ir
      return 0
    fi
    kill -9 $spid 2>/dev/null || true
    wait $spid 2>/dev/null || true
  done
  echo "perftest $tool $* -n $n failed: $(tail -3 "$TMP/pt.out")" >&2
  return 1
}

# rdmabench_ir TEST N ARGS... -> user-space instructions of the client run
rdmabench_ir() {
  local test=$1 n=$2
  shift 2
  rm -f "$TMP/cg.out"
  timeout 300 "${CG[@]}" "$RB" "$test" -t verbs "${X[@]}" "$RXE_IP" --port $PORT -n "$n" \
    --clock tsc --timeout 120 -f json -o "$TMP/rb.json" "$@" >"$TMP/rb.out" 2>&1 ||
    { echo "rdmabench $test $* -n $n failed: $(grep -v "^==" "$TMP/rb.out" | tail -3)" >&2; return 1; }
  total_ir
}

median() {  # values... -> the median
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
spread() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }'; }

echo "VM load average: $(cut -d' ' -f1-3 /proc/loadavg); $MSGS and $((2 * MSGS)) messages, reps: $REPS (interleaved)"
printf '%-18s %22s %22s %7s  %s\n' case "perftest [min-max]" "rdmabench [min-max]" ratio goal
pass=0 total=0
# figure LABEL "PERFTEST TOOL ARGS" "RDMABENCH TEST ARGS"
figure() {
  local label=$1 pt=($2) rb=($3) r a b pts=() rbs=()
  for ((r = 0; r < REPS; r++)); do
    a=$(perftest_ir "${pt[0]}" "$MSGS" "${pt[@]:1}")
    b=$(perftest_ir "${pt[0]}" $((2 * MSGS)) "${pt[@]:1}")
    pts+=($(((b - a) / MSGS)))
    a=$(rdmabench_ir "${rb[0]}" "$MSGS" "${rb[@]:1}")
    b=$(rdmabench_ir "${rb[0]}" $((2 * MSGS)) "${rb[@]:1}")
    rbs+=($(((b - a) / MSGS)))
  done
  local p q ratio ok verdict
  p=$(median "${pts[@]}")
  q=$(median "${rbs[@]}")
  total=$((total + 1))
  # Valid only when every rep of both tools came out above zero (else empty polls decided it).
  if printf '%s\n' "${pts[@]}" "${rbs[@]}" | awk '$1 <= 0 { bad = 1 } END { exit bad }'; then
    ratio=$(awk -v a="$q" -v b="$p" 'BEGIN { printf "%.2f", a / b }')
    ok=$(awk -v x="$ratio" 'BEGIN { print (x <= 1.0) }')
    pass=$((pass + ok))
    verdict=$([ "$ok" = 1 ] && echo met || echo MISSED)
  else
    ratio=-
    verdict="invalid (a rep's difference <= 0: empty polls, see the header)"
  fi
  printf '%-18s %22s %22s %7s  <= 1.0 %s\n' "$label" "$p [$(spread "${pts[@]}")]" \
    "$q [$(spread "${rbs[@]}")]" "$ratio" "$verdict"
}

BW=(--mode stream --tx-depth 128 --warmup 256)
figure "write 8 B" "ib_write_bw -s 8" "bw --op write -s 8 ${BW[*]}"
figure "write 8 B -l 32" "ib_write_bw -s 8 -l 32" "bw --op write -s 8 --post-list 32 ${BW[*]}"
figure "send 8 B" "ib_send_bw -s 8" "bw --op send -s 8 ${BW[*]}"
echo "summary: $pass of $total cases at or under perftest's instructions per message (median)"
echo "VM load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
