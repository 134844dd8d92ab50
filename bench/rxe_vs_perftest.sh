#!/usr/bin/env bash
# rdmabench vs perftest on the same soft-RoCE device, in one VM boot (ci/rxe-vm run).
#
#   bench/rxe_vs_perftest.sh [--build DIR] [--reps N] [--lat-iters N] [--bw-msgs N]
#
# Figures (loopback on rxe0, client -> the device's own address, same GID index for both tools):
#   latency, median (perftest t_typical vs rdmabench median): ib_send_lat, ib_write_lat,
#     ib_read_lat at 2 B and 4096 B (read: full round trip in both tools; send/write: RTT/2)
#   bandwidth, average (perftest BW average vs rdmabench BW): ib_write_bw, ib_send_bw at 64 KiB
#   message rate at 8 B (ib_write_bw / ib_send_bw -s 8 -n 5000; the MB/s ratio at one size is
#   the message-rate ratio); rdmabench bw --mode stream --tx-depth 128 (perftest's default);
#   and 8 B with post lists of 32 (ib_write_bw -l 32 vs rdmabench bw --post-list 32), when this
#   rdmabench has --post-list
# perftest prints MB/sec = 2^20 B/s (4.5); it is converted to 10^6 B/s before the ratio.
# Each figure is measured --reps times (default 5) per tool, interleaved A B A B ...; each rep
# gives one ratio rdmabench / perftest, and the table shows the median ratio and the min-max
# spread of the ratios (plus each tool's median figure). Goal: latency ratio <= 1.0, bandwidth
# ratio >= 1.0 (on the median ratio). Bandwidth uses `rdmabench bw --mode stream` (perftest's
# method) when this build has it, else the windowed method (said in the output).
# The host's load average is printed before and after (the VM shares the host's cores).
# Output: one line per figure, then a summary line; exit 0 unless a run failed.
# Soft-RoCE under TCG emulation on a shared host is noisy: these ratios compare two tools on the
# same emulated device, they say nothing about real hardware.
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$SRC/build
REPS=5
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
  echo "host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  exec timeout 3000 "$SRC/ci/rxe-vm" run --timeout 2700 -- \
    bash "$0" --build "$BUILD" --reps "$REPS" --lat-iters "$LAT_ITERS" --bw-msgs "$BW_MSGS"
fi

# ---- inside the VM ----------------------------------------------------------------------
TMP=$(mktemp -d)
PORT=18700
X=(-d "$RXE_DEV" -x "$RXE_GID_INDEX")

# perftest TOOL SIZE ITERS -> prints the figure (t_typical us, or BW average in 10^6 B/s)
perftest() {
  local tool=$1 size=$2 iters=$3 out=$TMP/pt.out i
  for i in 1 2 3; do  # perftest's clock calibration sometimes fails on a loaded host: retry
    timeout 120 "$tool" "${X[@]}" "${PL[@]}" -s "$size" -n "$iters" -p 18800 >/dev/null 2>&1 &
    local spid=$!
    sleep 1
    if timeout 120 "$tool" "${X[@]}" "${PL[@]}" -s "$size" -n "$iters" -p 18800 "$RXE_IP" >"$out" 2>&1; then
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
  local extra=(-n "$iters" --warmup 100 "${CLOCK[@]}")
  if [ "$test" = bw ]; then
    if [ ${#BW_MODE[@]} -gt 0 ]; then  # stream: -n counts messages, as perftest's -n
      extra=(-n "$iters" --tx-depth 128 --warmup 256 "${BW_MODE[@]}" "${CLOCK[@]}" "${PL[@]}")
    else
      extra=(-n $((iters / 64)) -w 64 --warmup 2)
    fi
  fi
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
median() {  # values... -> the median (mean of the middle two for an even count)
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

PL=()  # post list of the next figure, both tools (perftest -l, rdmabench --post-list)
BW_MODE=()
if "$RB" bw --help 2>/dev/null | grep -q -- '--mode'; then
  BW_MODE=(--mode stream)
  echo "bandwidth: rdmabench bw --mode stream (perftest's method)"
else
  echo "bandwidth: this rdmabench has no --mode stream yet: windowed method (osu_bw) vs perftest's stream"
fi
CS=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
echo "clocksource: $CS (available: $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource))"
# perftest reads the cycle counter (rdtsc) whatever the CPU advertises; where the kernel's
# clocksource is a slow one (TCG: hpet, ~0.9 us per read) rdmabench's auto clock would fall back
# to clock_gettime inside every sample. Like for like: rdmabench --clock tsc too.
CLOCK=()
case $CS in
  hpet | acpi_pm) CLOCK=(--clock tsc); echo "rdmabench runs with --clock tsc (perftest's rdtsc; clocksource $CS is slow)" ;;
esac
# The server takes the same clock: its responder's waits read it (engine::Progress's checks).
"$RB" server --bind "$RXE_IP" --port $PORT --quiet "${CLOCK[@]}" &
SERVER=$!
trap 'kill -9 $SERVER 2>/dev/null; rm -rf "$TMP"' EXIT
sleep 1
echo "rdmabench clock: $("$RB" lat -t verbs "${X[@]}" "$RXE_IP" --port $PORT -s 2 -n 10 --warmup 1 "${CLOCK[@]}" -f json 2>/dev/null | grep -o '"clock":{[^}]*}' | head -1)"
echo "VM load average: $(cut -d' ' -f1-3 /proc/loadavg), reps per figure: $REPS (interleaved)"
printf '%-22s %11s %11s %8s %15s  %s\n' figure perftest rdmabench ratio "ratio min-max" goal
pass=0 total=0
figure() {  # KIND TOOL OP SIZE [MESSAGES]
  local kind=$1 tool=$2 op=$3 size=$4 msgs=${5:-$BW_MSGS} r p pts=() rbs=()
  for ((r = 0; r < REPS; r++)); do
    if [ "$kind" = lat ]; then
      pts+=("$(perftest "$tool" "$size" "$LAT_ITERS")")
      rbs+=("$(rdmabench lat "$op" "$size" "$LAT_ITERS")")
    else
      rbs+=("$(rdmabench bw "$op" "$size" "$msgs")")
      pts+=("$(perftest "$tool" "$size" "$msgs")")
    fi
  done
  local ratios=() i
  for ((i = 0; i < REPS; i++)); do
    ratios+=("$(awk -v a="${rbs[$i]}" -v b="${pts[$i]}" 'BEGIN { printf "%.4f", a / b }')")
  done
  p=$(median "${pts[@]}")
  r=$(median "${rbs[@]}")
  local label unit goal ratio ok lo hi
  if [ "$kind" = lat ]; then unit="t_typical us"; goal="<= 1.0"; else unit="avg MB/s"; goal=">= 1.0"; fi
  label="$tool $size B${PL[*]:+ ${PL[*]}}"
  ratio=$(median "${ratios[@]}")
  ratio=$(awk -v x="$ratio" 'BEGIN { printf "%.2f", x }')
  lo=$(printf '%s\n' "${ratios[@]}" | sort -g | head -1)
  hi=$(printf '%s\n' "${ratios[@]}" | sort -g | tail -1)
  if [ "$kind" = lat ]; then ok=$(awk -v x="$ratio" 'BEGIN { print (x <= 1.0) }')
  else ok=$(awk -v x="$ratio" 'BEGIN { print (x >= 1.0) }'); fi
  total=$((total + 1)); pass=$((pass + ok))
  printf '%-22s %11s %11s %8s %15s  %s %s (%s; reps: perftest %s | rdmabench %s)\n' "$label" "$p" "$r" \
    "$ratio" "$(printf '%.2f-%.2f' "$lo" "$hi")" "$goal" "$([ "$ok" = 1 ] && echo met || echo MISSED)" \
    "$unit" "${pts[*]}" "${rbs[*]}"
}

for size in 2 4096; do
  figure lat ib_send_lat send $size
  figure lat ib_write_lat write $size
  figure lat ib_read_lat read $size
done
figure bw ib_write_bw write 65536
figure bw ib_send_bw send 65536
# Message rate at 8 B (same size in both tools, so the MB/s ratio is the message-rate ratio).
figure bw ib_write_bw write 8 5000
figure bw ib_send_bw send 8 5000
# Message rate at 8 B with post lists of 32 (one doorbell per 32 messages in both tools).
if "$RB" bw --help 2>/dev/null | grep -q -- '--post-list'; then
  PL=(-l 32)
  figure bw ib_write_bw write 8 5120  # perftest: iterations must be a multiple of the list
  PL=()
fi
echo "summary: $pass of $total figures meet the goal on the median ratio (latency <= 1.0x perftest, bandwidth >= 1.0x)"
echo "VM load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
