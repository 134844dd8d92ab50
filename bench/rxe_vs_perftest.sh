#!/usr/bin/env bash
# rdmabench vs perftest on the same soft-RoCE device, in one VM boot (ci/rxe-vm run).
#
#   bench/rxe_vs_perftest.sh [--build DIR] [--reps N] [--lat-iters N] [--bw-msgs N]
#
# Figures (loopback on rxe0, client -> the device's own address, same GID index for both tools):
#   latency, median (perftest t_typical vs rdmabench median): ib_send_lat, ib_write_lat,
#     ib_read_lat at 2 B and 4096 B (read: full round trip in both tools; send/write: RTT/2)
#   bandwidth, average (perftest BW average vs rdmabench BW): ib_write_bw, ib_send_bw at 64 KiB
# perftest prints MB/sec = 2^20 B/s (4.5); it is converted to 10^6 B/s before the ratio.
# Each figure is measured --reps times per tool, alternating tools; the best median (latency)
# and the best average (bandwidth) of each tool are compared.
# Ratio = rdmabench / perftest. Goal: latency ratio <= 1.0, bandwidth ratio >= 1.0.
# Output: one line per figure, then a summary line; exit 0 unless a run failed.
# Soft-RoCE under TCG emulation on a shared host is noisy: these ratios compare two tools on the
# same emulated device, they say nothing about real hardware.
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$SRC/build
REPS=3
LAT_ITERS=1000
BW_MSGS=320
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$(readlink -f "$2"); shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --lat-iters) LAT_ITERS=$2; shift 2 ;;
    --bw-msgs) BW_MSGS=$2; shift 2 ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
RB=$BUILD/rdmabench
[ -x "$RB" ] || { echo "no $RB: build first" >&2; exit 2; }
command -v ib_send_lat >/dev/null || { echo "perftest is not installed" >&2; exit 2; }

if [ "${RXE_VM:-}" != 1 ]; then
  exec timeout 1800 "$SRC/ci/rxe-vm" run --timeout 1500 -- \
    bash "$0" --build "$BUILD" --reps "$REPS" --lat-iters "$LAT_ITERS" --bw-msgs "$BW_MSGS"
fi

# ---- inside the VM ----------------------------------------------------------------------
TMP=$(mktemp -d)
PORT=18700
"$RB" server --bind "$RXE_IP" --port $PORT --quiet &
SERVER=$!
trap 'kill -9 $SERVER 2>/dev/null; rm -rf "$TMP"' EXIT
sleep 1
X=(-d "$RXE_DEV" -x "$RXE_GID_INDEX")

# perftest TOOL SIZE ITERS -> prints the figure (t_typical us, or BW average in 10^6 B/s)
perftest() {
  local tool=$1 size=$2 iters=$3 out=$TMP/pt.out i
  for i in 1 2 3; do  # perftest's clock calibration sometimes fails on a loaded host: retry
    timeout 120 "$tool" "${X[@]}" -s "$size" -n "$iters" -p 18800 >/dev/null 2>&1 &
    local spid=$!
    sleep 1
    if timeout 120 "$tool" "${X[@]}" -s "$size" -n "$iters" -p 18800 "$RXE_IP" >"$out" 2>&1; then
      wait $spid || true
      case $tool in
        *_lat) awk -v s="$size" '$1 == s && $5 ~ /^[0-9.]+$/ { print $5; ok = 1 } END { exit !ok }' "$out" && return 0 ;;
        *_bw) awk -v s="$size" '$1 == s && $4 ~ /^[0-9.]+$/ { printf "%.3f\n", $4 * 1.048576; ok = 1 } END { exit !ok }' "$out" && return 0 ;;
      esac
    fi
    kill -9 $spid 2>/dev/null || true
    wait $spid 2>/dev/null || true
  done
  echo "perftest $tool -s $size failed: $(tail -3 "$out")" >&2
  return 1
}

# rdmabench lat|bw OP SIZE ITERS -> the figure (median us, or BW in 10^6 B/s)
rdmabench() {
  local test=$1 op=$2 size=$3 iters=$4 out=$TMP/rb.json
  local extra=(-n "$iters" --warmup 100)
  [ "$test" = bw ] && extra=(-n $((iters / 64)) -w 64 --warmup 2)
  timeout 120 "$RB" "$test" -t verbs "${X[@]}" "$RXE_IP" --port $PORT --op "$op" -s "$size" \
    "${extra[@]}" -f json -o "$out" 2>"$TMP/rb.err" ||
    { echo "rdmabench $test --op $op -s $size failed: $(cat "$TMP/rb.err")" >&2; return 1; }
    # one row: latency_us.median or mb_per_s (grep: a python3 start costs seconds in the VM)
  if [ "$test" = lat ]; then
    grep -o '"median":[0-9.e+-]*' "$out" | head -1 | cut -d: -f2
  else
    grep -o '"mb_per_s":[0-9.e+-]*' "$out" | head -1 | cut -d: -f2
  fi
}
best() {  # best KIND values...: min for lat, max for bw
  local kind=$1; shift
  printf '%s\n' "$@" | sort -g | { if [ "$kind" = lat ]; then head -1; else tail -1; fi; }
}

echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource) (available: $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource))"
printf '%-26s %12s %12s %7s  %s\n' figure perftest rdmabench ratio goal
pass=0 total=0
figure() {  # KIND TOOL OP SIZE
  local kind=$1 tool=$2 op=$3 size=$4 r p pts=() rbs=()
  for ((r = 0; r < REPS; r++)); do
    if [ "$kind" = lat ]; then
      pts+=("$(perftest "$tool" "$size" "$LAT_ITERS")")
      rbs+=("$(rdmabench lat "$op" "$size" "$LAT_ITERS")")
    else
      rbs+=("$(rdmabench bw "$op" "$size" "$BW_MSGS")")
      pts+=("$(perftest "$tool" "$size" "$BW_MSGS")")
    fi
  done
  p=$(best "$kind" "${pts[@]}")
  r=$(best "$kind" "${rbs[@]}")
  local label unit goal ratio ok
  if [ "$kind" = lat ]; then unit="median us"; goal="<= 1.0"; else unit="avg MB/s"; goal=">= 1.0"; fi
  label="$tool $size B"
  ratio=$(awk -v a="$r" -v b="$p" 'BEGIN { printf "%.2f", a / b }')
  if [ "$kind" = lat ]; then ok=$(awk -v x="$ratio" 'BEGIN { print (x <= 1.0) }')
  else ok=$(awk -v x="$ratio" 'BEGIN { print (x >= 1.0) }'); fi
  total=$((total + 1)); pass=$((pass + ok))
  printf '%-26s %12s %12s %7s  %s %s (%s; reps: perftest %s | rdmabench %s)\n' "$label" "$p" "$r" \
    "$ratio" "$goal" "$([ "$ok" = 1 ] && echo met || echo MISSED)" "$unit" "${pts[*]}" "${rbs[*]}"
}

for size in 2 4096; do
  figure lat ib_send_lat send $size
  figure lat ib_write_lat write $size
  figure lat ib_read_lat read $size
done
figure bw ib_write_bw write 65536
figure bw ib_send_bw send 65536
echo "summary: $pass of $total figures meet the goal (latency <= 1.0x perftest, bandwidth >= 1.0x)"
