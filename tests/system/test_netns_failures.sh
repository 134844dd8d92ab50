# Failure behaviour across two netns hosts: refused connection, a server killed mid-run, a
# client killed mid-run (the server serves the next one), Ctrl-C, garbage and oversized asks.
source "$(dirname "$0")/lib.sh"
need_root
netns_pair
B=(ip netns exec "$NS_B")

# 1. Nobody listening: one clear line, quickly; `lat` and `bw` exit with the same status for the
#    same kind of failure (docs/cli.md): 1 for a failure, 2 for a usage error.
for t in lat bw; do
  expect_status 1 "Connection refused" "${B[@]}" "$RB" "$t" "$IP_A" -t socket -s 8 -n 10
  expect_status 2 "--iters 0" "${B[@]}" "$RB" "$t" "$IP_A" -t socket -s 8 -n 0
done
pass "connection refused (exit 1) and a bad value (exit 2), lat and bw alike"

# Mid-run events happen after the first result row (size 8 done; 16 MiB x 1000 round trips
# take many seconds): a marker, not a sleep, so a slow start cannot make them land before the
# run. ROW matches the size-8 data row only (an abort line has empty measurement fields).
MIDRUN=(-t socket -s 8,16M -n 1000 -f csv)
ROW='^lat,socket,send,false,false,0,8,1000,[0-9]'


# 2. Server killed mid-run: the client names the peer and the phase, within --timeout (the
# bound is the product's timeout plus slack for a loaded machine).
background ip netns exec "$NS_A" "$RB" server --port 18515 --quiet
SERVER=$BG_PID
wait_port "$NS_A" 18515
rc=0
"${B[@]}" timeout 60 "$RB" lat "$IP_A" "${MIDRUN[@]}" --timeout 5 >"$TMP/out" 2>"$TMP/err" &
CLIENT=$!
wait_for "$TMP/out" "$ROW" "$CLIENT"
start=$(date +%s)
kill -9 "$SERVER"
wait "$CLIENT" || rc=$?
elapsed=$(( $(date +%s) - start ))
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "client rc=$rc after server death: $(cat "$TMP/err")"
[ "$elapsed" -le 30 ] || fail "client took ${elapsed}s to notice the dead server (--timeout 5)"
grep -q "$IP_A" "$TMP/err" || fail "error does not name the server: $(cat "$TMP/err")"
grep -q "size 16777216" "$TMP/err" || fail "error does not name the phase: $(cat "$TMP/err")"
pass "server killed mid-run -> client: $(cat "$TMP/err")"

# 3. Client killed mid-run: the server logs it and serves the next client.
background ip netns exec "$NS_A" "$RB" server --port 18516
SERVER=$BG_PID
wait_port "$NS_A" 18516
"${B[@]}" "$RB" lat "$IP_A" -p 18516 "${MIDRUN[@]}" >"$TMP/out3" 2>&1 &
CLIENT=$!
wait_for "$TMP/out3" "$ROW" "$CLIENT"
kill -9 "$CLIENT"; wait "$CLIENT" 2>/dev/null || true
"${B[@]}" timeout 60 "$RB" lat "$IP_A" -p 18516 -t socket -s 64 -n 1000 >"$TMP/out2" || fail "second client not served after a dead one"
kill -0 "$SERVER" || fail "server died with its client"
pass "dead client -> next client served"

# 4. Ctrl-C on the client: clean exit, the server goes on.
"${B[@]}" env --default-signal=INT "$RB" lat "$IP_A" -p 18516 "${MIDRUN[@]}" >"$TMP/out4" 2>"$TMP/int.err" &
CLIENT=$!
wait_for "$TMP/out4" "$ROW" "$CLIENT"
kill -INT "$CLIENT"
rc=0; wait "$CLIENT" || rc=$?
[ "$rc" = 4 ] || fail "Ctrl-C: client exit $rc, expected 4: $(cat "$TMP/int.err")"
grep -q "interrupted" "$TMP/int.err" || fail "Ctrl-C message: $(cat "$TMP/int.err")"
"${B[@]}" timeout 60 "$RB" lat "$IP_A" -p 18516 -t socket -s 64 -n 100 >/dev/null || fail "server gone after client Ctrl-C"
pass "Ctrl-C on the client"

# 5. Garbage on the control port, then a real client.
"${B[@]}" bash -c "exec 3<>/dev/tcp/$IP_A/18516; printf 'GET / HTTP/1.0\r\n\r\n' >&3; sleep 0.5" || true
"${B[@]}" timeout 60 "$RB" lat "$IP_A" -p 18516 -t socket -s 64 -n 100 >/dev/null || fail "server gone after garbage"
pass "garbage hello rejected, server survives"

# 6. Server caps what a client may make it allocate.
background ip netns exec "$NS_A" "$RB" server --port 18517 --max-bytes 1M --quiet
wait_port "$NS_A" 18517
expect_error "--max-bytes" "${B[@]}" "$RB" bw "$IP_A" -p 18517 -t socket -s 4M -n 2
pass "--max-bytes enforced with a clear error on the client"

# 7. Ctrl-C on the server mid-run: the client is told.
background ip netns exec "$NS_A" env --default-signal=INT "$RB" server --port 18518 --quiet
SERVER=$BG_PID
wait_port "$NS_A" 18518
"${B[@]}" timeout 60 "$RB" lat "$IP_A" -p 18518 "${MIDRUN[@]}" >"$TMP/out7" 2>"$TMP/sint.err" &
CLIENT=$!
wait_for "$TMP/out7" "$ROW" "$CLIENT"
kill -INT "$SERVER"
rc=0; wait "$CLIENT" || rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "client rc=$rc after server Ctrl-C"
grep -q "interrupted" "$TMP/sint.err" || fail "client not told of server Ctrl-C: $(cat "$TMP/sint.err")"
pass "Ctrl-C on the server -> client: $(cat "$TMP/sint.err")"
