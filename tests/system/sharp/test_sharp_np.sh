# --algo sharp end to end with the stand-in libsharp_coll (tests/sharp_standin): `info` in its
# three states, barrier and checked allreduce with --np 4 (data through the library and the
# out-of-band collectives), how requests are split, the dtype/op check, and every failure the
# stand-in can inject: each rank exits within the timeout with one line naming the cause.
# Usage: bash test_sharp_np.sh /path/to/SHARP-enabled/rdmabench
#   env RDMABENCH_SHARP_LIBRARY = the stand-in .so; RDMABENCH_PLAIN = the default build's binary.
source "$(dirname "$0")/../lib.sh"
[ -n "${RDMABENCH_SHARP_LIBRARY:-}" ] || fail "RDMABENCH_SHARP_LIBRARY must name the stand-in libsharp_coll.so"
[ -f "$RDMABENCH_SHARP_LIBRARY" ] || fail "stand-in library $RDMABENCH_SHARP_LIBRARY not built"
export RDMABENCH_SHARP_LIBRARY
unset SHARP_STANDIN_FAIL SHARP_STANDIN_FAIL_RANK SHARP_STANDIN_FAIL_AFTER SHARP_STANDIN_DTYPES \
  SHARP_STANDIN_OPS SHARP_COLL_JOB_QUOTA_PAYLOAD_PER_OST SHARP_COLL_LOG_LEVEL

# --- info: three states -------------------------------------------------------------------
PLAIN=${RDMABENCH_PLAIN:-}
if [ -n "$PLAIN" ] && [ "$(readlink -f "$PLAIN")" != "$RB" ]; then
  "$PLAIN" info >"$TMP/info0" || fail "info (default build)"
  grep -Eq '^sharp +not built +this rdmabench has no SHARP backend' "$TMP/info0" || fail "info without SHARP: $(cat "$TMP/info0")"
  rc=0; "$PLAIN" allreduce --np 2 --algo sharp -s 8 2>"$TMP/nb.err" || rc=$?
  [ "$rc" = 2 ] && grep -q -- "--algo sharp: not built" "$TMP/nb.err" || fail "--algo sharp without SHARP: rc $rc $(cat "$TMP/nb.err")"
  pass "default build: info says 'not built', --algo sharp refused before any rank starts"
fi
"$RB" info >"$TMP/info1" || fail "info"
grep -Eq '^sharp +usable +2048 payload bytes per OST, 16 OSTs' "$TMP/info1" || fail "info usable: $(cat "$TMP/info1")"
grep -q "library: $(readlink -f "$RDMABENCH_SHARP_LIBRARY")" "$TMP/info1" || fail "info names the library: $(cat "$TMP/info1")"
"$RB" info -f json >"$TMP/info.json" || fail "info json"
json_check "$TMP/info.json" "[e for e in d if e.get('collective')=='sharp' and e['usable'] and 'float64' in e['details']['caps']['dtypes'] and 'sum' in e['details']['caps']['ops']]"
RDMABENCH_SHARP_LIBRARY=/nonexistent/libsharp_coll.so "$RB" info >"$TMP/info2"
grep -Eq '^sharp +unusable +library not found: dlopen /nonexistent/libsharp_coll.so: .*No such file' "$TMP/info2" || fail "info without the library: $(cat "$TMP/info2")"
SHARP_STANDIN_FAIL=init "$RB" info >"$TMP/info3"
grep -Eq '^sharp +unusable +sharp_coll_init: Cannot connect to SHARPD / Aggregation Manager \(-8\)' "$TMP/info3" || fail "info, init failing: $(cat "$TMP/info3")"
SHARP_STANDIN_FAIL=notree "$RB" info >"$TMP/info4"
grep -Eq '^sharp +unusable +sharp_coll_comm_init: No SHARP trees available \(-13\)' "$TMP/info4" || fail "info, no trees: $(cat "$TMP/info4")"
pass "info: usable (library, caps), library not found, sharp_coll_init error, no trees"

# --- barrier and allreduce through the library ----------------------------------------------
timeout 60 "$RB" barrier --np 4 --algo sharp -n 200 --warmup 10 -f json -o "$TMP/b.json" || fail "barrier --algo sharp"
json_check "$TMP/b.json" "len(d['rows'])==1 and d['rows'][0]['collective']['algorithm']=='sharp' and d['rows'][0]['collective']['ranks']==4 and d['rows'][0]['collective']['t_avg_us']>0 and d['run']['extra']['sharp']['caps']['payload_per_ost_bytes']==2048"
pass "barrier --algo sharp --np 4"

timeout 120 "$RB" allreduce --np 4 --algo sharp -m 8:1M -n 5 --warmup 1 --check -f json -o "$TMP/a.json" || fail "allreduce --algo sharp --check"
json_check "$TMP/a.json" "len(d['rows'])==18 and all(r['collective']['wrong']==0 and r['collective']['algorithm']=='sharp' and r['collective']['busbw_gb_per_s'] is None and r['collective']['ost_payloads']==-(-r['bytes']//2048) for r in d['rows'])"
for dt in int32 int64 float64; do
  for op in sum min max; do
    timeout 60 "$RB" allreduce --np 3 --algo sharp --dtype $dt --op $op -m 8:64K -n 3 --warmup 0 --check -f csv >"$TMP/c.csv" ||
      fail "allreduce --algo sharp --dtype $dt --op $op"
  done
done
pass "allreduce --algo sharp --check: 8 B..1 MiB on 4 ranks, int32/int64/float64 x sum/min/max on 3"

# Table: busbw n/a with the footnote; the per-OST payload from the environment and the split.
SHARP_COLL_JOB_QUOTA_PAYLOAD_PER_OST=256 SHARP_COLL_LOG_LEVEL=4 timeout 60 "$RB" allreduce --np 2 --algo sharp -s 64K -n 2 --warmup 0 --check >"$TMP/t.out" 2>"$TMP/t.err" ||
  fail "allreduce with a 256-byte quota: $(cat "$TMP/t.err")"
grep -Eq ' n/a +0( desched)?$' "$TMP/t.out" || fail "busbw n/a and #wrong 0: $(cat "$TMP/t.out")"
grep -q "busbw n/a" "$TMP/t.out" && grep -q "ceil(bytes / 256) OST payloads of 256 bytes (caps_query), 256 for 65536 bytes" "$TMP/t.out" ||
  fail "footnotes: $(cat "$TMP/t.out")"
grep -q "65536 bytes, 256 OST payload(s) of <= 256 bytes" "$TMP/t.err" || fail "the library did not split by 256: $(head -5 "$TMP/t.err")"
pass "split stated (256 payloads of 256 B for 64 KiB) and done that way by the library"

# Unsupported pair: one line before the run, exit 2.
rc=0
SHARP_STANDIN_DTYPES=int32,float timeout 30 "$RB" allreduce --np 2 --algo sharp --dtype float64 -s 8 >/dev/null 2>"$TMP/u.err" || rc=$?
[ "$rc" = 2 ] || fail "unsupported dtype: rc $rc $(cat "$TMP/u.err")"
grep -q -- "--algo sharp --dtype float64: not supported by this SHARP (caps: int32, float32)" "$TMP/u.err" || fail "unsupported dtype message: $(cat "$TMP/u.err")"
rc=0
SHARP_STANDIN_OPS=sum timeout 30 "$RB" allreduce --np 2 --algo sharp --op max -s 8 >/dev/null 2>"$TMP/u2.err" || rc=$?
[ "$rc" = 2 ] && grep -q -- "--algo sharp --op max: not supported by this SHARP (caps: sum)" "$TMP/u2.err" || fail "unsupported op: rc $rc $(cat "$TMP/u2.err")"
pass "unsupported dtype / op: one-line error before the run"

# auto never picks sharp.
timeout 60 "$RB" allreduce --np 2 --algo auto -m 8:1M -n 2 --warmup 0 -f json -o "$TMP/auto.json" || fail "auto"
json_check "$TMP/auto.json" "all(r['collective']['algorithm']!='sharp' for r in d['rows'])"
pass "--algo auto never picks sharp"

# Side by side: tree vs sharp allreduce and dissemination vs sharp barrier through `compare`,
# per size with the difference and the ratio (issue #14: SHARP's share without MPI).
timeout 60 "$RB" allreduce --np 4 --algo tree -m 8:4K -n 20 --warmup 2 -f json -o "$TMP/tree.json" || fail "allreduce --algo tree"
timeout 60 "$RB" allreduce --np 4 --algo sharp -m 8:4K -n 20 --warmup 2 -f json -o "$TMP/sharp.json" || fail "allreduce --algo sharp"
"$RB" compare "$TMP/tree.json" "$TMP/sharp.json" -f json -o "$TMP/cmp.json" || fail "compare tree sharp"
json_check "$TMP/cmp.json" "d['groups'][0]['test']=='allreduce' and len(d['groups'][0]['rows'])==10 and d['groups'][0]['inputs'][0]['title'].endswith('(tree)') and d['groups'][0]['inputs'][1]['title'].endswith('(sharp)') and all(abs(r['differences'][0]['ratio']-r['values'][1]/r['values'][0])<1e-9 for r in d['groups'][0]['rows'])"
"$RB" compare "$TMP/tree.json" "$TMP/sharp.json" >"$TMP/cmp.txt" || fail "compare table"
grep -q "ratio\[2\]" "$TMP/cmp.txt" && [ "$(grep -cE '^ +[0-9]+ ' "$TMP/cmp.txt")" = 10 ] || fail "compare table: $(cat "$TMP/cmp.txt")"
timeout 60 "$RB" barrier --np 4 --algo dissemination -n 100 --warmup 5 -f json -o "$TMP/bd.json" || fail "barrier --algo dissemination"
"$RB" compare "$TMP/bd.json" "$TMP/b.json" -f json -o "$TMP/cmpb.json" || fail "compare barriers"
json_check "$TMP/cmpb.json" "d['groups'][0]['test']=='barrier' and len(d['groups'][0]['rows'])==1 and d['groups'][0]['rows'][0]['differences'][0]['ratio']>0"
pass "compare: tree vs sharp allreduce (10 sizes) and dissemination vs sharp barrier, with the ratio"

# --- failures: every rank ends within the timeout, naming the cause --------------------------
# expect_fail NAME EXPECTED-LINES REGEX-ON-SOME-LINE ENV... -- ARGS...
expect_fail() {
  local name=$1 lines=$2 regex=$3 envs=() rc=0 start took
  shift 3
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  start=$(date +%s)
  env "${envs[@]}" timeout 60 "$RB" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
  took=$(($(date +%s) - start))
  [ "$rc" != 0 ] || fail "$name: succeeded"
  [ "$rc" != 124 ] || fail "$name: ranks hung: $(cat "$TMP/$name.err")"
  [ "$took" -le 15 ] || fail "$name: took ${took}s (timeout 3 s)"
  # Counted in ranks: the launcher folds identical lines ("ranks 0-3 on HOST: ...").
  [ "$(error_ranks "$TMP/$name.err" | wc -w)" = "$lines" ] || fail "$name: expected $lines ranks' errors: $(cat "$TMP/$name.err")"
  unfold_errors "$TMP/$name.err" | grep -E "$regex" >/dev/null || fail "$name: no line matches '$regex': $(cat "$TMP/$name.err")"
  pass "$name: $lines rank(s) failed in ${took}s: $(unfold_errors "$TMP/$name.err" | grep -E "$regex" | head -1)"
}
A=(allreduce --np 4 --algo sharp -m 8:4K -n 20 --warmup 2 --timeout 3)
expect_fail lib_missing 4 "rank 0 on .*: library not found: dlopen /nonexistent/libsharp_coll.so" \
  RDMABENCH_SHARP_LIBRARY=/nonexistent/libsharp_coll.so -- "${A[@]}"
expect_fail init_all 4 "rank 3 on .*: sharp_coll_init: Cannot connect to SHARPD / Aggregation Manager \(-8\) \(during [^()]+\)$" \
  SHARP_STANDIN_FAIL=init -- "${A[@]}"
expect_fail init_rank2 4 "rank 2 on .*: sharp_coll_init: Cannot connect to SHARPD / Aggregation Manager \(-8\) \(during [^()]+\)$" \
  SHARP_STANDIN_FAIL=init SHARP_STANDIN_FAIL_RANK=2 -- "${A[@]}"
# The others see it in an out-of-band collective: the store's news names rank 2, or the
# out-of-band error (SHARP_COLL_EOOB) says which collective broke.
unfold_errors "$TMP/init_rank2.err" | grep -E "rank [013] on .*(rank 2 on host .* failed: sharp_coll_init|sharp_coll_init: Out-of-band collective failed \(-15\); out-of-band: )" >/dev/null ||
  fail "init on rank 2: the other ranks do not say why: $(cat "$TMP/init_rank2.err")"
expect_fail comm_init 4 "rank 0 on .*: sharp_coll_comm_init: Cannot join the SHARP group \(-6\) \(during [^()]+\)$" \
  SHARP_STANDIN_FAIL=comm_init SHARP_STANDIN_FAIL_RANK=1 -- "${A[@]}"
expect_fail quota 4 "rank 1 on .*: sharp_coll_do_allreduce: SHARP resource quota exceeded \(-7\) \(during [^()]+\)$" \
  SHARP_STANDIN_FAIL=quota SHARP_STANDIN_FAIL_RANK=1 SHARP_STANDIN_FAIL_AFTER=30 -- "${A[@]}"
expect_fail timeout 4 "rank 3 on .*: sharp_coll_do_barrier: Error \(-1\) \(during [^()]+\)$" \
  SHARP_STANDIN_FAIL=timeout SHARP_STANDIN_FAIL_RANK=3 SHARP_STANDIN_FAIL_AFTER=50 -- \
  barrier --np 4 --algo sharp -n 1000 --timeout 3
