# Scripts and cron jobs (issue 22): output files are replaced atomically and never lost, a failed
# run leaves a complete document with its error, sizes mean one thing, the format only formats,
# a non-rdmabench peer is named within the hello deadline, -D runs by the clock. Loopback only.
source "$(dirname "$0")/lib.sh"

# A TCP port nothing listens on: bound, then closed.
closed_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# --- 1. atomic -o: a good result survives a failed run; stdout gets the error document.
timeout 60 "$RB" lat -t socket -s 8 -n 200 -f json -o "$TMP/keep.json" || fail "lat json"
json_check "$TMP/keep.json" "len(d['rows'])==1 and 'error' not in d"
cp "$TMP/keep.json" "$TMP/keep.orig"
PORT=$(closed_port)
rc=0; timeout 30 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 8 -f json -o "$TMP/keep.json" 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] || fail "connect to a closed port: exit $rc, expected 1: $(cat "$TMP/err")"
cmp -s "$TMP/keep.json" "$TMP/keep.orig" || fail "a failed connect changed keep.json: $(head -c 300 "$TMP/keep.json")"
rc=0; timeout 60 "$RB" lat -t ofi --provider nosuch -s 8 -f json -o "$TMP/keep.json" 2>"$TMP/err" || rc=$?
[ "$rc" != 0 ] || fail "--provider nosuch succeeded"
cmp -s "$TMP/keep.json" "$TMP/keep.orig" || fail "--provider nosuch changed keep.json"
[ -z "$(find "$TMP" -name '.keep.json.*')" ] || fail "temporary file left behind: $(ls -a "$TMP")"
for fmt in csv table json; do
  rc=0; timeout 30 "$RB" lat 127.0.0.1 -p "$PORT" -t socket -s 8 -f "$fmt" >"$TMP/fail.$fmt" 2>/dev/null || rc=$?
  [ "$rc" = 1 ] || fail "-f $fmt to a closed port: exit $rc"
  [ -s "$TMP/fail.$fmt" ] || fail "-f $fmt to stdout printed nothing on failure"
done
grep -q "Connection refused" "$TMP/fail.csv" || fail "csv on stdout lacks the error: $(cat "$TMP/fail.csv")"
grep -q "^# error: .*Connection refused" "$TMP/fail.table" || fail "table lacks '# error:': $(cat "$TMP/fail.table")"
json_check "$TMP/fail.json" "'Connection refused' in d['error']"
pass "atomic -o: a failed run keeps the good file; stdout carries the error (json, csv, table)"

# Interrupted A/B: the document written so far, valid, with the error; exit 4.
"$RB" lat -t socket --compare socket,ofi:tcp\;ofi_rxm -s 8,16 -n 100000000 -f json -o "$TMP/ab.json" 2>"$TMP/ab.err" &
AB=$!
CLEANUP+=("kill -9 $AB")
sleep 2
kill -INT "$AB"
rc=0; wait "$AB" || rc=$?
[ "$rc" = 4 ] || fail "interrupted A/B: exit $rc, expected 4: $(cat "$TMP/ab.err")"
json_check "$TMP/ab.json" "'interrupted' in d['error'] and d['variants'][0]['label']=='socket'"
pass "interrupted A/B leaves a valid JSON document with the error"

# --- 8. the format only formats: -f perftest keeps window mode and what -n counts.
timeout 60 "$RB" bw -t socket -s 8 -n 5 -f perftest >"$TMP/pf.txt" || fail "bw -f perftest"
grep -Eq "^ *8 +320 " "$TMP/pf.txt" || fail "bw -s 8 -n 5 -f perftest: expected 5 windows of 64 = 320 messages: $(cat "$TMP/pf.txt")"
grep -q "window of 64 messages" "$TMP/pf.txt" || fail "perftest header lacks the window mode"
grep -q -- "--mode stream" "$TMP/pf.txt" || fail "perftest header does not name --mode stream"
pass "-f perftest prints window mode's measurement and names --mode stream"

# --- 9. sizes: binary suffixes, a bare B, and KB/MB/GB refused naming both readings.
timeout 60 "$RB" lat -t socket -s 65536B,1KiB -n 10 -f json >"$TMP/sz.json" || fail "-s 65536B,1KiB"
json_check "$TMP/sz.json" "[r['bytes'] for r in d['rows']]==[65536,1024]"
expect_status 2 "'1MB' is ambiguous: use 1M or 1MiB for 1048576 B, or 1000000 for 10^6 B" "$RB" lat -t socket -s 1MB
pass "size suffixes: 65536B, KiB; 1MB refused as ambiguous"
