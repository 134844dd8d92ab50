# Server on one netns host, client on another (veth): socket latency and bandwidth across a
# real (virtual) link, the server serving several tests in a row.
source "$(dirname "$0")/lib.sh"
need_root
netns_pair

background ip netns exec "$NS_A" "$RB" server --port 18515
wait_port "$NS_A" 18515

ip netns exec "$NS_B" timeout 60 "$RB" lat "$IP_A" -t socket -m 0:4K -n 300 -f json -o "$TMP/lat.json" || fail "lat across netns"
json_check "$TMP/lat.json" "len(d['rows'])==14 and d['rows'][0]['bytes']==0 and all(r['latency_us']['count']==300 for r in d['rows'])"
pass "lat across hosts"

ip netns exec "$NS_B" timeout 60 "$RB" bw "$IP_A" -t socket -s 64K -n 20 -f json -o "$TMP/bw.json" || fail "bw across netns"
json_check "$TMP/bw.json" "d['rows'][0]['mb_per_s'] > 0"
ip netns exec "$NS_B" timeout 60 "$RB" bw "$IP_A" -t socket -s 1M -n 5 --bidir >"$TMP/bibw.txt" || fail "bibw"
grep -q "MB/s" "$TMP/bibw.txt" || fail "bibw table lacks MB/s: $(cat "$TMP/bibw.txt")"
pass "bw and bibw across hosts; server served three tests in a row"

# The table header names both hosts' addresses.
ip netns exec "$NS_B" timeout 60 "$RB" lat "$IP_A" -t socket -s 8 -n 100 >"$TMP/t.txt" || fail "table"
grep -q "$IP_A" "$TMP/t.txt" || fail "header lacks server address: $(cat "$TMP/t.txt")"
pass "table header"
