# `rdmabench pairs --np 4` on loopback: the matrix is complete (12 ordered pairs, every figure
# positive, one row per pair in CSV), the JSON is valid, the table names the schedule, the heat
# map is drawn when gnuplot is there, and bad values are one-line usage errors.
source "$(dirname "$0")/lib.sh"

timeout 120 "$RB" pairs --np 4 -n 200 --warmup 10 --bw-size 64K --window 4 --bw-iters 5 \
  -f json -o "$TMP/p.json" 2>"$TMP/p.err" || fail "pairs --np 4: $(cat "$TMP/p.err")"
json_check "$TMP/p.json" "len(d['links'])==12 and sorted((l['src'],l['dst']) for l in d['links'])==[(s,t) for s in range(4) for t in range(4) if s!=t] and all(l['lat_median_us']>0 and l['mb_per_s']>0 and l['src_host'] for l in d['links']) and len(d['matrix']['mb_per_s'])==4 and d['matrix']['mb_per_s'][1][1] is None and d['run']['extra']['rounds']==3 and d['run']['test']=='pairs' and len(d['ranks'])==4"
pass "pairs --np 4: 12 ordered pairs in 3 rounds, valid JSON"

timeout 120 "$RB" pairs --np 3 -n 100 --warmup 5 --bw-size 16K --bw-iters 3 -f csv \
  >"$TMP/p.csv" 2>"$TMP/p3.err" || fail "pairs --np 3 csv: $(cat "$TMP/p3.err")"
python3 -c "
import csv
r = list(csv.DictReader(open('$TMP/p.csv')))
assert len(r) == 6 and all(float(x['mb_per_s']) > 0 and float(x['lat_median_us']) > 0 for x in r), r
" || fail "csv: $(cat "$TMP/p.csv")"
pass "pairs --np 3 (odd, one bye per round): 6 CSV rows"

plot=()
command -v gnuplot >/dev/null && plot=(--plot "$TMP/map.png")
timeout 120 "$RB" pairs --np 4 -n 100 --warmup 5 --bw-size 16K --bw-iters 3 "${plot[@]}" \
  >"$TMP/p.txt" 2>"$TMP/pt.err" || fail "pairs table: $(cat "$TMP/pt.err")"
grep -q "^# pairs: 4 ranks, 3 rounds of disjoint pairs" "$TMP/p.txt" || fail "table header: $(cat "$TMP/p.txt")"
[ "$(grep -cE '^ +[0-3] +[0-3] ' "$TMP/p.txt")" = 12 ] || fail "table rows: $(cat "$TMP/p.txt")"
grep -q "^# placement:" "$TMP/p.txt" || fail "no placement line: $(cat "$TMP/p.txt")"
if [ ${#plot[@]} -gt 0 ]; then
  [ "$(head -c 4 "$TMP/map.png" | tail -c 3)" = PNG ] || fail "heat map is not a PNG"
  pass "table and heat map PNG"
else
  pass "table (gnuplot not installed: heat map not drawn)"
fi

expect_status 2 "--bw-size 0: out of range 1..256M" "$RB" pairs --np 2 --bw-size 0
expect_status 2 "--window 0: out of range" "$RB" pairs --np 2 --window 0
expect_status 2 "--plot map.pdf: must end in .png or .svg" "$RB" pairs --np 2 --plot map.pdf
expect_status 2 "--format osu: no pairs layout" "$RB" pairs --np 2 -f osu
expect_status 2 "--np 1: pairs measures every pair of ranks and needs at least 2" "$RB" pairs --np 1
# Paths rank 0 writes only after the measurement are checked before any rank starts.
expect_status 2 "--output /nonexistent/p.json: cannot open for writing: No such file or directory" \
  "$RB" pairs --np 2 -o /nonexistent/p.json
expect_status 2 "--plot /nonexistent/m.png: cannot open for writing" "$RB" pairs --np 2 --plot /nonexistent/m.png
pass "bad values: one-line usage errors, exit 2"
