# libfabric runs against `rdmabench server` (issue #13): `info` tells what runs will do (rma for
# tcp;ofi_rxm), and the client's wire-relevant FI_* settings reach the server's session and the
# run header. Loopback, ~10 s.
source "$(dirname "$0")/lib.sh"
"$RB" info --format json >"$TMP/info.json" || fail "info"
python3 - "$TMP/info.json" <<'PY' || skip "libfabric provider tcp;ofi_rxm not usable here"
import json, sys
d = json.load(open(sys.argv[1]))
ofi = [t for t in d if t.get("transport") == "ofi" and t["usable"]]
assert ofi and any(p["provider"] == "tcp;ofi_rxm" for p in ofi[0]["details"]["providers"])
PY

# 1. info's rma flag is what a run gets.
timeout 60 "$RB" lat -t ofi --provider "tcp;ofi_rxm" --op write -s 64 -n 100 -f json -o "$TMP/w.json" 2>"$TMP/w.err" ||
  fail "--op write over tcp;ofi_rxm: $(cat "$TMP/w.err")"
json_check "$TMP/info.json" "all(dom['rma'] for t in d if t.get('transport')=='ofi' for p in t['details']['providers'] if p['provider']=='tcp;ofi_rxm' for dom in p['domains'])"
json_check "$TMP/w.json" "d['run']['local']['caps']['rma_write'] is True"
pass "info says rma: true for tcp;ofi_rxm, as --op write runs"

# 2. Wire-relevant provider settings travel with the test description.
PORT=$((20000 + ($$ + 7) % 20000))
env -u FI_OFI_RXM_USE_RNDV_WRITE "$RB" server -p "$PORT" 2>"$TMP/server.log" &
SERVER=$!
CLEANUP+=("kill -9 $SERVER")
wait_port "" "$PORT"
FI_OFI_RXM_USE_RNDV_WRITE=1 timeout 60 "$RB" lat 127.0.0.1 -p "$PORT" -t ofi --provider "tcp;ofi_rxm" -s 64,256K -n 50 -f json -o "$TMP/env.json" 2>"$TMP/env.err" ||
  fail "client with FI_OFI_RXM_USE_RNDV_WRITE=1 against a default server: $(cat "$TMP/env.err")"
json_check "$TMP/env.json" "d['run']['extra']['provider_env']==\"client FI_OFI_RXM_USE_RNDV_WRITE=1; server used the client's (its own: libfabric defaults)\""
kill -0 "$SERVER" || fail "server died"
pass "FI_OFI_RXM_USE_RNDV_WRITE applied in the server's session, header shows both sides"

# 3. shm against the server on one host, alone and in an A/B (#13). Both sides used to name their
#    shm region after the control address (127.0.0.1:0:0): the server's session failed with
#    EBUSY or died with SIGSEGV, and the A/B client crashed in libfabric.
timeout 60 "$RB" lat 127.0.0.1 -p "$PORT" -t ofi --provider shm -s 64,4096 -n 200 --check -f json -o "$TMP/shm.json" 2>"$TMP/shm.err" ||
  fail "lat --provider shm against the server: $(cat "$TMP/shm.err")"
json_check "$TMP/shm.json" "d['run']['local']['provider']=='shm' and d['run']['remote']['provider']=='shm' and [x['bytes'] for x in d['rows']]==[64,4096] and all(x['wrong']==0 and x['latency_us']['median']>0 for x in d['rows'])"
timeout 60 "$RB" bw 127.0.0.1 -p "$PORT" -t ofi --provider shm -s 65536 -n 20 --check -f json -o "$TMP/shmbw.json" 2>"$TMP/shmbw.err" ||
  fail "bw --provider shm against the server: $(cat "$TMP/shmbw.err")"
json_check "$TMP/shmbw.json" "all(x['wrong']==0 and x['mb_per_s']>0 for x in d['rows'])"
timeout 120 "$RB" lat 127.0.0.1 -p "$PORT" --provider "tcp;ofi_rxm" --provider shm -s 64 -n 200 -f json -o "$TMP/ab.json" 2>"$TMP/ab.err" ||
  fail "A/B tcp;ofi_rxm vs shm: $(cat "$TMP/ab.err")"
json_check "$TMP/ab.json" "[v['label'] for v in d['variants']]==['ofi:tcp;ofi_rxm','ofi:shm'] and not any('error' in v for v in d['variants'])"
kill -0 "$SERVER" || fail "server died"
pass "shm: lat and bw --check against the server, and an A/B with tcp;ofi_rxm, on one host"

# 4. Window-mode bw with more receives than the ofi device's shared operation slots (newcomer
#    trial): --qp 16 --window 70 stalled until --timeout. Now one usage line before the run, from
#    the loopback client and from a remote server alike (where 64 x 16 fits and runs).
expect_status 2 "--qp 16 x --window 70: 2272 receives posted at once" \
  "$RB" bw -t ofi --provider "tcp;ofi_rxm" -q 16 -w 70 -s 64 -n 5 --timeout 20
expect_status 2 "above the 2112 operation slots the server ofi device" \
  "$RB" bw 127.0.0.1 -p "$PORT" -t ofi --provider "tcp;ofi_rxm" -q 16 -w 70 -s 64 -n 5 --timeout 20
timeout 60 "$RB" bw 127.0.0.1 -p "$PORT" -t ofi --provider "tcp;ofi_rxm" -q 16 -w 64 -s 64 -n 5 >/dev/null 2>"$TMP/q16.err" ||
  fail "bw -q 16 -w 64 (2080 receives, within the 2112 slots): $(cat "$TMP/q16.err")"
kill -0 "$SERVER" || fail "server died"
pass "bw -t ofi -q 16 -w 70: one usage line naming the shared operation slots (client and server)"
