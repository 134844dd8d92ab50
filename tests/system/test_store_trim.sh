# Issue 24 item 7 (rendezvous part): the store returns freed memory. A stranger joins a
# standalone `rdmabench rendezvous`, fills ~300 MB of its quota with 64 KiB values and leaves;
# its run's keys are freed, and the server's resident memory (VmRSS) must fall back near where
# it started. Before, free() kept the pages in the process (~1 GB resident after strangers had
# filled the 1 GiB quota and left); now a finished run that held 1 MiB or more is followed by
# malloc_trim(0).
source "$(dirname "$0")/lib.sh"

rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }

PORT=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
env -u RDMABENCH_TOKEN "$RB" rendezvous --port "$PORT" --token "" --conn-quota 1G --total-quota 2G \
  2>"$TMP/store.err" &
store=$!
CLEANUP+=("kill -9 $store")
for _ in $(seq 1 100); do
  grep -q "listening on port" "$TMP/store.err" && break
  sleep 0.1
done
base=$(rss_kb "$store")
for round in 1 2; do
  timeout 120 python3 "$SRC/tests/system/store_stranger.py" "$PORT" 4800 65536 2 "filler$round" \
    >"$TMP/stranger.out" &
  filler=$!
  for _ in $(seq 1 600); do
    grep -q "^stored" "$TMP/stranger.out" && break
    sleep 0.1
  done
  grep -q "^stored 4800" "$TMP/stranger.out" || fail "the stranger stored: $(cat "$TMP/stranger.out")"
  full=$(rss_kb "$store")
  wait "$filler" || fail "stranger: $(cat "$TMP/stranger.out")"
  for _ in $(seq 1 50); do
    grep -q "run 'filler$round' finished" "$TMP/store.err" && break
    sleep 0.1
  done
  grep -q "run 'filler$round' finished" "$TMP/store.err" || fail "run not collected: $(cat "$TMP/store.err")"
  # The log line comes just before the keys are freed: give the server a moment (bounded).
  for _ in $(seq 1 50); do
    after=$(rss_kb "$store")
    [ "$after" -lt $((base + 32768)) ] && break
    sleep 0.1
  done
  echo "  round $round: VmRSS $base kB at start, $full kB holding 4800 x 64 KiB, $after kB after the run ended"
  [ "$full" -gt $((base + 200000)) ] || fail "the store held only $full kB (start $base kB): nothing to free?"
  [ "$after" -lt $((base + 32768)) ] ||
    fail "round $round: VmRSS $after kB after the stranger left (start $base kB, full $full kB): memory not returned"
done
pass "the store returns a finished run's memory: VmRSS back within 32 MB of its start"
