# A bw row's peer_BW is the server's own interval, only as good as its polling: a server that
# did not run while the data arrived reaps the start and fin markers at once and reported rates
# above what was sent (25,600,000 MB/s for 421 MB/s, tcp;ofi_rxm on a loaded host). The server
# is held (test hook, mid-run: 500 ms after the second size's "ready"), so every message of that
# size waits for it: the row says [peer_late] and shows no peer_BW (json: null, flags
# "peer_late") instead of a figure 50-250x the link's. Socket and tcp;ofi_rxm, loopback, ~6 s.
source "$(dirname "$0")/lib.sh"

for t in socket ofi; do
  PORT=$((20000 + ($$ + ${#t}) % 20000))
  RDMABENCH_TEST_HOLD=mid-run RDMABENCH_TEST_HOLD_MS=500 "$RB" server -p "$PORT" --once --quiet \
    2>"$TMP/server.$t.log" &
  SERVER=$!
  CLEANUP+=("kill -9 $SERVER")
  wait_port "" "$PORT"
  timeout 60 "$RB" bw 127.0.0.1 -p "$PORT" -t "$t" --op write -s 8,64 -n 1000 --warmup 0 -f json \
    -o "$TMP/bw.$t.json" 2>"$TMP/bw.$t.err" || fail "$t: bw: $(cat "$TMP/bw.$t.err")"
  wait "$SERVER" || true
  grep -q "holding at mid-run" "$TMP/server.$t.log" || fail "$t: the server did not hold: $(cat "$TMP/server.$t.log")"
  json_check "$TMP/bw.$t.json" "d['rows'][1]['bytes'] == 64 and 'peer_late' in d['rows'][1].get('flags', []) and d['rows'][1]['peer_mb_per_s'] is None"
  pass "$t: a held server's row has no peer_BW and says peer_late"
done
