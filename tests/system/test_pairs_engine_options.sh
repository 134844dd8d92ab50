# pairs with lat / bw's engine options (issue #37) over sockets on loopback: --mode stream, -l 4,
# --cq-mod 8 with --np 3 and --np 2 give every ordered pair a figure and the header names the
# options (JSON run.extra, the table's extra and bandwidth lines); --op write / read (socket
# emulates RDMA) complete and say so (op, round trip); bad combinations are bw's one-line usage
# errors (exit 2), before any rank starts. -e yield: several busy-polling ranks on a loaded
# 2-core host wait for scheduler ticks. About 10 s.
source "$(dirname "$0")/lib.sh"
COUNTS=(-n 100 --warmup 5 --bw-size 16K --bw-iters 3)

timeout 120 "$RB" pairs -t socket -e yield --np 3 "${COUNTS[@]}" --mode stream -l 4 --cq-mod 8 \
  -f json -o "$TMP/s3.json" 2>"$TMP/err" || fail "pairs --np 3 --mode stream: $(cat "$TMP/err")"
json_check "$TMP/s3.json" "len(d['links'])==6 and sorted((l['src'],l['dst']) for l in d['links'])==[(s,t) for s in range(3) for t in range(3) if s!=t] and all(l['lat_median_us']>0 and l['mb_per_s']>0 for l in d['links']) and d['run']['extra']['mode']=='stream' and d['run']['extra']['post_list']==4 and d['run']['extra']['cq_moderation']==8 and d['run']['extra']['bw_messages']==3*16 and d['run']['extra']['bw_warmup_messages']==2*16 and d['run']['window']==128 and d['run']['op']==''"
pass "pairs --np 3 --mode stream -l 4 --cq-mod 8: 6 ordered pairs, the options in run.extra"

timeout 120 "$RB" pairs -t socket -e yield --np 2 "${COUNTS[@]}" --mode stream -l 4 --cq-mod 8 \
  --tx-depth 32 >"$TMP/s2.txt" 2>"$TMP/err" || fail "pairs --np 2 table: $(cat "$TMP/err")"
grep -E '^# extra: ' "$TMP/s2.txt" | grep -q ' cq_moderation=8 .* mode=stream .* post_list=4 ' ||
  fail "the table's extra line lacks the options: $(grep '^# extra' "$TMP/s2.txt")"
grep -qF '# bandwidth: stream mode, 32 posts in flight, 48 x 16384 B to delivery after 32 warmup messages' \
  "$TMP/s2.txt" || fail "bandwidth line: $(grep '^# bandwidth' "$TMP/s2.txt")"
[ "$(grep -cE '^ +[01] +[01] ' "$TMP/s2.txt")" = 2 ] || fail "table rows: $(cat "$TMP/s2.txt")"
grep -E '^ +[01] +[01] ' "$TMP/s2.txt" | grep -q nan && fail "a nan figure: $(cat "$TMP/s2.txt")"
pass "pairs --np 2 table: 2 rows, extra and bandwidth lines name mode, -l, --cq-mod, --tx-depth"

for op in write read; do
  timeout 120 "$RB" pairs -t socket -e yield --np 2 "${COUNTS[@]}" --op $op -f json \
    -o "$TMP/$op.json" 2>"$TMP/err" || fail "pairs --op $op: $(cat "$TMP/err")"
  rt=False; [ $op = read ] && rt=True
  json_check "$TMP/$op.json" "d['run']['op']=='$op' and d['run']['round_trip']==$rt and len(d['links'])==2 and all(l['lat_median_us']>0 and l['mb_per_s']>0 for l in d['links'])"
done
pass "pairs --op write / read on socket (emulated RMA): both pairs measured, op and round trip in the header"

expect_status 2 "--op tagged: only for -t ofi with --ep rdm (FI_TAGGED), not -t socket" \
  "$RB" pairs --np 2 -t socket --op tagged
expect_status 2 "--window: only for --mode window (stream mode keeps --tx-depth posts in flight)" \
  "$RB" pairs --np 2 --mode stream -w 8
expect_status 2 "--cq-mod 17: out of range 1..16 (the window)" "$RB" pairs --np 2 -t socket --cq-mod 17
# Without -t: checked once the transport is chosen, still before any rank starts (one line).
expect_status 2 "--post-list 17: out of range 1..16 (the window)" "$RB" pairs --np 2 -l 17
expect_status 2 "--post-list 200: out of range 1..128 (the --tx-depth)" "$RB" pairs --np 2 --mode stream -l 200
expect_status 2 "--mode bursty: unknown (valid: window, stream)" "$RB" pairs --np 2 --mode bursty
expect_status 2 "--op: 'atomic' unknown (valid: send, write, read, tagged)" "$RB" pairs --np 2 --op atomic
pass "bw's usage errors, one line, exit 2"
