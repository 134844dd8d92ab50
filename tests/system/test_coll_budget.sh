# Collective results at the end of long runs (#13 §3) and time budgets per size, through the CLI:
# 10000 barrier iterations (2 chunks of the slowest-rank reduction) report (the per-iteration samples no longer travel through the
# store), --max-time trims the default counts (IMB -time), -D calibrates them.
source "$(dirname "$0")/lib.sh"

timeout 300 "$RB" barrier --np 2 -n 10000 --warmup 10 --use-event on -f json -o "$TMP/b.json" 2>"$TMP/b.err" \
  || fail "barrier -n 10000: $(cat "$TMP/b.err")"
json_check "$TMP/b.json" "d['rows'][0]['iterations']==10000 and d['rows'][0]['collective']['slowest_max_us'] >= d['rows'][0]['collective']['t_max_us']*0.99 > 0"
pass "barrier --np 2 -n 10000 reports (slowest max >= t_max)"

timeout 60 "$RB" allreduce --np 3 -m 4:1M --max-time 0.000001 --warmup 2 --check -f json -o "$TMP/m.json" \
  || fail "--max-time"
json_check "$TMP/m.json" "all(r['iterations']==1 and r['collective']['wrong']==0 for r in d['rows']) and d['run']['extra']['max_time_s']==1e-06"
pass "--max-time 1 us: one iteration per size, still checked"

timeout 60 "$RB" barrier --np 2 -D 0.3 -f json -o "$TMP/d.json" || fail "-D"
json_check "$TMP/d.json" "d['rows'][0]['iterations']>10 and d['run']['extra']['duration_s']==0.3"
pass "-D 0.3: iterations calibrated"

expect_error "--duration and --iters" "$RB" barrier --np 2 -D 1 -n 5
expect_error "--max-time" "$RB" barrier --np 2 --max-time=-1
pass "usage errors"
