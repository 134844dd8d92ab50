#!/usr/bin/env bash
# Where the time goes: rdmabench and perftest side by side under `perf record`, on the same
# soft-RoCE device, in one VM boot (ci/rxe-vm run). For the figures bench/rxe_vs_perftest.sh
# finds behind perftest, it records the client process of each tool with the cpu-clock software
# event (TCG has no PMU) and prints, per tool: the share of samples in user space vs kernel,
# and the top symbols (self time) of the client process.
#
#   bench/rxe_profile.sh [--build DIR] [--figure write_rate|send_rate|send_lat4k|all]
#
# Figures: write_rate / send_rate = 8 B stream (ib_write_bw / ib_send_bw -s 8 vs
# rdmabench bw --mode stream --tx-depth 128), send_lat4k = ib_send_lat vs rdmabench lat at 4 KiB.
# Needs perf (linux-perf; the guest shares the host's root filesystem) and perftest.
# TCG emulation on a shared host: the split between symbols is what to read, not the times.
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$SRC/build
FIGURE=all
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$(readlink -f "$2"); shift 2 ;;
    --figure) FIGURE=$2; shift 2 ;;
    -h|--help) sed -n 2,13p "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
RB=$BUILD/rdmabench
[ -x "$RB" ] || { echo "no $RB: build first" >&2; exit 2; }
command -v ib_send_lat >/dev/null || { echo "perftest is not installed" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf is not installed (apt-get install linux-perf)" >&2; exit 2; }

if [ "${RXE_VM:-}" != 1 ]; then
  exec timeout 2400 "$SRC/ci/rxe-vm" run --timeout 2200 -- bash "$0" --build "$BUILD" --figure "$FIGURE"
fi

# ---- inside the VM ----------------------------------------------------------------------
TMP=$(mktemp -d)
PORT=18700
"$RB" server --bind "$RXE_IP" --port $PORT --quiet &
SERVER=$!
trap 'kill -9 $SERVER 2>/dev/null; rm -rf "$TMP"' EXIT
sleep 1
X=(-d "$RXE_DEV" -x "$RXE_GID_INDEX")
CLOCK=()
case $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource) in
  hpet | acpi_pm) CLOCK=(--clock tsc) ;;
esac
echo "perf: $(perf version 2>&1 | head -1); kernel $(uname -r); perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid)"

# report NAME DATA: user/kernel split and the top self-time symbols of the recorded command,
# with the threads the samples fell in (comm, distinct thread ids).
report() {
  local name=$1 data=$2
  echo "--- $name"
  perf report -i "$data" --stdio --sort comm 2>/dev/null | awk '/^ +[0-9.]+%/ && n++ < 3 { printf "    threads: %s %s\n", $1, $2 }'
  perf script -i "$data" -F tid 2>/dev/null | sort -u | wc -l | sed 's/^/    distinct threads sampled: /'
  perf report -i "$data" --stdio --no-children --sort dso 2>/dev/null |
    awk '/^ +[0-9.]+%/ && n++ < 8 { printf "    %-8s %s\n", $1, $2 }'
  echo "    top symbols (self):"
  perf report -i "$data" --stdio --no-children --sort dso,symbol 2>/dev/null |
    awk '/^ +[0-9.]+%/ && n++ < 25 { $1 = sprintf("%-8s", $1); print "    " $0 }'
}

# profile_pair NAME SERVER_CMD... -- CLIENT_CMD...: starts the perftest server side (if any),
# records the client.
perftest_profile() {
  local name=$1 tool=$2 size=$3 iters=$4
  timeout 300 "$tool" "${X[@]}" -s "$size" -n "$iters" -p 18800 >/dev/null 2>&1 &
  local spid=$!
  sleep 1
  timeout 300 perf record -e cpu-clock -F 4000 -o "$TMP/$name.data" -- \
    "$tool" "${X[@]}" -s "$size" -n "$iters" -p 18800 "$RXE_IP" >"$TMP/$name.out" 2>&1 ||
    { echo "$tool failed: $(tail -3 "$TMP/$name.out")"; kill -9 $spid 2>/dev/null || true; return 0; }
  wait $spid 2>/dev/null || true
  awk -v s="$size" '$1 == s && !n++ { print "    perftest: " $0 }' "$TMP/$name.out"
  report "$name" "$TMP/$name.data"
}
rdmabench_profile() {
  local name=$1
  shift
  timeout 300 perf record -e cpu-clock -F 4000 -o "$TMP/$name.data" -- \
    "$RB" "$@" -t verbs "${X[@]}" "$RXE_IP" --port $PORT "${CLOCK[@]}" >"$TMP/$name.out" 2>&1 ||
    { echo "rdmabench failed: $(tail -3 "$TMP/$name.out")"; return 0; }
  awk '/^ +[0-9]+ / && !n++ { print "    rdmabench: " $0 }' "$TMP/$name.out"
  report "$name" "$TMP/$name.data"
}

if [ "$FIGURE" = all ] || [ "$FIGURE" = write_rate ]; then
  echo "== 8 B RDMA write message rate (stream, tx-depth 128)"
  perftest_profile perftest_write_8 ib_write_bw 8 100000
  rdmabench_profile rdmabench_write_8 bw --op write -s 8 -n 100000 --mode stream --tx-depth 128 --warmup 256
fi
if [ "$FIGURE" = all ] || [ "$FIGURE" = send_rate ]; then
  echo "== 8 B send message rate (stream, tx-depth 128)"
  perftest_profile perftest_send_8 ib_send_bw 8 100000
  rdmabench_profile rdmabench_send_8 bw --op send -s 8 -n 100000 --mode stream --tx-depth 128 --warmup 256
fi
if [ "$FIGURE" = all ] || [ "$FIGURE" = send_lat4k ]; then
  echo "== 4 KiB send latency"
  perftest_profile perftest_send_lat_4k ib_send_lat 4096 5000
  rdmabench_profile rdmabench_send_lat_4k lat --op send -s 4096 -n 5000 --warmup 100
fi
