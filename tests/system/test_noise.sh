# `rdmabench noise` known answer (issue 27): a noise injector (tests/system/noise_injector.c) pinned
# to CPU 1 under its own name runs W = 2 ms of CPU every P = 10 ms (20%, 100 bursts/s). Two ranks
# (--np 2, one per core) must report on cpu 1: the injector as the top source with 20% +-25% of
# the CPU (schedstat), 100 detours/s +-10% (threshold 500 us: above ticks and interrupts, below
# the 2 ms bursts), its stolen time at least 75% of the 20%; and cpu 0 must not show the injector
# and steal less than half of cpu 1. Then /proc hidden from the reader (the run still measures and
# says what it could not see), and bad input.
#
# Arrangement, so a loaded 2-core host cannot move the answer: the ranks run SCHED_FIFO 20 and
# the injector SCHED_FIFO 30, so only the injector (and the kernel) preempts a rank; other load
# (CFS tasks, e.g. other builds) gets its fair-server share of at most 5% per CPU and per second
# (kernel 6.12+ dl_server, else RT throttling at sched_rt_runtime_us 950000), the same on both
# cores. That background is measured on cpu 0 and bounds the upper limits below. 20% and not the
# issue's 2% (200 us every 10 ms): that background, up to 5% per core in 50 ms slices, would be
# larger than the injected noise. About 10 s.
source "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
  [ "${CI:-}" = true ] && fail "CI must run as root (chrt -f for the known-answer arrangement)"
  skip "needs root for SCHED_FIFO (chrt)"
fi
[ "$(nproc)" -ge 2 ] || fail "needs 2 CPUs (one injected, one quiet); nproc says $(nproc)"
CC=${CC:-cc}
command -v "$CC" >/dev/null || fail "no C compiler ($CC) to build tests/system/noise_injector.c"
"$CC" -O2 -Wall -Wextra -Werror -o "$TMP/noise_injector" "$SRC/tests/system/noise_injector.c" ||
  fail "building noise_injector.c"

W=2000 P=10000 # us: 20%, 100/s
chrt -f 30 "$TMP/noise_injector" 1 "$W" "$P" 8 rbnoiseinj >"$TMP/inj.out" 2>"$TMP/inj.err" &
INJ=$!
CLEANUP+=("kill -9 $INJ")
wait_for "$TMP/inj.out" '^ready' "$INJ" 10
timeout 60 chrt -f 20 "$RB" noise --np 2 -D 2 --threshold 500 -f json -o "$TMP/n.json" \
  2>"$TMP/n.err" || fail "noise --np 2 failed: $(cat "$TMP/n.err")"
python3 - "$TMP/n.json" "$INJ" "$W" "$P" <<'PY' || fail "known answer of the injected noise"
import json, sys
d = json.load(open(sys.argv[1])); inj = int(sys.argv[2]); w = float(sys.argv[3]); p = float(sys.argv[4])
share = 100 * w / p
rate = 1e6 / p
r = {x["cpu"]: x for x in d["ranks"]}
assert d["world_size"] == 2 and sorted(r) == [0, 1], d["ranks"]
hot, quiet = r[1], r[0]
print(f"cpu1: {hot['stolen_pct']:.2f}% stolen, {hot['detours_per_s']:.1f}/s; "
      f"cpu0: {quiet['stolen_pct']:.2f}%, {quiet['detours_per_s']:.1f}/s")
top = hot["sources"][0]
print("cpu1 top source:", top["text"])
assert top["kind"] == "thread" and top["pid"] == inj and top["name"] == "rbnoiseinj", hot["sources"]
assert abs(top["percent"] - share) <= 0.25 * share, (top["percent"], share)
assert all(s.get("pid") != inj for s in quiet["sources"]), quiet["sources"]
assert abs(hot["detours_per_s"] - rate) <= 0.10 * rate + quiet["detours_per_s"], hot
assert hot["stolen_pct"] >= 0.75 * share, hot
assert hot["stolen_pct"] <= 1.25 * share + 2 * quiet["stolen_pct"] + 1, (hot, quiet)
assert quiet["stolen_pct"] < hot["stolen_pct"] / 2, (hot, quiet)
assert hot["p50_us"] >= 0.75 * w, hot  # the typical detour is one burst
assert d["outliers"]["cores"]["decided"] is False  # two cores: ranked, no verdict
assert d["collective_cost"]["predictions"][0]["ranks"] == 2
assert d["collective_cost"]["predictions"][0]["delay_us"] > 0
# A task that exits between the listing of /proc and its read is "gone while read": other work on
# the host (a build beside CI) makes that a race, not a blind spot; anything else unseen fails.
unseen = [u for u in d["nodes"][0]["attribution"]["unseen"]
          if not u.endswith("task(s) unreadable (permissions or gone while read)")]
assert unseen == [], d["nodes"][0]["attribution"]
PY
pass "injected core, its rate, its share and its source named"

# /proc hidden from the reader: the measurement runs, the report says what it could not see.
mkdir -p "$TMP/emptyproc"
RDMABENCH_NOISE_PROC_ROOT="$TMP/emptyproc" timeout 60 "$RB" noise --np 2 -D 0.5 -f table \
  >"$TMP/t.txt" 2>"$TMP/t.err" || fail "noise without /proc failed: $(cat "$TMP/t.err")"
grep -q '^# could not see on .*: /proc/stat unreadable' "$TMP/t.txt" || fail "no unseen line: $(cat "$TMP/t.txt")"
grep -q 'hidepid' "$TMP/t.txt" || fail "hidden processes not stated"
[ "$(grep -cE '^ +[01] ' "$TMP/t.txt")" -ge 2 ] || fail "rank rows missing: $(cat "$TMP/t.txt")"
pass "restricted /proc: measured, and said what it could not see"

# CSV (one row per rank), the heat map, and more ranks than CPUs: warned and in the header.
NP=$(($(nproc) + 1))
timeout 60 "$RB" noise --np "$NP" -D 0.3 -f csv -o "$TMP/n.csv" --plot "$TMP/heat.svg" \
  2>"$TMP/c.err" || fail "noise --np $NP -f csv failed: $(cat "$TMP/c.err")"
head -1 "$TMP/n.csv" | grep -q '^rank,host,cpu,seconds,detours,detours_per_s,stolen_pct,' ||
  fail "csv header: $(head -1 "$TMP/n.csv")"
[ "$(tail -n +2 "$TMP/n.csv" | grep -c '^[0-9]')" = "$NP" ] || fail "csv rows: $(cat "$TMP/n.csv")"
grep -q "oversubscribed" "$TMP/c.err" || fail "no oversubscription warning: $(cat "$TMP/c.err")"
grep -q "stolen time" "$TMP/heat.svg" || fail "no heat map in $TMP/heat.svg"
timeout 60 "$RB" noise --np "$NP" -D 0.2 >"$TMP/o.txt" 2>/dev/null || fail "oversubscribed run failed"
grep -q "^# WARNING: oversubscribed: 2 ranks share cpu" "$TMP/o.txt" ||
  fail "oversubscription not in the header: $(head -12 "$TMP/o.txt")"
pass "csv, heat map, oversubscription"

# The default run (no --np, no launcher): one rank per allowed CPU. With 2+ CPUs this is the path
# that forks ranks after detect(); every rank's row must arrive (it once hung waiting for the
# attribution of local rank 1: localRanks stayed 1).
NCPU=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
timeout 60 "$RB" noise -D 0.3 --timeout 20 -f csv -o "$TMP/d.csv" 2>"$TMP/d.err" ||
  fail "noise without --np failed: $(cat "$TMP/d.err")"
[ "$(tail -n +2 "$TMP/d.csv" | grep -c '^[0-9]')" = "$NCPU" ] ||
  fail "default run: expected $NCPU rank rows: $(cat "$TMP/d.csv")"
pass "default run: one rank per allowed CPU ($NCPU)"

# A failed run still prints one valid JSON document on stdout (a rank that cannot reach the
# rendezvous: --timeout bounds it).
rc=0
timeout 60 "$RB" noise --rank 0 --world-size 2 --rendezvous 127.0.0.1:1 --standalone-rendezvous \
  --timeout 1 -D 0.2 -f json >"$TMP/e.json" 2>"$TMP/e.err" || rc=$?
if [ "$rc" = 0 ] || [ "$rc" = 124 ]; then fail "expected a bounded failure, rc $rc"; fi
json_check "$TMP/e.json" 'd["test"] == "noise" and d["error"]'
pass "failure: one JSON document with the error"

# Bad input: one line naming option, value and limit; exit 2.
expect_status 2 "--duration 0: out of range 0.1..86400 seconds" "$RB" noise --duration 0
expect_status 2 "--threshold 0: out of range 0.05..1000000 us" "$RB" noise --threshold 0
expect_status 2 "--sample 0.01: out of range" "$RB" noise --sample 0.01
expect_status 2 "--format osu: no noise layout" "$RB" noise -f osu
pass "bad input"
