# libfabric tcp;ofi_rxm through the real CLI across two netns hosts: latency at the protocol
# thresholds with data checks, bandwidth, RMA write, the provider A/B table, and the errors
# (unknown provider, unknown domain, peer not started).
source "$(dirname "$0")/lib.sh"
need_root
netns_pair
B=(ip netns exec "$NS_B")
P="tcp;ofi_rxm"

background ip netns exec "$NS_A" "$RB" server --port 18515 --quiet
wait_port "$NS_A" 18515

# Sizes around inject (64), eager (16 KiB) and SAR (128 KiB) limits, checked end to end.
for s in 0 1 64 16384 16385 65536 131072 131073 1M; do
  "${B[@]}" timeout 120 "$RB" lat "$IP_A" -t ofi --provider "$P" -s "$s" -n 50 --warmup 20 --check -f json -o "$TMP/lat$s.json" ||
    fail "ofi lat size $s"
done
json_check "$TMP/lat131073.json" "d['rows'][0]['bytes']==131073 and d['run']['local']['provider']=='tcp;ofi_rxm' and 'eager' in str(d['run']['local'])"
pass "ofi tcp;ofi_rxm latency 0..1M with --check across hosts"

"${B[@]}" timeout 120 "$RB" bw "$IP_A" -t ofi --provider "$P" -m 4K:256K -n 10 -f json -o "$TMP/bw.json" || fail "ofi bw"
json_check "$TMP/bw.json" "len(d['rows'])==7 and all(r['mb_per_s']>0 for r in d['rows'])"
"${B[@]}" timeout 120 "$RB" bw "$IP_A" -t ofi --provider "$P" -s 64K -n 10 --op write >/dev/null || fail "ofi write bw"
"${B[@]}" timeout 120 "$RB" lat "$IP_A" -t ofi --provider "$P" -s 4K -n 100 --op write >/dev/null || fail "ofi write lat"
"${B[@]}" timeout 120 "$RB" lat "$IP_A" -t ofi --provider "$P" --op tagged -s 0,64,65536 -n 50 --check -f json -o "$TMP/tag.json" || fail "ofi --op tagged"
json_check "$TMP/tag.json" "d['run']['op']=='tagged' and [r['bytes'] for r in d['rows']]==[0,64,65536]"
pass "ofi bandwidth sweep, RMA write, --op tagged"

# A/B: two variants against the same server, one table with both columns and the ratio.
"${B[@]}" timeout 120 "$RB" lat "$IP_A" -s 64 -n 300 --compare "socket,ofi:$P" -f json -o "$TMP/ab.json" || fail "A/B"
json_check "$TMP/ab.json" "[v['label'] for v in d['variants']]==['socket','ofi:tcp;ofi_rxm'] and abs(d['by_size'][0]['ratio ofi:tcp;ofi_rxm / socket'] - d['by_size'][0]['ofi:tcp;ofi_rxm']/d['by_size'][0]['socket']) < 1e-9"
"${B[@]}" timeout 120 "$RB" lat "$IP_A" -s 64 -n 300 --compare "socket,ofi:$P" >"$TMP/ab.txt" || fail "A/B table"
grep -q "ratio 2/1" "$TMP/ab.txt" || fail "A/B table lacks the ratio column: $(cat "$TMP/ab.txt")"
pass "A/B comparison (JSON ratio checked, table)"

expect_status 2 "provider" "${B[@]}" "$RB" lat "$IP_A" -t ofi --provider "nosuch;ofi_rxm" -s 8 -n 10
expect_status 2 "domain" "${B[@]}" "$RB" lat "$IP_A" -t ofi --provider "$P" --domain nosuchdomain -s 8 -n 10
expect_error "Connection refused" "${B[@]}" "$RB" lat "$IP_A" -p 18599 -t ofi --provider "$P" -s 8 -n 10
expect_error "--op tagged: only for -t ofi" "${B[@]}" "$RB" lat "$IP_A" -t socket --op tagged -s 8
pass "ofi errors: unknown provider, unknown domain, peer not started, --op tagged off ofi"
