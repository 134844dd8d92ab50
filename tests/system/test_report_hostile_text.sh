# Issue 36 item 8. (a) A hostile server's TestAccept carries C1 controls (U+009B, CSI on some
# terminals; U+0085) and bidirectional overrides (U+202E, U+2066) in its host name: the client's
# JSON report holds them only as \u escapes (the same string to a parser, inert in a terminal or
# an editor), its table report only escaped. (b) A lost report is an error: stdout closed
# (`>&-`), a full disk (/dev/full) and a closed pipe each end with one error line and a non-zero
# exit, never a silent exit 0. Loopback, ~5 s.
source "$(dirname "$0")/lib.sh"
PORT=$((20000 + $$ % 20000))
PROXY=$((PORT + 1))
RAW_BYTES='\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]'

"$RB" server -p "$PORT" 2>"$TMP/server.log" &
CLEANUP+=("kill -9 $!")
wait_port "" "$PORT"

for fmt in json table; do
  python3 "$SRC/tests/system/hostile_proxy.py" "$PROXY" "$PORT" >"$TMP/proxy.out" 2>&1 &
  ppid=$!
  CLEANUP+=("kill -9 $ppid")
  wait_for "$TMP/proxy.out" listening
  rc=0
  timeout 60 "$RB" lat 127.0.0.1 -p "$PROXY" -t socket -s 8 -n 10 --warmup 1 -f "$fmt" \
    >"$TMP/out.$fmt" 2>"$TMP/err.$fmt" || rc=$?
  [ "$rc" = 0 ] || fail "lat through the hostile proxy (-f $fmt): exit $rc: $(cat "$TMP/err.$fmt")"
  if LC_ALL=C grep -qaP "$RAW_BYTES" "$TMP/out.$fmt" "$TMP/err.$fmt"; then
    fail "raw C1 / bidi control characters in the -f $fmt report: $(LC_ALL=C grep -aoP ".{0,20}($RAW_BYTES).{0,20}" "$TMP/out.$fmt" | head -3 | cat -v)"
  fi
  wait "$ppid" || true
done
grep -q 'u202e' "$TMP/out.json" || fail "the hostile host name is not in the JSON report: $(head -c 600 "$TMP/out.json")"
json_check "$TMP/out.json" "'\u202e' in json.dumps(d, ensure_ascii=False) or '\\\\u202e' in open(sys.argv[1]).read()"
pass "C1 and bidi controls of a hostile server's host name reach the JSON and table reports only escaped"

# (b) Lost reports.
lost() {  # lost LABEL CMD...: non-zero exit, one stderr line naming the lost write
  local label=$1 rc=0; shift
  timeout 60 "$@" 2>"$TMP/lost.err" || rc=$?
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "$label: exit $rc (a lost report must fail): $(cat "$TMP/lost.err")"
  grep -qE '^rdmabench: error: .*(writing|write).*stdout' "$TMP/lost.err" ||
    fail "$label: no error line naming stdout: $(cat "$TMP/lost.err")"
}
lost "lat -f json >&-" bash -c "exec \"\$0\" lat -t socket -s 8 -n 10 --warmup 1 -f json >&-" "$RB"
lost "lat (table) >&-" bash -c "exec \"\$0\" lat -t socket -s 8 -n 10 --warmup 1 >&-" "$RB"
lost "version >&-" bash -c "exec \"\$0\" version >&-" "$RB"
lost "version >/dev/full" bash -c "exec \"\$0\" version >/dev/full" "$RB"
lost "lat -f json >/dev/full" bash -c "exec \"\$0\" lat -t socket -s 8 -n 10 --warmup 1 -f json >/dev/full" "$RB"
# A reader that closed the pipe before the report (EPIPE; SIGPIPE is ignored).
rc=0
bash -c "exec \"\$0\" lat -t socket -s 8 -n 10 --warmup 1 -f json 2>\"\$1\" | (exec 0<&-; sleep 3)" "$RB" "$TMP/pipe.err" || true
grep -qE '^rdmabench: error: .*stdout: Broken pipe' "$TMP/pipe.err" ||
  fail "report into a closed pipe: no error line: $(cat "$TMP/pipe.err")"
pass "a report lost to a closed stdout, /dev/full or a closed pipe is an error (one line, non-zero exit)"
