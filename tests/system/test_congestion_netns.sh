# `rdmabench congestion` across 3 netns hosts on a bridge (inside a fourth namespace), 2 ranks
# per host, 2 victims and 4 aggressors, incast. Every bridge port's egress (the way into a host)
# is a token bucket of 50 Mbit/s with a queue of up to 50 ms. The split puts the victims on 2
# different hosts and the incast target next to a victim (congestion_plan.h), so the 3 remote
# aggressors fill the queue into the target's host, which the victim's ring traffic must cross.
# Asserts: the split and pattern are in the header; the isolated figures are sane (bandwidth
# per victim within the 50 Mbit/s = 6.25 MB/s a host can receive, latency below 20 ms); the
# incast's effect is real: latency impact p50 >= 1.5 and bandwidth impact p50 >= 1.5 (a shaped
# queue makes them ~10x and ~2x or more; a run without the incast gives ~1).
source "$(dirname "$0")/lib.sh"
# Ranks started by hand: rank 0's store requires a token (docs/rendezvous.md, "Access token").
export RDMABENCH_TOKEN=${RDMABENCH_TOKEN:-systest-$$}
need_root
command -v tc >/dev/null || fail "tc (iproute2) is missing"

id=$$
NET=10.81.$((id % 200))
H=3
netns_bridge $H "$NET" rbc rbch rbcp
for k in $(seq 1 $H); do
  ip netns exec "$BR" tc qdisc add dev "rbcp$k.$id" root tbf rate 50mbit burst 16k latency 50ms
done

# Ranks 2(k-1) and 2(k-1)+1 in host k; rendezvous at host 1; every rank sleeps on completion
# events (the 6 ranks share this machine's cores).
N=6
port=$((20000 + RANDOM % 12000))
pids=()
start=$(date +%s)
for r in $(seq 0 $((N - 1))); do
  k=$((r / 2 + 1))
  ip netns exec "${HOSTS[$((k - 1))]}" timeout 60 "$RB" congestion --rank $r --world-size $N \
    --rendezvous "$NET.1:$port" --run-id cong$id --timeout 20 -e on --victims 0.3 \
    --pattern incast -n 50 --warmup 5 --bw-size 32K --bw-iters 8 --window 4 --agg-size 64K \
    -f json >"$TMP/r$r.out" 2>"$TMP/r$r.err" &
  pids+=($!)
done
for r in $(seq 0 $((N - 1))); do
  wait "${pids[$r]}" || fail "rank $r failed: $(cat "$TMP/r$r.err")"
done
took=$(($(date +%s) - start))
python3 - "$TMP/r0.out" "$NET" <<'PY' || fail "congestion figures: $(cat "$TMP/r0.out")"
import json, sys
d = json.load(open(sys.argv[1]))
net = sys.argv[2]
e, s = d['run']['extra'], d['split']
assert e['ranks'] == 6 and e['victims'] == 2 and e['aggressors'] == 4 and e['pattern'] == 'incast', e
node = {p['rank']: p['node'] for p in s['placement']}
v = s['victims']
assert node[v[0]] != node[v[1]], ('victims share a host', s)
assert any(node[s['incast_target']] == node[x] for x in v), ('target apart from the victims', s)
lat, bw = d['metrics']
assert lat['kind'] == 'latency' and bw['kind'] == 'bandwidth', d['metrics']
# Sane isolated figures: a host receives at most 6.25 MB/s (5% slack for the token bucket's
# burst); an unloaded exchange takes well under 20 ms.
assert 0.3 < bw['isolated']['p50'] <= 6.25 * 1.05, ('isolated bandwidth', bw)
assert 0 < lat['isolated']['p50'] < 20000, ('isolated latency', lat)
assert lat['impact']['p50'] >= 1.5, ('latency impact p50 < 1.5', lat)
assert bw['impact']['p50'] >= 1.5, ('bandwidth impact p50 < 1.5', bw)
print('latency us iso/cong p50 %.0f/%.0f (x%.1f), p99 x%.1f; bandwidth MB/s iso/cong p50 %.2f/%.2f (x%.1f); aggressors %.1f MB/s'
      % (lat['isolated']['p50'], lat['congested']['p50'], lat['impact']['p50'], lat['impact']['p99'],
         bw['isolated']['p50'], bw['congested']['p50'], bw['impact']['p50'], d['aggressors']['mb_per_s']))
PY
pass "3 netns hosts, incast next to a victim behind 50 Mbit/s: impact factors >= 1.5 ($took s)"
