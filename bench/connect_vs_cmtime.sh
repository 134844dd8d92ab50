#!/usr/bin/env bash
# rdmabench connect -R vs rdma-core's cmtime on the same soft-RoCE device, in one VM boot
# (ci/rxe-vm run).
#
#   bench/connect_vs_cmtime.sh [--build DIR] [--reps N] [--conns N]
#
# Both tools connect RC QPs through rdma_cm on rxe0, client and server on the device's own
# address. Like for like:
#   - one connection (cmtime -c 1 vs rdmabench connect -R -n 1): the setup time of a connection,
#     cmtime's resolve addr + resolve route + create qp + connect totals against rdmabench's
#     create + connect totals (rdmabench's connect step holds the resolves and the QP);
#   - N connections (-c N vs -n N): the same sums. cmtime runs each step for all N at once
#     (asynchronous rdma_cm events, all outstanding); rdmabench connects one at a time (its
#     Connector::connect blocks), so this ratio is the cost of not overlapping, said as such.
# Each figure is measured --reps times (default 5) per tool, interleaved A B A B ...; each rep
# gives one ratio rdmabench / cmtime, and the line shows the median ratio and the min-max spread
# of the ratios (plus each tool's median, ms). cmtime's server is started once per rep.
# Soft-RoCE under TCG emulation on a shared host is noisy and slow (rdma_cm's events wait for
# guest timer ticks): the ratios compare two tools on one emulated device, nothing more.
# Needs rdmacm-utils (cmtime). Output: one line per figure; exit 0 unless a run failed.
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$SRC/build
REPS=5
CONNS=50
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$(readlink -f "$2"); shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --conns) CONNS=$2; shift 2 ;;
    -h|--help) sed -n 2,21p "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
RB=$BUILD/rdmabench
[ -x "$RB" ] || { echo "no $RB: build first" >&2; exit 2; }
command -v cmtime >/dev/null || { echo "cmtime is not installed (apt-get install rdmacm-utils)" >&2; exit 2; }

if [ "${RXE_VM:-}" != 1 ]; then
  echo "host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  exec timeout 3000 "$SRC/ci/rxe-vm" run --timeout 2700 -- \
    env RXE_VM=1 bash "$0" --build "$BUILD" --reps "$REPS" --conns "$CONNS"
fi

# ---- inside the VM ----------------------------------------------------------------------
TMP=$(mktemp -d)
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$TMP"' EXIT
PORT=7471

# cmtime N: prints the setup time in ms (resolve addr + resolve route + create qp + connect).
cm() {
  PORT=$((PORT + 1))
  cmtime -b "$RXE_IP" -p "$PORT" >"$TMP/srv" 2>&1 &
  local srv=$!
  sleep 0.5
  timeout 120 cmtime -s "$RXE_IP" -p "$PORT" -c "$1" >"$TMP/cm" 2>&1 || { cat "$TMP/cm" >&2; return 1; }
  kill "$srv" 2>/dev/null || true
  wait "$srv" 2>/dev/null || true
  awk -F'[:]' '/^(resolve addr|resolve route|create qp|connect) *:/ { split($2, f, " "); s += f[1] }
    END { printf "%.3f\n", s }' "$TMP/cm"
}
# rb N: the same for rdmabench connect -R (create + connect totals), ms.
rb() {
  timeout 300 "$RB" connect -t verbs -d "${RXE_DEV:-rxe0}" -R --bind "$RXE_IP" -n "$1" -f json \
    -o "$TMP/rb.json" 2>"$TMP/rb.err" || { cat "$TMP/rb.err" >&2; return 1; }
  python3 -S -c "import json; d=json.load(open('$TMP/rb.json')); print('%.3f' % sum(s['total_ms'] for s in d['steps'] if s['step'] in ('create','connect')))"
}
figure() { # NAME N
  local a b ratios=() as=() bs=()
  for _ in $(seq "$REPS"); do
    a=$(rb "$2")
    b=$(cm "$2")
    as+=("$a") bs+=("$b")
    ratios+=("$(python3 -S -c "print($a / $b)")")
  done
  python3 -S - "$1" "${ratios[*]}" "${as[*]}" "${bs[*]}" <<'PY'
import statistics, sys
name, r, a, b = sys.argv[1], *(list(map(float, x.split())) for x in sys.argv[2:])
print("%-34s rdmabench %9.2f ms  cmtime %9.2f ms  ratio %.2f [%.2f-%.2f] (%d reps)" % (
    name, statistics.median(a), statistics.median(b), statistics.median(r), min(r), max(r), len(r)))
PY
}
echo "rdmabench $("$RB" -V | head -1 | cut -d' ' -f2-) vs cmtime (rdmacm-utils $(dpkg-query -W -f '${Version}' rdmacm-utils 2>/dev/null)), $REPS reps, interleaved"
figure "setup, 1 connection" 1
figure "setup, $CONNS connections (cmtime overlaps)" "$CONNS"
