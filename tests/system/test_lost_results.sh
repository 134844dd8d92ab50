# Lost results (#12): a report that cannot be written (full disk, I/O error, closed pipe) makes
# the command exit non-zero with one line naming the destination and the system's error text,
# for lat, allreduce (--np, written by rank 0) and compare, to a file and to stdout.
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
