#!/usr/bin/env bash
# `rdmabench connect` (issue 39, docs/connect.md) on the host: socket, libfabric tcp;ofi_rxm
# (FI_EP_RDM: AV insert, the wire connection at the first message) and tcp (FI_EP_MSG
# connect/accept) each give cmtime's four steps with one sample per connection; the table has
# cmtime's columns; SIGTERM exits 4 within seconds; a provider that is not there is one line,
# exit 2; usage errors exit 2.
# verbs (out of band and rdma_cm) runs in the rxe VM (tests/system/rxe/cli_verbs.sh). Counts
# only, no timing assertion. About 5 s.
source "$(dirname "$0")/lib.sh"
STEPS="[s['step'] for s in d['steps']]==['create','connect','first_message','destroy']"

timeout 120 "$RB" connect -t socket -n 40 -f json -o "$TMP/s.json" 2>"$TMP/err" ||
  fail "connect -t socket: $(cat "$TMP/err")"
json_check "$TMP/s.json" "$STEPS and d['run']['connections']==40 and all(s['total_ms']>0 and s['max_us']>=s['min_us']>0 for s in d['steps']) and d['setup_per_s']>0 and 'TCP connect / accept' in d['run']['method']"
pass "connect -t socket -n 40: four steps in order, figures per connection"

timeout 120 "$RB" connect -t ofi --provider 'tcp;ofi_rxm' -n 40 -f json -o "$TMP/o.json" \
  2>"$TMP/err" || fail "connect -t ofi tcp;ofi_rxm: $(cat "$TMP/err")"
json_check "$TMP/o.json" "$STEPS and d['run']['transport']=='ofi' and 'fi_av_insert' in d['run']['method']"
timeout 120 "$RB" connect -t ofi --provider tcp --ep msg -n 20 >"$TMP/m.txt" 2>"$TMP/err" ||
  fail "connect -t ofi --provider tcp --ep msg: $(cat "$TMP/err")"
grep -q '^# method: FI_EP_MSG endpoints, fi_connect / fi_accept$' "$TMP/m.txt" ||
  fail "method line: $(cat "$TMP/m.txt")"
grep -qE '^step +total ms +max ms +min us +us / conn$' "$TMP/m.txt" ||
  fail "cmtime's columns: $(cat "$TMP/m.txt")"
[ "$(grep -cE '^(create|connect|first_message|destroy) +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$' "$TMP/m.txt")" = 4 ] ||
  fail "four step rows: $(cat "$TMP/m.txt")"
grep -qE '^# setup rate \(create \+ connect\): [0-9]+ connections/s$' "$TMP/m.txt" ||
  fail "setup rate line: $(cat "$TMP/m.txt")"
pass "connect -t ofi: tcp;ofi_rxm (RDM) and tcp --ep msg, cmtime's columns"

# SIGTERM in the middle, as a scheduler sends it (the Ctrl-C path; a background job of this
# script inherits SIGINT ignored, which rdmabench keeps, as nohup would), sent once the process
# has its handler (SigCgt): 2000 ofi_rxm connections take 10 s or more (their first messages make
# the wire connections); exit 4, one line, every connection torn down, within 30 s.
"$RB" connect -t ofi --provider 'tcp;ofi_rxm' -n 2000 >/dev/null 2>"$TMP/int.err" &
pid=$!
for _ in $(seq 300); do
  mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
  [ -n "$mask" ] && [ $((0x$mask & 0x4000)) != 0 ] && break
  sleep 0.1
done
sleep 0.5
kill -TERM "$pid"
rc=0
t=$SECONDS
timeout 30 tail --pid="$pid" -f /dev/null || fail "SIGTERM: still running 30 s later"
wait "$pid" || rc=$?
[ "$rc" = 4 ] || fail "SIGTERM: exit $rc, expected 4: $(cat "$TMP/int.err")"
grep -q "^rdmabench: error: interrupted (SIGTERM) during " "$TMP/int.err" ||
  fail "SIGTERM: $(cat "$TMP/int.err")"
[ "$(wc -l <"$TMP/int.err")" = 1 ] || fail "SIGTERM: more than one line: $(cat "$TMP/int.err")"
pass "SIGTERM during 2000 connections: exit 4 $((SECONDS - t)) s after it, $(cat "$TMP/int.err")"

expect_status 2 "--provider: 'no_such_provider' offers no" \
  "$RB" connect -t ofi --provider no_such_provider -n 3
expect_status 2 "-n/--connections 0: " "$RB" connect -t socket -n 0
expect_status 2 "-R/--rdma-cm: needs --bind ADDR" "$RB" connect -t verbs -R
expect_status 2 "--ep dgram: unknown (valid: rdm, msg)" "$RB" connect -t ofi --ep dgram
pass "usage errors: one line, exit 2"
