# `rdmabench pairs` across 6 netns hosts on a bridge (inside a seventh namespace), one rank each.
# Unshaped: exit 0 with --fail-on-outlier and no outliers. Then two faults at once:
#  - a slow NODE: host 3 (rank 2) gets a token bucket (tbf, 20 Mbit/s) on both ends of its
#    veth, its own egress and the bridge port's egress towards it, so every link of rank 2 is
#    slow in both directions;
#  - a slow PAIR: hosts 1 and 4 (ranks 0 and 3) each send to the other through an htb class of
#    20 Mbit/s chosen by a u32 filter on the destination address; their other traffic takes the
#    default class (10 Gbit/s, i.e. unshaped).
# The bandwidth outliers must be exactly node rank 2 and the links 0 -> 3 and 3 -> 0 (named by
# their hosts), nothing else; latency findings, if any, may only name those; and
# --fail-on-outlier must exit 1. (netem does not exist on this kernel; tbf and htb do.)
# --outlier-k 100 (threshold >= 11x the median): the 6 hosts share 2 busy cores, and an unshaped
# link measured 9.5x slower than the median in a trial with k = 5; the shaping costs ~250x.
source "$(dirname "$0")/lib.sh"
# Ranks started by hand: rank 0's store requires a token (docs/rendezvous.md, "Access token").
export RDMABENCH_TOKEN=${RDMABENCH_TOKEN:-systest-$$}
need_root
command -v tc >/dev/null || fail "tc (iproute2) is missing"

id=$$
NET=10.79.$((id % 200))
N=6
netns_bridge "$N" "$NET" rbp rbph rbpp

# run_all NAME ARGS...: rank k-1 in host k, rendezvous at host 1. Sets RC to rank 0's status
# and fails if any other rank fails. The 6 hosts share this machine's cores, so every rank
# sleeps on completion events (-e on) instead of busy polling.
run_all() {
  local name=$1; shift
  local port=$((20000 + RANDOM % 12000)) pids=() k rc
  for k in $(seq 1 $N); do
    ip netns exec "${HOSTS[$((k - 1))]}" timeout 120 "$RB" pairs "$@" --rank $((k - 1)) \
      --world-size $N --rendezvous "$NET.1:$port" --run-id "$name" --timeout 20 -e on \
      -n 200 --warmup 10 --bw-size 64K --window 4 --bw-iters 6 --outlier-k 100 \
      >"$TMP/$name.$k.out" 2>"$TMP/$name.$k.err" &
    pids+=($!)
  done
  RC=0
  wait "${pids[0]}" || RC=$?
  for k in $(seq 2 $N); do
    wait "${pids[$((k - 1))]}" || fail "$name: rank $((k - 1)) failed: $(cat "$TMP/$name.$k.err")"
  done
}

start=$(date +%s)
run_all quiet -f json --fail-on-outlier
[ "$RC" = 0 ] || fail "unshaped run: exit $RC: $(cat "$TMP/quiet.1.err")"
json_check "$TMP/quiet.1.out" "len(d['links'])==30 and d['outliers']==[] and d['run']['extra']['rounds']==5"
[ ! -s "$TMP/quiet.1.err" ] || fail "unshaped run printed: $(cat "$TMP/quiet.1.err")"
pass "6 netns hosts unshaped: 30 ordered pairs, no outliers, exit 0 ($(($(date +%s) - start)) s)"

# Slow node: host 3, both directions of its veth.
ip netns exec "${HOSTS[2]}" tc qdisc add dev "rbph3.$id" root tbf rate 20mbit burst 16k latency 1s
ip netns exec "$BR" tc qdisc add dev "rbpp3.$id" root tbf rate 20mbit burst 16k latency 1s
# Slow pair: 1 <-> 4 only, by destination.
slow_to() { # HOSTINDEX DEV DST
  ip netns exec "${HOSTS[$1]}" tc qdisc add dev "$2" root handle 1: htb default 10 2>/dev/null
  ip netns exec "${HOSTS[$1]}" tc class add dev "$2" parent 1: classid 1:10 htb rate 10gbit 2>/dev/null
  ip netns exec "${HOSTS[$1]}" tc class add dev "$2" parent 1: classid 1:20 htb rate 20mbit ceil 20mbit
  ip netns exec "${HOSTS[$1]}" tc filter add dev "$2" parent 1: protocol ip prio 1 u32 \
    match ip dst "$3/32" flowid 1:20
}
slow_to 0 "rbph1.$id" "$NET.4"
slow_to 3 "rbph4.$id" "$NET.1"

start=$(date +%s)
run_all shaped -f json --fail-on-outlier --plot "$TMP/map.svg"
[ "$RC" = 1 ] || fail "--fail-on-outlier: exit $RC, expected 1: $(cat "$TMP/shaped.1.err")"
grep -q "pairs: .* outlier(s): " "$TMP/shaped.1.err" || fail "no outlier summary: $(cat "$TMP/shaped.1.err")"
python3 - "$TMP/shaped.1.out" "$NET" <<'PY' || fail "shaped findings: $(cat "$TMP/shaped.1.err")"
import json, sys
d = json.load(open(sys.argv[1]))
net = sys.argv[2]
bw = sorted((o['kind'], o.get('rank', o.get('src')), o.get('dst')) for o in d['outliers'] if o['figure'] == 'bandwidth')
assert bw == [('link', 0, 3), ('link', 3, 0), ('node', 2, None)], (bw, d['outliers'])
node = [o for o in d['outliers'] if o['figure'] == 'bandwidth' and o['kind'] == 'node'][0]
assert node['address'].startswith(net + '.3'), node
assert 'node 2 ' in node['text'] and net + '.3' in node['text'], node
for o in d['outliers']:
    if o['figure'] == 'latency':
        ok = (o['kind'] == 'node' and o['rank'] == 2) or (o['kind'] == 'link' and {o['src'], o['dst']} == {0, 3})
        assert ok, ('latency finding outside the shaped set', o)
flags = {(l['src'], l['dst']): l['bw_outlier'] for l in d['links']}
assert all(flags[(s, t)] == ('node' if 2 in (s, t) else 'link' if {s, t} == {0, 3} else '') for (s, t) in flags), flags
print('bandwidth findings:', [o['text'] for o in d['outliers'] if o['figure'] == 'bandwidth'])
PY
if command -v gnuplot >/dev/null; then
  grep -q "<svg" "$TMP/map.svg" || fail "heat map not drawn"
  [ -z "${RBP_KEEP_MAP:-}" ] || cp "$TMP/map.svg" "$RBP_KEEP_MAP"
fi
pass "slow node rank 2 ($NET.3) and slow pair 0 <-> 3 named, nothing else; exit 1 ($(($(date +%s) - start)) s)"
