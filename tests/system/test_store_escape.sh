# Issue 24 item 6 (rendezvous part): peer-supplied text is escaped wherever it is printed. A
# stranger joins a run on a tokenless standalone `rdmabench rendezvous` as its missing rank, with
# a host name and a failure reason holding terminal escape sequences, a bell, a carriage return
# and a line break that starts a fake "rdmabench: run OK" line. The store tells the run's real
# ranks that this rank failed; their error lines (and the store's log) must show the text
# escaped (\x1b, \n): no raw control byte reaches stderr, no forged line appears.
source "$(dirname "$0")/lib.sh"

PORT=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
env -u RDMABENCH_TOKEN "$RB" rendezvous --port "$PORT" --token "" 2>"$TMP/store.err" &
store=$!
CLEANUP+=("kill -9 $store")
wait_port "" "$PORT"  # the stranger connects once; it got "Connection refused" in a CI run
args=(barrier --world-size 3 --rendezvous 127.0.0.1:$PORT --standalone-rendezvous --run-id legit
  -n 10 --timeout 20)
pids=()
for r in 0 1; do
  env -u RDMABENCH_TOKEN timeout 60 "$RB" "${args[@]}" --rank $r >"$TMP/out.$r" 2>"$TMP/err.$r" &
  pids+=($!)
  CLEANUP+=("kill -9 $!")
done
timeout 40 python3 "$SRC/tests/system/store_stranger.py" bye "$PORT" legit 2 3 >"$TMP/stranger.out" ||
  fail "stranger: $(cat "$TMP/stranger.out")"
for i in 0 1; do
  rc=0
  wait "${pids[$i]}" || rc=$?
  [ "$rc" = 1 ] || fail "rank $i: exit $rc, expected 1 (rank 2 failed): $(cat "$TMP/err.$i")"
done
kill "$store"
wait "$store" 2>/dev/null || true

for f in err.0 err.1 store.err; do
  python3 - "$TMP/$f" <<'PY' || fail "$f: $(cat -v "$TMP/$f")"
import sys
data = open(sys.argv[1], "rb").read()
bad = sorted({b for b in data if (b < 0x20 and b != 0x0a) or b == 0x7f})
assert not bad, "raw control bytes %s reached stderr" % [hex(b) for b in bad]
lines = data.decode("utf-8", "replace").splitlines()
assert not [l for l in lines if l.startswith("rdmabench: run OK")], "a forged line: %r" % lines
assert any("\\x1b[31mevil\\nrdmabench: run OK" in l for l in lines), "the host, escaped, missing: %r" % lines
PY
done
grep -q '^rdmabench: error: rank 0 on [^:]*: rank 2 on host \\x1b\[31mevil\\nrdmabench: run OK failed: \\x1b\]0;pwned\\x07' "$TMP/err.0" ||
  fail "rank 0's line: $(cat -v "$TMP/err.0")"
pass "a stranger's host name and bye reason reach the ranks' and the store's stderr escaped, one line each"
