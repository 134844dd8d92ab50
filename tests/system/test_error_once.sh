# An error is shown once per stream a user reads (issue 11, newcomer trial): on a terminal that
# stdout and stderr share, a text report ends without its `# error:` line (stderr says it), and
# lat's loopback server does not print its own copy of a session's death beside the client's;
# with stdout in a file (or -f json / csv) the report keeps the error. Loopback, ~10 s.
source "$(dirname "$0")/lib.sh"

# on_tty OUT CMD...: runs CMD with stdout and stderr on one pseudo-terminal, writes what it
# printed to OUT (CR LF -> LF, progress lines "\rTEXT\e[K" removed) and returns its exit status.
on_tty() {
  local out=$1; shift
  python3 - "$out" "$@" <<'PY'
import os, pty, re, subprocess, sys
master, slave = pty.openpty()
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                     close_fds=True)
os.close(slave)
data = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: every writer closed the terminal
        break
    if not chunk:
        break
    data += chunk
rc = p.wait(timeout=120)
data = re.sub(rb"\r[^\r\n]*\x1b\[K", b"", data.replace(b"\r\n", b"\n"))
open(sys.argv[1], "wb").write(data)
sys.exit(rc)
PY
}

# A session that dies in the loopback server (test hook: SIGSEGV at 8 B). psm's own SIGSEGV
# backtrace handler (libfabric's psm provider) would hide the signal from the daemon.
CRASH=(env RDMABENCH_TEST_SESSION_CRASH_AT=8)
rc=0; on_tty "$TMP/tty.txt" "${CRASH[@]}" "$RB" lat -t socket -s 8 -n 10 || rc=$?
[ "$rc" = 1 ] || fail "lat with a crashing session: exit $rc: $(cat "$TMP/tty.txt")"
n=$(grep -c "SIGSEGV in the data path" "$TMP/tty.txt" || true)
[ "$n" = 1 ] || fail "the session's death shown $n times on the terminal (want 1): $(cat "$TMP/tty.txt")"
grep -q "^rdmabench: error: .*server session 1 died: SIGSEGV in the data path" "$TMP/tty.txt" ||
  fail "no stderr line naming the death: $(cat "$TMP/tty.txt")"
! grep -q "^# error:" "$TMP/tty.txt" || fail "# error: repeated on the terminal: $(cat "$TMP/tty.txt")"
grep -q "t_typical" "$TMP/tty.txt" || fail "the table header is gone: $(cat "$TMP/tty.txt")"
pass "one terminal: the session's death shown once (stderr), no '# error:' or server copy"

# stdout in a file: the document keeps its error line; stderr has the one line.
rc=0; "${CRASH[@]}" "$RB" lat -t socket -s 8 -n 10 >"$TMP/out.txt" 2>"$TMP/err.txt" || rc=$?
[ "$rc" = 1 ] || fail "lat to a file: exit $rc"
grep -q "^# error: .*SIGSEGV in the data path" "$TMP/out.txt" || fail "stdout file lost its # error: $(cat "$TMP/out.txt")"
[ "$(grep -c "SIGSEGV" "$TMP/err.txt")" = 1 ] || fail "stderr: $(cat "$TMP/err.txt")"
# JSON on the terminal keeps its error member (part of the document).
rc=0; on_tty "$TMP/tty.json" "${CRASH[@]}" "$RB" lat -t socket -s 8 -n 10 -f json || rc=$?
grep -q '"error":".*SIGSEGV in the data path' "$TMP/tty.json" || fail "json lost its error member: $(cat "$TMP/tty.json")"
pass "stdout in a file, or json: the error stays in the document"

# An N-rank command: rank 0 times out waiting for rank 1 (held by the test hook).
HOLD=(env RDMABENCH_TEST_HOLD=mid-run@1 RDMABENCH_TEST_HOLD_MS=3000)
rc=0; on_tty "$TMP/coll.txt" "${HOLD[@]}" "$RB" allreduce --np 2 -t socket -s 8,16 -n 5 --timeout 1 || rc=$?
[ "$rc" = 3 ] || fail "allreduce with a held rank: exit $rc: $(cat "$TMP/coll.txt")"
grep -q "^rdmabench: error: rank 0 on [^:]*: no progress for 1.0 s during size 16, measuring" "$TMP/coll.txt" ||
  fail "no rank 0 error line: $(cat "$TMP/coll.txt")"
! grep -q "^# error:" "$TMP/coll.txt" || fail "allreduce: # error: repeated on the terminal: $(cat "$TMP/coll.txt")"
rc=0; "${HOLD[@]}" "$RB" allreduce --np 2 -t socket -s 8,16 -n 5 --timeout 1 >"$TMP/coll.out" 2>/dev/null || rc=$?
grep -q "^# error: .*no progress for 1.0 s during size 16" "$TMP/coll.out" || fail "allreduce to a file lost # error: $(cat "$TMP/coll.out")"
pass "allreduce: '# error:' left out on a shared terminal, kept in a file"

# An A/B table on the shared terminal: the failed variant's error is its FAILED line, once.
if grep -q "^ofi *usable" <<<"$("$RB" info 2>/dev/null || true)"; then
  rc=0; on_tty "$TMP/ab.txt" "$RB" lat --compare socket,ofi:nosuch -s 8 -n 10 || rc=$?
  [ "$rc" = 1 ] || fail "A/B with a failing variant: exit $rc: $(cat "$TMP/ab.txt")"
  [ "$(grep -c "'nosuch'" "$TMP/ab.txt")" = 1 ] || fail "A/B: the variant's error not once: $(cat "$TMP/ab.txt")"
  grep -q "^# ofi:nosuch: FAILED: " "$TMP/ab.txt" || fail "A/B: no FAILED line: $(cat "$TMP/ab.txt")"
  rc=0; "$RB" lat --compare socket,ofi:nosuch -s 8 -n 10 >"$TMP/ab.out" 2>"$TMP/ab.err" || rc=$?
  grep -q "^rdmabench: error: ofi:nosuch: .*'nosuch'" "$TMP/ab.err" || fail "A/B to a file: no stderr line: $(cat "$TMP/ab.err")"
  pass "A/B: a failed variant shown once on a shared terminal, on stderr too when stdout is a file"
fi

# Issue 35 item 12: far more ranks than CPUs is said once, before the run (barrier --np 1000 on
# 2 CPUs ran 27 s before failing with ~100 lines); the launcher's folding of relayed failures
# into one line per root cause is tests/unit/fold_test.cc.
CPU=$(python3 -c "import os; print(sorted(os.sched_getaffinity(0))[0])")
rc=0; timeout 120 taskset -c "$CPU" "$RB" barrier --np 9 -n 2 --warmup 0 -e on --timeout 30 \
  >/dev/null 2>"$TMP/crowd.err" || rc=$?
[ "$rc" = 0 ] || fail "barrier --np 9 on one CPU: exit $rc: $(cat "$TMP/crowd.err")"
[ "$(grep -c "^rdmabench: warning: --np 9 on 1 allowed CPU (9 ranks per CPU): " "$TMP/crowd.err")" = 1 ] ||
  fail "no single oversubscription warning: $(cat "$TMP/crowd.err")"
timeout 120 taskset -c "$CPU" "$RB" barrier --np 8 -n 2 --warmup 0 -e on --timeout 30 >/dev/null 2>"$TMP/eight.err" ||
  fail "barrier --np 8 on one CPU: $(cat "$TMP/eight.err")"
! grep -q "ranks per CPU" "$TMP/eight.err" || fail "warned at 8 ranks per CPU: $(cat "$TMP/eight.err")"
pass "more than 8 ranks per allowed CPU: one warning before the run"
