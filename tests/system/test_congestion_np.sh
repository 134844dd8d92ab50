# `rdmabench congestion --np 6` on loopback: valid JSON with the split (2 victims, 4
# aggressors) and the pattern, every figure and impact factor finite and > 0, for incast and
# alltoall; CSV has one row per metric; the table names the split; bad values are one-line
# usage errors; a victim killed under congestion stops every rank, naming it. (Loopback has no
# fabric: the factors only prove the mechanics.)
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

# A victim dies at the start of the congested phase, while the aggressors stream (they see no
# stall, so they ask the store): every rank stops within --timeout, naming rank 3.
victim=$(python3 -c "import json; print(json.load(open('$TMP/c-incast.json'))['split']['victims'][0])")
start=$(date +%s)
RDMABENCH_TEST_HOLD=mid-run@$victim RDMABENCH_TEST_HOLD_MS=3000 timeout 60 "$RB" congestion \
  --np 6 "${common[@]:0:12}" --timeout 4 -f json >"$TMP/dead.out" 2>"$TMP/dead.err" &
pid=$!
for _ in $(seq 1 200); do
  grep -q "holding at mid-run" "$TMP/dead.err" && break
  sleep 0.1
done
hold=$(sed -n 's/.*test hook: pid \([0-9]*\) holding at mid-run.*/\1/p' "$TMP/dead.err" | head -1)
[ -n "$hold" ] || fail "victim $victim never held at mid-run: $(cat "$TMP/dead.err")"
kill -9 "$hold"
rc=0
wait $pid || rc=$?
took=$(($(date +%s) - start))
[ "$rc" != 0 ] || fail "exit 0 after a victim died"
[ "$took" -le 20 ] || fail "took $took s to stop after victim $victim died (timeout 4 s)"
[ "$(error_ranks "$TMP/dead.err" "rank $victim on host .* died" | wc -w)" -ge 5 ] ||
  fail "not every rank named the dead victim $victim: $(cat "$TMP/dead.err")"
grep -q "during congested: aggressor" "$TMP/dead.err" || fail "no streaming aggressor named it: $(cat "$TMP/dead.err")"
pass "a victim killed under congestion: the 5 others stop naming rank $victim ($took s, exit $rc)"

expect_status 2 "--victims 0.2: 1 victim(s) and 3 aggressor(s) of 4 ranks" "$RB" congestion --np 4
expect_status 2 "--victims 1.5: out of range" "$RB" congestion --np 6 --victims 1.5
expect_status 2 "--pattern bcast: unknown (valid: incast, alltoall)" "$RB" congestion --np 6 --pattern bcast
expect_status 2 "--format osu: no congestion layout" "$RB" congestion --np 6 -f osu
pass "bad values: one-line usage errors, exit 2"
