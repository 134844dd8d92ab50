#!/usr/bin/env bash
# Latency under netem (issue #9's known answer, kept as a measurement: it is too noisy under
# TCG to be a CI test). Boots the rxe VM (the host kernel has no sch_netem) and runs there:
# two network namespaces joined by a veth pair, `rdmabench server` in one, `rdmabench lat` from
# the other, and sockperf (an independent tool) over the same link. Unshaped first, then
# `tc netem delay 10ms` on both ends: every packet waits 10 ms once, so a round trip grows by
# 20 ms and the one-way latency by 10 ms. Verdicts (met / MISSED) for socket and tcp;ofi_rxm, -e:
#   - every sample is >= 10000 us one way (min_us): no sample can beat the configured delay;
#   - the median is 10000 us + the unshaped median, at most 25% above (a netem that did nothing,
#     or a `lat` that reported the whole round trip, is far outside);
#   - the median is within 15% of sockperf's median one-way latency on the same shaped link.
# Why not the 5% of 1 ms the issue asked for: under TCG, netem's timers fire late with a wide
# spread (measured here: sockperf's one-way median 10.9 ms for 10 ms, p99 13.5 ms; with 1 ms,
# +20% for rdmabench and sockperf alike), so a 5% bound on the configured delay fails for every
# tool. Three runs on 2026-11-30 (socket): +17%, +27% over 10 ms, 1.04x and 1.13x sockperf;
# tcp;ofi_rxm then busy polled (no event mode yet) and read +33-39%, 1.16-1.23x sockperf.
# With KVM or real hosts the bounds could become a test.
# Usage: bench/netem_lat_vm.sh [path/to/rdmabench]   (default build/rdmabench; root)
set -u -o pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RB=$(readlink -f "${1:-$SRC/build/rdmabench}")
if [ "${RXE_VM:-}" != 1 ]; then
  echo "host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  exec timeout 900 "$SRC/ci/rxe-vm" run --timeout 600 -- bash "$0" "$RB"
fi
fail() { echo "FAILED: $*"; exit 1; }
id=$$
A=rbna$id B=rbnb$id
TMP=$(mktemp -d)
SERVER=
cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null
  [ -n "${SOCKPERF:-}" ] && kill "$SOCKPERF" 2>/dev/null
  ip netns del "$A" 2>/dev/null
  ip netns del "$B" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT

modprobe sch_netem 2>/dev/null
ip netns add "$A" && ip netns add "$B" || fail "ip netns add"
ip link add "va$id" netns "$A" type veth peer name "vb$id" netns "$B" || fail "ip link add veth"
ip -n "$A" addr add 10.77.0.1/24 dev "va$id"
ip -n "$B" addr add 10.77.0.2/24 dev "vb$id"
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set "va$id" up && ip -n "$B" link set "vb$id" up || fail "veth up"

ip netns exec "$A" "$RB" server --bind 10.77.0.1 --port 18600 --quiet 2>"$TMP/server.err" &
SERVER=$!
ip netns exec "$A" sockperf sr --tcp -i 10.77.0.1 -p 18601 >/dev/null 2>&1 &
SOCKPERF=$!
i=0
until ip netns exec "$A" ss -ltn | grep -q '10.77.0.1:18600 '; do
  i=$((i + 1))
  [ $i -lt 300 ] || fail "server never listened: $(cat "$TMP/server.err")"
  sleep 0.1
done

# lat NAME TRANSPORT_ARGS...: "median min" one-way (us) of an 8 B ping-pong, 100 iterations.
lat() {
  local name=$1
  shift
  ip netns exec "$B" "$RB" lat 10.77.0.1 --port 18600 "$@" -e -s 8 -n 100 \
    --warmup 10 --timeout 30 -f json -o "$TMP/$name.json" 2>"$TMP/$name.err" ||
    fail "lat $name: $(cat "$TMP/$name.err")"
  python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["rows"][0]["latency_us"]; print(l["median"], l["min"])' \
    "$TMP/$name.json"
}
# sockperf's median one-way latency (us) on the same link (its epoll ping-pong, 14 B, 3 s).
sockperf_median() {
  command -v sockperf >/dev/null || fail "sockperf is not installed (ci/install-deps.sh installs it)"
  ip netns exec "$B" sockperf pp --tcp -i 10.77.0.1 -p 18601 -t 3 -m 14 >"$TMP/sp.out" 2>&1 ||
    fail "sockperf: $(tail -3 "$TMP/sp.out")"
  awk '/percentile 50.000/ { print $NF; ok = 1 } END { exit !ok }' "$TMP/sp.out" ||
    fail "no median in sockperf's output: $(tail -5 "$TMP/sp.out")"
}
i=0
until ip netns exec "$A" ss -ltn | grep -q '10.77.0.1:18601 '; do
  i=$((i + 1))
  [ $i -lt 300 ] || fail "sockperf server never listened"
  sleep 0.1
done

declare -A base
for t in socket ofi; do
  args=(-t "$t")
  [ $t = ofi ] && args+=(--provider "tcp;ofi_rxm")
  base[$t]=$(lat "$t-unshaped" "${args[@]}") || exit 1
done
tc -n "$A" qdisc add dev "va$id" root netem delay 10ms || fail "tc netem on $A"
tc -n "$B" qdisc add dev "vb$id" root netem delay 10ms || fail "tc netem on $B"
sp=$(sockperf_median) || exit 1
for t in socket ofi; do
  args=(-t "$t")
  [ $t = ofi ] && args+=(--provider "tcp;ofi_rxm")
  shaped=$(lat "$t-shaped" "${args[@]}") || exit 1
  python3 - "$t" "${base[$t]}" "$shaped" "$sp" <<'PY' || exit 1
import sys
t = sys.argv[1]
base = float(sys.argv[2].split()[0])
median, low = (float(x) for x in sys.argv[3].split())
sp = float(sys.argv[4])
want = base + 10000.0
line = ("%s: one-way median %.1f us unshaped; with netem delay 10ms on both ends median %.1f us "
        "(expected %.1f, %+.1f%%, limit +25%%), min %.1f us (limit >= 10000), sockperf median "
        "%.1f us (ratio %.3f, limit 0.85-1.15)" % (t, base, median, want,
        100 * (median / want - 1), low, sp, median / sp))
ok = low >= 10000.0 and want <= median <= 1.25 * want and 0.85 <= median / sp <= 1.15
print(("met: " if ok else "MISSED: ") + line)
PY
done
