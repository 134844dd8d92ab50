# `rdmabench congestion --np 6` on loopback: valid JSON with the split (2 victims, 4
# aggressors) and the pattern, every figure and impact factor finite and > 0, for incast and
# alltoall; CSV has one row per metric; the table names the split; bad values are one-line
# usage errors. (Loopback has no fabric: the factors only prove the mechanics.)
source "$(dirname "$0")/lib.sh"

common=(-n 200 --warmup 10 --bw-size 32K --bw-iters 10 --window 4 --agg-size 32K --timeout 20)
for pattern in incast alltoall; do
  timeout 120 "$RB" congestion --np 6 --pattern $pattern "${common[@]}" -f json \
    -o "$TMP/c-$pattern.json" 2>"$TMP/c-$pattern.err" ||
    fail "congestion --np 6 --pattern $pattern: $(cat "$TMP/c-$pattern.err")"
  json_check "$TMP/c-$pattern.json" "d['run']['test']=='congestion' and d['run']['extra']['ranks']==6 and d['run']['extra']['victims']==2 and d['run']['extra']['aggressors']==4 and d['run']['extra']['pattern']=='$pattern' and d['run']['extra']['seed']==1 and d['run']['extra']['launch'] and len(d['split']['victims'])==2 and sorted(d['split']['victims']+d['split']['aggressors'])==list(range(6)) and sorted(d['split']['ring'])==d['split']['victims'] and len(d['metrics'])==2 and all(m[ph][q] is not None and m[ph][q]>0 and m[ph][q]<1e12 for m in d['metrics'] for ph in ('isolated','congested','impact') for q in ('p50','p99')) and d['aggressors']['mb_per_s']>0 and d['aggressors']['streams']==(3 if '$pattern'=='incast' else 12)"
  pass "congestion --np 6 --pattern $pattern: valid JSON, split 2/4, finite factors > 0"
done
json_check "$TMP/c-incast.json" "d['split']['incast_target'] in d['split']['aggressors'] and d['metrics'][0]['kind']=='latency' and d['metrics'][1]['unit']=='MB/s' and d['metrics'][1]['isolated']['p50']>=d['metrics'][1]['isolated']['p99']"

timeout 120 "$RB" congestion --np 4 --victims 0.5 --seed 7 "${common[@]}" -f csv \
  >"$TMP/c.csv" 2>"$TMP/c-csv.err" || fail "congestion csv: $(cat "$TMP/c-csv.err")"
python3 -c "
import csv, math
r = list(csv.DictReader(open('$TMP/c.csv')))
assert len(r) == 2 and all(x['seed'] == '7' and x['victims'] == '2' and x['aggressors'] == '2' for x in r), r
assert all(math.isfinite(float(x[k])) and float(x[k]) > 0 for x in r for k in ('iso_p50', 'cong_p99', 'impact_p50', 'impact_p99')), r
" || fail "csv: $(cat "$TMP/c.csv")"
pass "congestion --np 4 --victims 0.5 --seed 7: 2 CSV rows"

timeout 120 "$RB" congestion --np 5 --victims 0.4 "${common[@]}" >"$TMP/c.txt" \
  2>"$TMP/c-t.err" || fail "congestion table: $(cat "$TMP/c-t.err")"
grep -q "^# congestion (GPCNeT's impact factor): 5 ranks: 2 victims, 3 aggressors" "$TMP/c.txt" ||
  fail "table header: $(cat "$TMP/c.txt")"
grep -q "^# aggressors: incast into rank" "$TMP/c.txt" || fail "no pattern line: $(cat "$TMP/c.txt")"
[ "$(grep -cE '^RR Two-sided (Lat|BW)' "$TMP/c.txt")" = 2 ] || fail "table rows: $(cat "$TMP/c.txt")"
pass "table names the split and the pattern"

expect_status 2 "--victims 0.2: 1 victim(s) and 3 aggressor(s) of 4 ranks" "$RB" congestion --np 4
expect_status 2 "--victims 1.5: out of range" "$RB" congestion --np 6 --victims 1.5
expect_status 2 "--pattern bcast: unknown (valid: incast, alltoall)" "$RB" congestion --np 6 --pattern bcast
expect_status 2 "--format osu: no congestion layout" "$RB" congestion --np 6 -f osu
pass "bad values: one-line usage errors, exit 2"
