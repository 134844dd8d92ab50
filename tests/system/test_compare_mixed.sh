# `rdmabench compare` through the CLI on logs that mix or hide what they are (issue 35, items
# 14-17; fixtures in tests/fixtures/README.md): an IMB log appended to an OSU one is two sections,
# never one merged table; an OSU collective's unstated process count is named and --np asserts
# it; a title contradicting its header is refused; `-G tty` graph lines are no rows. About 1 s.
source "$(dirname "$0")/lib.sh"
FIX=$SRC/tests/fixtures

# 14. OSU latency + IMB PingPong in one file: compare refuses to pick, --section picks.
expect_status 2 "holds 2 latency tables and nothing says which to use" \
  "$RB" compare "$FIX/osu532_latency_then_imb2021.txt" "$FIX/osu532_latency_ofi_rxm.txt" --test latency
"$RB" compare "$FIX/osu532_latency_then_imb2021.txt" "$FIX/osu532_latency_ofi_rxm.txt" --test latency \
  --section 2 -f json >"$TMP/c.json" 2>"$TMP/err" || fail "--section 2: $(cat "$TMP/err")"
json_check "$TMP/c.json" "[r['values'][0] for r in d['groups'][0]['rows'] if r['bytes'] == 0] == [13892.26]"
pass "IMB appended to OSU: two latency sections, IMB's PingPong chosen by --section 2"

# 15. osu_allreduce (4 processes, not printed) against a 2-rank rdmabench allreduce.
"$RB" compare "$FIX/rdmabench_allreduce_np2.json" "$FIX/osu532_allreduce_np4.txt" >"$TMP/out" \
  2>"$TMP/err" || fail "OSU vs 2 ranks: $(cat "$TMP/err")"
grep -q "(OSU) does not print its process count, and rdmabench_allreduce_np2.json ran 2 ranks" \
  "$TMP/out" "$TMP/err" || fail "no note on OSU's process count: $(cat "$TMP/out" "$TMP/err")"
expect_status 2 "ran 2 processes, not 4 (--np)" \
  "$RB" compare "$FIX/rdmabench_allreduce_np2.json" "$FIX/osu532_allreduce_np4.txt" --np 4
pass "OSU's unstated process count named; --np 4 against 2 ranks refused"

# 16. A bandwidth table under a latency title.
{ echo "# OSU MPI Latency Test v7.0.1"; tail -n +2 "$FIX/osu532_bw_ob1_tcp.txt"; } >"$TMP/bwlat.txt"
expect_status 2 "is a latency test but its column header" \
  "$RB" compare "$TMP/bwlat.txt" "$FIX/osu532_latency_ofi_rxm.txt"
grep -q "bwlat.txt:2: the OSU title .* is a latency test but its column header .* is bandwidth" \
  "$TMP/err" || fail "title contradiction: $(cat "$TMP/err")"
pass "a bandwidth header under a latency title is refused"

# 17. -G tty graphs: 4 rows, nothing failed.
"$RB" compare "$FIX/osu701_latency_graph_tty.txt" "$FIX/osu532_latency_ofi_rxm.txt" -f json \
  >"$TMP/g.json" 2>"$TMP/err" || fail "graph log: $(cat "$TMP/err")"
json_check "$TMP/g.json" "not any(r.get('failed') for r in d['groups'][0]['rows']) and \
[r['bytes'] for r in d['groups'][0]['rows'] if r['values'][0] is not None] == [1, 2, 4, 8]"
pass "osu_latency -G tty: graph lines are not rows"
