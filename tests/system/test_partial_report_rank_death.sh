# Issue 36 item 5: pairs, congestion and noise write the complete document carrying `error` and
# what was measured when a rank dies mid-run, as lat / bw and the other collectives do (before:
# 0 bytes in the -o file and on stdout). Each case holds a rank at a known phase with the test
# hook (RDMABENCH_TEST_HOLD, docs/testing.md), kills it there (a marker, never a sleep), and
# asserts the document: `error` names the dead rank, the rows measured before are there. Loopback
# --np runs, ~30 s. (Before the fix: 0 bytes, or the old file, in every case.)
source "$(dirname "$0")/lib.sh"

# run_killed NAME HOLD RANK CMD...: starts CMD with the hold at HOLD@RANK, kills that rank with
# SIGKILL once it holds, waits for the run to end (60 s at most); sets RC.
run_killed() {
  local name=$1 hold=$2 rank=$3 i pid; shift 3
  RDMABENCH_TEST_HOLD=$hold@$rank RDMABENCH_TEST_HOLD_MS=30000 "$@" >"$TMP/$name.out" \
    2>"$TMP/$name.err" &
  local launcher=$!
  CLEANUP+=("kill -9 $launcher")
  wait_for "$TMP/$name.err" "holding at $hold" "$launcher" 120
  pid=$(sed -n "s/.*test hook: pid \([0-9]*\) holding at $hold.*/\1/p" "$TMP/$name.err" | head -1)
  kill -9 "$pid"
  RC=0
  for i in $(seq 1 600); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$launcher" 2>/dev/null && fail "$name: still running 60 s after rank $rank died"
  wait "$launcher" || RC=$?
  [ "$RC" != 0 ] || fail "$name: exit 0 after rank $rank died: $(cat "$TMP/$name.err")"
}

# pairs, 4 ranks (3 rounds); rank 2 dies after round 1: -o FILE holds round 1's pairs and the error.
echo old >"$TMP/pairs.json"
run_killed pairs mid-run 2 "$RB" pairs --np 4 -t socket -e on -n 20 --warmup 2 --bw-size 4K \
  --bw-iters 2 -w 2 --timeout 10 -f json -o "$TMP/pairs.json"
json_check "$TMP/pairs.json" "'rank 2' in d['error'] and d['rounds_measured'] == 1 and \
sum(1 for l in d['links'] if l['lat_median_us'] is not None and l['mb_per_s'] is not None) == 4 \
and sum(1 for l in d['links'] if l['lat_median_us'] is None) == 8"
[ -z "$(ls -A "$TMP" | grep '^\.pairs\.json\.')" ] || fail "pairs: temporary files left: $(ls -A "$TMP")"
# The same run on stdout as CSV: the rows measured (the CSV layout is fixed: no error column;
# stderr names the dead rank).
run_killed pairs-csv mid-run 2 "$RB" pairs --np 4 -t socket -e on -n 20 --warmup 2 \
  --bw-size 4K --bw-iters 2 -w 2 --timeout 10 -f csv
python3 - "$TMP/pairs-csv.out" <<'PY' || fail "pairs csv: $(cat "$TMP/pairs-csv.out")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
measured = [r for r in rows if r["lat_median_us"] not in ("", "nan")]
assert len(measured) == 4, rows
PY
grep -q "rank 2" "$TMP/pairs-csv.err" || fail "pairs csv: stderr does not name rank 2"
pass "pairs: a rank killed after round 1 leaves the document with round 1's 4 pairs and the error"

# congestion, 4 ranks; rank 3 dies at the start of the congested phase: the isolated figures and
# the error.
echo old >"$TMP/cong.json"
run_killed congestion mid-run 3 "$RB" congestion --np 4 -t socket -e on --victims 0.5 -n 20 \
  --warmup 2 --bw-size 4K --bw-iters 2 -w 2 --agg-size 4K --timeout 10 -f json -o "$TMP/cong.json"
json_check "$TMP/cong.json" "'rank 3' in d['error'] and d['phases_measured'] == 1 and \
all(m['isolated']['p50'] is not None and m['congested']['p50'] is None for m in d['metrics'])"
pass "congestion: a rank killed in the congested phase leaves the isolated figures and the error"

# noise, 4 ranks; rank 2 dies before measuring, the others measure for 1 s: the document holds
# ranks 0, 1 and 3 and the error. (Before the store client kept its answers in step after a
# failure notice: 1 or 2 of the 3 ranks, varying from run to run; the unit test
# TcpStore.RequestsAfterAPeerFailureReadTheirOwnAnswers holds the mechanism.)
echo old >"$TMP/noise.json"
run_killed noise measure 2 "$RB" noise --np 4 -D 1 --timeout 20 -f json -o "$TMP/noise.json"
json_check "$TMP/noise.json" "'rank 2' in d['error'] and sorted(r['rank'] for r in d['ranks']) == [0, 1, 3]"
pass "noise: a rank killed before measuring leaves the document with the 3 other ranks and the error"
