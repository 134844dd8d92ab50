# Lost results (#12): a report that cannot be written (full disk, I/O error, closed pipe) makes
# the command exit non-zero with one line naming the destination and the system's error text,
# for lat, allreduce (--np, written by rank 0) and compare, to a file and to stdout; a run that
# fails before its first row leaves a good -o file as it was (issue 35).
source "$(dirname "$0")/lib.sh"
FIX=$SRC/tests/fixtures/osu_latency_verbs_rxm.txt
[ -w /dev/full ] || fail "/dev/full is missing (Linux provides it)"

# expect_write_error NAME PATTERN CMD...: non-zero exit, exactly one stderr line matching PATTERN.
expect_write_error() {
  local name=$1 pattern=$2 rc=0
  shift 2
  timeout 60 "$@" 2>"$TMP/err" || rc=$?
  [ "$rc" != 0 ] || fail "$name: exit 0 although the report was lost"
  [ "$rc" != 124 ] || fail "$name: hung"
  grep -Eq "$pattern" "$TMP/err" || fail "$name: no '$pattern' in: $(cat "$TMP/err")"
  [ "$(grep -c 'rdmabench: error' "$TMP/err")" = 1 ] || fail "$name: not one error line: $(cat "$TMP/err")"
}

MSG='writing the report to (/dev/full|stdout): No space left on device'
NOSPC="^rdmabench: error: $MSG\$"
RANK0="^rdmabench: error: rank 0 on .*: $MSG\$"
expect_write_error "compare -o /dev/full" "$NOSPC" "$RB" compare "$FIX" "$FIX" -o /dev/full
expect_write_error "compare >/dev/full" "$NOSPC" sh -c "exec \"$RB\" compare \"$FIX\" \"$FIX\" >/dev/full"
expect_write_error "lat -o /dev/full" "$NOSPC" "$RB" lat -t socket -s 64 -n 50 -o /dev/full
expect_write_error "lat -f json >/dev/full" "$NOSPC" sh -c "exec \"$RB\" lat -t socket -s 64 -n 50 -f json >/dev/full"
expect_write_error "allreduce --np 2 -o /dev/full" "$RANK0" "$RB" allreduce --np 2 -s 64 -n 20 -o /dev/full
expect_write_error "barrier --np 2 >/dev/full" "$RANK0" sh -c "exec \"$RB\" barrier --np 2 -n 20 >/dev/full"
pass "ENOSPC (/dev/full) as -o and as stdout: non-zero, one line"

# EIO: writing to /proc/version (root can open it for writing; the write fails).
if [ "$(id -u)" = 0 ]; then
  expect_write_error "compare -o /proc/version" 'writing the report to /proc/version: Input/output error' \
    "$RB" compare "$FIX" "$FIX" -o /proc/version
  pass "EIO (/proc/version) is reported"
else
  expect_write_error "compare -o /proc/version" '--output /proc/version: cannot open for writing: Permission denied' \
    "$RB" compare "$FIX" "$FIX" -o /proc/version
  pass "/proc/version refused at open (not root)"
fi

# A good destination still works and exits 0.
"$RB" compare "$FIX" "$FIX" -o "$TMP/ok.txt" || fail "compare to a file"
[ -s "$TMP/ok.txt" ] || fail "compare wrote nothing"
pass "a writable -o still exits 0"

# Issue 35 items 1-2: a run that fails before it measured a row leaves a good -o file as it was
# (docs/cli.md "Output files and failures"): an N-rank command's usage error found by the ranks,
# a device that does not open, a server session that dies or a Ctrl-C during the first size.
# keeps_good NAME WANT_RC CMD...: CMD exits WANT_RC and $TMP/g.json still holds the good result.
keeps_good() {
  local name=$1 want=$2 rc=0
  shift 2
  echo '{"good":true}' >"$TMP/g.json"
  timeout 60 "$@" >"$TMP/keep.out" 2>"$TMP/keep.err" || rc=$?
  [ "$rc" = "$want" ] || fail "$name: exit $rc (want $want): $(cat "$TMP/keep.err")"
  [ "$(cat "$TMP/g.json")" = '{"good":true}' ] || fail "$name: the good -o file was replaced by: $(head -c 400 "$TMP/g.json")"
  [ -z "$(ls -A "$TMP" | grep '^\.g\.json\.')" ] || fail "$name: temporary file left behind"
}
keeps_good "barrier --np 4 --cpu 99" 2 "$RB" barrier --np 4 --cpu 99 -n 5 -f json -o "$TMP/g.json"
keeps_good "ring --np 2 --numa 7" 2 "$RB" ring --np 2 --numa 7 -n 5 -f json -o "$TMP/g.json"
if grep -q "^verbs *unusable" <<<"$("$RB" info 2>/dev/null || true)"; then
  keeps_good "allreduce --np 2 -t verbs (no device)" 1 "$RB" allreduce --np 2 -t verbs -n 5 -f json -o "$TMP/g.json"
fi
pass "N-rank commands failing before a row leave -o FILE untouched"

CRASH=(env RDMABENCH_TEST_SESSION_CRASH_AT=8)
keeps_good "lat, server session died during the first size" 1 \
  "${CRASH[@]}" "$RB" lat -t socket -s 8,16 -n 20 -f json -o "$TMP/g.json"
keeps_good "bw, server session died during the first size" 1 \
  "${CRASH[@]}" "$RB" bw -t socket -s 8,16 -n 5 -f json -o "$TMP/g.json"
# Ctrl-C during the first size (1e9 iterations do not end): once the report's temporary file
# exists (the handlers are installed long before), SIGINT; exit 4, nothing measured.
echo '{"good":true}' >"$TMP/g.json"
env --default-signal=INT "$RB" lat -t socket -s 8 -n 1000000000 -f json -o "$TMP/g.json" 2>"$TMP/int.err" &
LAT=$!
CLEANUP+=("kill -9 $LAT")
for _ in $(seq 1 300); do
  [ -n "$(ls -A "$TMP" | grep '^\.g\.json\.')" ] && break
  sleep 0.1
done
sleep 1
kill -INT "$LAT"
rc=0; wait "$LAT" || rc=$?
[ "$rc" = 4 ] || fail "lat, Ctrl-C during the first size: exit $rc (want 4): $(cat "$TMP/int.err")"
[ "$(cat "$TMP/g.json")" = '{"good":true}' ] || fail "lat, Ctrl-C during the first size replaced -o: $(head -c 400 "$TMP/g.json")"
# A later size that dies still commits the rows measured before it, with the error.
rc=0; "${CRASH[@]}" "$RB" lat -t socket -s 4,8 -n 20 -f json -o "$TMP/g.json" 2>/dev/null || rc=$?
[ "$rc" = 1 ] || fail "lat dying at its second size: exit $rc"
python3 - "$TMP/g.json" <<'PY' || fail "lat dying at its second size: $(cat "$TMP/g.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["bytes"] for r in d["rows"]] == [4] and "SIGSEGV" in d["error"], d
PY
pass "lat / bw dying (or Ctrl-C) in the first size leave -o FILE untouched; a later size commits"
