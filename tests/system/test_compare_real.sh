# `rdmabench compare` on the real OSU 5.3.2 / IMB-MPI1 2021.11 fixtures (tests/fixtures/README.md)
# through the CLI (issue 23, issue 24 items 7-8): the IMB section of the rank count rdmabench ran
# is chosen (or compare refuses, listing them), prefixed IMB is read, --plot errors come before
# the table, a missing input exits 2, a FIFO without a writer is refused in time, a negative
# latency names its line. About 30 s on 2 idle cores.
source "$(dirname "$0")/lib.sh"
FIX=$SRC/tests/fixtures
IMB=$FIX/imb2021_np4_npmin2_coll.txt

# Live 4-rank collectives (no MPI): their JSON says ranks = 4.
timeout 180 "$RB" allreduce --np 4 -m 4:4096 -n 30 -f json -o "$TMP/ar4.json" 2>"$TMP/err" \
  || fail "allreduce --np 4: $(tail -3 "$TMP/err")"
timeout 180 "$RB" barrier --np 4 -n 30 -f json -o "$TMP/b4.json" 2>"$TMP/err" \
  || fail "barrier --np 4: $(tail -3 "$TMP/err")"
pass "live allreduce and barrier at 4 ranks"

# 1. Sections: the 4-process IMB tables are used (allreduce 4 B t_avg 50066.22, barrier 10927.73),
# never the first (2-process) ones.
"$RB" compare "$IMB" "$TMP/ar4.json" "$TMP/b4.json" -f json >"$TMP/c.json" 2>"$TMP/err" \
  || fail "compare IMB -npmin with 4-rank JSON: $(cat "$TMP/err")"
python3 - "$TMP/c.json" <<'PY' || fail "wrong IMB section chosen"
import json, sys
d = json.load(open(sys.argv[1]))
g = {x["test"]: x for x in d["groups"]}
assert set(g) == {"allreduce", "barrier"}, list(g)
for t, want in (("allreduce", 50066.22), ("barrier", 10927.73)):
    ins = g[t]["inputs"]
    assert len(ins) == 2 and ins[0]["processes"] == 4 and ins[1]["processes"] == 4, ins
    row = g[t]["rows"][0] if t == "barrier" else [r for r in g[t]["rows"] if r["bytes"] == 4][0]
    assert abs(row["values"][0] - want) < 1e-9, (t, row)
    assert abs(row["differences"][0]["absolute"] - (want - row["values"][1])) < 1e-6, row
assert any("table 1" in n and "not compared" in n for n in d["notes"]), d["notes"]
PY
pass "IMB -npmin sections matched to rdmabench's 4 ranks"

# ... and refused, in one line listing the tables, when nothing says the count.
set +e
"$RB" compare "$IMB" "$FIX/osu532_barrier_np4.txt" >"$TMP/out" 2>"$TMP/err"; rc=$?
set -e
[ $rc -eq 2 ] || fail "ambiguous sections: exit $rc"
[ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "holds 2 barrier tables.*--np N or --section K" "$TMP/err" \
  || fail "ambiguous sections error: $(cat "$TMP/err")"
"$RB" compare "$IMB" "$FIX/osu532_barrier_np4.txt" --np 4 --test barrier >"$TMP/out" 2>"$TMP/err" \
  || fail "--np 4: $(cat "$TMP/err")"
grep -q "10927.73" "$TMP/out" || fail "--np 4 did not pick the 4-process barrier: $(cat "$TMP/out")"
"$RB" compare "$IMB" "$FIX/osu532_barrier_np4.txt" --section 3 --test barrier >"$TMP/out" 2>"$TMP/err" \
  || fail "--section 3: $(cat "$TMP/err")"
grep -q "23904.58" "$TMP/out" || fail "--section 3 did not pick table 3: $(cat "$TMP/out")"
pass "ambiguous sections refused in one line; --np and --section choose"

# 2. IMB behind --tag-output --timestamp-output.
"$RB" compare "$FIX/imb2021_np4_npmin2_coll_tag.txt" "$TMP/ar4.json" --test allreduce >"$TMP/out" 2>"$TMP/err" \
  || fail "prefixed IMB: $(cat "$TMP/err")"
grep -q "launcher prefix" "$TMP/err" || fail "no prefix note: $(cat "$TMP/err")"
pass "IMB behind mpirun --tag-output --timestamp-output"

# expect_usage DESCRIPTION PATTERN ARGS...: exit 2, one line on stderr matching PATTERN, no table.
expect_usage() {
  local what=$1 pattern=$2; shift 2
  set +e
  timeout 60 "$RB" "$@" >"$TMP/out" 2>"$TMP/err"; local rc=$?
  set -e
  [ $rc -eq 2 ] || fail "$what: exit $rc ($(cat "$TMP/err"))"
  [ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "$what: not one line: $(cat "$TMP/err")"
  grep -q -- "$pattern" "$TMP/err" || fail "$what: $(cat "$TMP/err")"
  [ ! -s "$TMP/out" ] || fail "$what: printed a table first: $(head -3 "$TMP/out")"
}
OSU=$FIX/osu532_latency_ob1_tcp.txt
expect_usage "missing input" "/nonexistent/a.txt: cannot open" compare /nonexistent/a.txt "$OSU"
expect_usage "--plot x.jpg" "^rdmabench: error: --plot x.jpg" compare "$OSU" "$OSU" --plot x.jpg
expect_usage "--plot into a missing directory" "--plot /nonexistent/x.png: .*directory /nonexistent does not exist" \
  compare "$OSU" "$OSU" --plot /nonexistent/x.png
expect_usage "barrier-only --plot" "barrier has no message sizes" \
  compare "$TMP/b4.json" "$FIX/osu532_barrier_np4.txt" --plot "$TMP/b.png"
neg=$TMP/neg.txt
sed 's/^8                   82679.92/8                   -5/' "$OSU" >"$neg"
expect_usage "negative latency" "neg.txt:7: negative latency -5" compare "$neg" "$OSU"
mkfifo "$TMP/fifo"
start=$(date +%s)
expect_usage "FIFO without a writer" "nothing to read for 10 s" compare "$TMP/fifo" "$OSU"
[ $(( $(date +%s) - start )) -lt 40 ] || fail "FIFO refusal took too long"
pass "one-line refusals before any table: missing input, --plot ending/directory, barrier-only plot, negative latency, FIFO"

# 7. A plot of OSU vs a live rdmabench latency run: keys name tools, not files; overhead panel.
timeout 120 "$RB" lat -t socket -m 1:64K -n 50 --warmup 5 -f json -o "$TMP/lat.json" 2>"$TMP/err" \
  || fail "lat: $(cat "$TMP/err")"
"$RB" compare "$OSU" "$TMP/lat.json" --plot "$TMP/lat.png" --script "$TMP/lat.gp" >"$TMP/out" 2>"$TMP/err" \
  || fail "compare --plot: $(cat "$TMP/err")"
[ -s "$TMP/lat.png" ] || fail "no PNG"
grep -q "'OSU 5.3.2 (MPI)'" "$TMP/lat.gp" || fail "plot key: $(grep title "$TMP/lat.gp" | head -3)"
! grep -q "osu532_latency" "$TMP/lat.gp" || fail "a file name in the plot keys"
grep -q "MPI overhead (%)" "$TMP/lat.gp" || fail "no overhead panel"
grep -q '"1 KiB" 1024\|"4 KiB" 4096\|"1 MiB"' "$TMP/lat.gp" || fail "size axis: $(grep xtics "$TMP/lat.gp")"
pass "compare --plot: tool/transport keys, B/KiB/MiB axis, MPI overhead panel"
