#!/usr/bin/env bash
# Runs INSIDE the soft-RoCE VM (ci/rxe-vm run): the real CLI on rxe0 in loopback (server and
# client on the same device, the client connecting to the device's own address $RXE_IP).
# Covers issue #3: every op, sizes 0/1/inline cap/MTU-1/MTU/MTU+1/1 MiB, event mode, rdma_cm,
# -q 4, --cq-mod, depths, --inline, --mtu, --format perftest, info, one-line errors, a dead
# server and Ctrl-C. Outputs are JSON parsed with python3.
# Usage: bash tests/system/rxe/cli_verbs.sh /path/to/rdmabench      Exit 0 = pass, 1 = fail.
set -euo pipefail

RB=$(readlink -f "${1:?usage: $0 /path/to/rdmabench}")
[ -n "${RXE_IP:-}" ] || { echo "FAIL: RXE_IP not set (run me inside ci/rxe-vm)" >&2; exit 1; }
DEV=${RXE_DEV:-rxe0}
TMP=$(mktemp -d /tmp/rxe-cli.XXXXXX)
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
T0=$(date +%s)

# json_check FILE PYTHON-EXPR (d = the document, r = d['rows'][0] when present,
# c = the local connection properties)
# json_check FILE PYTHON-EXPR: queued, evaluated by one python3 process in check_all (a python3
# start costs seconds in the TCG VM). In EXPR, d = the document, r = d['rows'][0] when present,
# c = the local connection properties.
json_check() { printf '%s\t%s\n' "$1" "$2" >>"$TMP/checks"; }
check_all() {
  python3 -S - "$TMP/checks" <<'PY' || fail "JSON checks failed (above)"
import json, sys
bad = 0
lines = open(sys.argv[1]).read().splitlines()
for line in lines:
    path, expr = line.split('\t', 1)
    d = json.load(open(path))
    r = d['rows'][0] if isinstance(d, dict) and d.get('rows') else None
    c = d['run'].get('local', {}).get('connection', {}) if isinstance(d, dict) and 'run' in d else {}
    if not eval(expr):
        bad += 1
        print("JSON check failed:", path, expr, json.dumps(d)[:1500], file=sys.stderr)
print("JSON checks: %d of %d passed" % (len(lines) - bad, len(lines)))
sys.exit(1 if bad else 0)
PY
}
# json_num FILE KEY: the first numeric value of "KEY" in FILE (no python start).
json_num() { grep -o "\"$2\":[0-9]*" "$1" | head -1 | cut -d: -f2; }

# run NAME ARGS...: one client run against the server, JSON to $TMP/NAME.json
run() {
  local name=$1; shift
  local t=$SECONDS
  timeout 90 "$RB" "$@" -f json -o "$TMP/$name.json" 2>"$TMP/$name.err" ||
    fail "rdmabench $* (exit $?): $(cat "$TMP/$name.err")"
  echo "   $name: $((SECONDS - t)) s"
}

# expect_error SUBSTRING ARGS...: fails non-zero with one stderr line containing SUBSTRING.
expect_error() {
  local want=$1; shift
  local rc=0
  timeout 60 "$RB" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
  [ "$rc" != 0 ] || fail "expected failure: rdmabench $*"
  [ "$rc" != 124 ] || fail "hung (killed by timeout): rdmabench $*"
  grep -qF -- "$want" "$TMP/err" || fail "stderr of 'rdmabench $*' lacks '$want': $(cat "$TMP/err")"
  [ "$(wc -l <"$TMP/err")" = 1 ] || fail "expected one error line from 'rdmabench $*', got: $(cat "$TMP/err")"
  echo "   error ok (exit $rc): $(cat "$TMP/err")"
}

# wait_for FILE REGEX PID: waits (at most 300 s: the TCG VM is slow) until a line of FILE
# matches REGEX, e.g. the first CSV result row; fails at once when PID has exited.
wait_for() {
  local i
  for ((i = 0; i < 6000; i++)); do
    grep -qE -- "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || { grep -qE -- "$2" "$1" && return 0; fail "process $3 ended before '$2' appeared in $1: $(tail -3 "$1")"; }
    sleep 0.05
  done
  fail "no line matching '$2' in $1 after 300 s"
}

wait_port() {
  local port=$1 i
  for i in $(seq 1 200); do
    bash -c "exec 3<>/dev/tcp/$RXE_IP/$port" 2>/dev/null && return 0
    sleep 0.05
  done
  fail "rdmabench server does not listen on $RXE_IP:$port"
}

PORT=18650
"$RB" server --bind "$RXE_IP" --port $PORT --quiet &
SERVER=$!
PIDS+=("$SERVER")
wait_port $PORT
C=(-t verbs -d "$DEV" "$RXE_IP" --port $PORT)
E=(-t verbs "$RXE_IP" --port $PORT)  # for the error cases that pass their own -d

# --- info ---------------------------------------------------------------------------------
timeout 30 "$RB" info --format json >"$TMP/info.json" || fail "info --format json"
json_check "$TMP/info.json" "any(t.get('transport')=='verbs' and t['usable'] and any(dv['name']=='$DEV' and any(p['state']=='ACTIVE' and p['active_mtu']>=256 and p['link_layer']=='Ethernet' and sum(1 for g in p['gids'] if g.get('auto'))==1 for p in dv['ports']) for dv in t['details']['devices']) for t in d)"
timeout 30 "$RB" info >"$TMP/info.txt" || fail "info"
grep -q "^verbs *usable" "$TMP/info.txt" || fail "info table: verbs not usable: $(cat "$TMP/info.txt")"
grep -q "auto: true" "$TMP/info.txt" || fail "info table does not mark the auto GID"
pass "info: $DEV ACTIVE, active MTU, link layer, GID table with one auto entry"

# --- send latency: connection facts, then the size list -----------------------------------
run lat1 lat "${C[@]}" -s 1 -n 200 --check
json_check "$TMP/lat1.json" "c['state']=='RTS' and c['rnr_retry']==7 and c['retry_cnt']==6 and c['connection_manager']=='out-of-band' and c['mtu']==min(d['run']['local']['active_mtu'], d['run']['remote']['active_mtu']) and 0 < c['max_rd_atomic'] <= d['run']['remote']['max_qp_rd_atom'] and c['local_gid'].startswith('::ffff:') and r['bytes']==1 and r['iterations']==200 and 0 < r['latency_us']['min'] <= r['latency_us']['median']"
INL=$(json_num "$TMP/lat1.json" inline_bytes)
MTU=$(json_num "$TMP/lat1.json" mtu)
MAXMSG=$(json_num "$TMP/lat1.json" max_message_bytes)
[ "$INL" -gt 0 ] && [ "$MTU" -ge 256 ] && [ "$MAXMSG" -gt 0 ] || fail "inline $INL, MTU $MTU, max_msg $MAXMSG from the run header"
pass "lat send 1 B: RTS, rnr_retry 7, retry_cnt 6, MTU $MTU = min of active MTUs, inline cap $INL"

SEND_SIZES=(0 1 "$INL" $((MTU - 1)) "$MTU" $((MTU + 1)) 1048576)
list=$(IFS=,; echo "${SEND_SIZES[*]}")
run send lat "${C[@]}" -s "$list" -n 20 --warmup 2 --check
json_check "$TMP/send.json" "[x['bytes'] for x in d['rows']]==[$list] and all(x['iterations']==20 and x['latency_us']['median']>0 for x in d['rows']) and d['run']['extra']['check']"
pass "lat send --check at $list B"

list="1,$INL,$((MTU + 1)),1048576"
run write lat "${C[@]}" --op write -s "$list" -n 20 --warmup 2
json_check "$TMP/write.json" "d['run']['op']=='write' and not d['run']['round_trip'] and [x['bytes'] for x in d['rows']]==[$list] and all(x['latency_us']['median']>0 for x in d['rows'])"
pass "lat write (last-byte polling) at $list B"

list="1,$MTU,1048576"
run read lat "${C[@]}" --op read -s "$list" -n 20 --warmup 2
json_check "$TMP/read.json" "d['run']['op']=='read' and d['run']['round_trip'] and [x['bytes'] for x in d['rows']]==[$list] and all(x['latency_us']['median']>0 for x in d['rows'])"
timeout 60 "$RB" lat "${C[@]}" --op read -s 64 -n 50 >"$TMP/read.txt" || fail "lat read table"
grep -q "full round trip" "$TMP/read.txt" || fail "read latency not labelled as round trip"
grep -q "rtt_typical" "$TMP/read.txt" || fail "read latency columns are not rtt_*"
pass "lat read at $list B, labelled full round trip"

# --- bandwidth --------------------------------------------------------------------------------
run bws bw "${C[@]}" -s 1,65536,1048576 -n 2 -w 8
json_check "$TMP/bws.json" "[x['bytes'] for x in d['rows']]==[1,65536,1048576] and all(x['mb_per_s']>0 and x['msg_per_s']>0 for x in d['rows']) and not d['run']['remote']['event_mode']"
run bww bw "${C[@]}" --op write -s 65536 -n 4 -w 16
# The passive target of a one-sided bw sleeps on completion events (docs/metrics.md); the
# initiator and a send target keep busy polling.
json_check "$TMP/bww.json" "d['run']['op']=='write' and r['mb_per_s']>0 and d['run']['remote']['event_mode'] and not d['run']['local']['event_mode']"
run bwq bw "${C[@]}" --op write -s 4096 -n 10 -w 16 -q 4 --cq-mod 4
json_check "$TMP/bwq.json" "d['run']['extra']['queue_pairs']==4 and d['run']['extra']['cq_moderation']==4 and r['mb_per_s']>0"
run bwsq bw "${C[@]}" -s 4096 -n 10 -w 16 -q 4
json_check "$TMP/bwsq.json" "d['run']['extra']['queue_pairs']==4 and r['mb_per_s']>0"
run bwb bw "${C[@]}" -s 4096 -n 10 -w 16 --bidir
json_check "$TMP/bwb.json" "d['run']['bidirectional'] and r['mb_per_s']>0"
pass "bw send 1 B / 64 KiB / 1 MiB, write 64 KiB, -q 4 (send and write) with --cq-mod 4, --bidir"

# --check on verbs: bw send, write (stream), bidirectional write, lat write/read (#wrong 0).
# (`bw --op read --check` is refused with a one-line error: the reader cannot tell a stale
# buffer from a fresh one; lat --op read --check covers reads.)
run cbs bw "${C[@]}" --op send -s 4096 -n 20 --check
run cbw bw "${C[@]}" --op write -s 4096 -n 50 --mode stream --check
run cbb bw "${C[@]}" --op write -s 4096 -n 20 --bidir --check
run clw lat "${C[@]}" --op write -s 1,4096 -n 50 --check
run clr lat "${C[@]}" --op read -s 1,4096 -n 50 --check
for f in cbs cbw cbb clw clr; do
  json_check "$TMP/$f.json" "d['run']['extra']['check'] and all(r['wrong']==0 for r in d['rows']) and len(d['rows'])>=1"
done
pass "--check on verbs: bw send/write (stream)/bidir write, lat write/read: #wrong 0"

# --- device options ---------------------------------------------------------------------------
run depth bw "${C[@]}" -s 1024 -n 10 -w 32 --tx-depth 16 --rx-depth 64 --inline 0
json_check "$TMP/depth.json" "c['tx_depth']==16 and c['rx_depth']==64 and c['inline_bytes']==0 and d['run']['remote']['tx_depth']==16 and r['mb_per_s']>0"
run inl lat "${C[@]}" -s 64 -n 50 --inline 64 --check
json_check "$TMP/inl.json" "c['inline_bytes']==64 and r['bytes']==64"
run mtu lat "${C[@]}" -s 2048 -n 50 --mtu 512 --check
json_check "$TMP/mtu.json" "c['mtu']==512 and d['run']['local']['mtu']==512 and r['bytes']==2048"
run gid lat "${C[@]}" -s 8 -n 50 --gid-index auto --ib-port 1
json_check "$TMP/gid.json" "d['run']['local']['gid_index']==int('${RXE_GID_INDEX:-1}')"
pass "--tx-depth/--rx-depth/--inline 0 (bw), --inline 64, --mtu 512, --gid-index auto = $RXE_GID_INDEX"

# --- event mode and rdma_cm ----------------------------------------------------------------------
run evs lat "${C[@]}" -e -s 0 -n 100 --check
json_check "$TMP/evs.json" "d['run']['local']['event_mode'] and d['run']['remote']['event_mode'] and r['bytes']==0"
run evw bw "${C[@]}" -e --op write -s 4096 -n 10 -w 16
json_check "$TMP/evw.json" "d['run']['local']['event_mode'] and r['mb_per_s']>0"
run evr lat "${C[@]}" -e --op read -s 4096 -n 50
json_check "$TMP/evr.json" "d['run']['local']['event_mode'] and r['latency_us']['median']>0"
pass "event mode (-e): lat send 0 B, bw write, lat read"

for op in send write read; do
  chk=(); [ $op = send ] && chk=(--check)
  sz=1,$((MTU + 1)); [ $op = send ] && sz=0,$sz
  run "cm$op" lat "${C[@]}" -R --op $op -s $sz -n 30 "${chk[@]}"
  json_check "$TMP/cm$op.json" "c['connection_manager']=='rdma_cm' and c['rnr_retry']==7 and c['state']=='RTS' and d['run']['op']=='$op' and r['latency_us']['median']>0"
done
run cmbw bw "${C[@]}" -R -s 65536 -n 4 -w 16 -q 4
json_check "$TMP/cmbw.json" "c['connection_manager']=='rdma_cm' and d['run']['extra']['queue_pairs']==4 and r['mb_per_s']>0"
run cmev bw "${C[@]}" -R -e --op write -s 4096 -n 10 -w 16
pass "--rdma-cm: lat send (0 B too)/write/read at 1 and $((MTU + 1)) B, bw -q 4, bw with -e"

# --- perftest format ------------------------------------------------------------------------------
timeout 60 "$RB" lat "${C[@]}" -s 2 -n 100 -f perftest >"$TMP/pl.txt" || fail "lat -f perftest"
grep -q "t_typical\[usec\]" "$TMP/pl.txt" || fail "perftest latency columns missing: $(cat "$TMP/pl.txt")"
awk '$1 == 2 && $2 == 100 && $3 > 0 { found = 1 } END { exit !found }' "$TMP/pl.txt" ||
  fail "no perftest-style 2 B row: $(cat "$TMP/pl.txt")"
# perftest's method with --mode stream (-n counts messages as ib_write_bw -n does); the format
# alone does not change the mode (issue 22).
timeout 60 "$RB" bw "${C[@]}" --op write -s 65536 -n 64 --tx-depth 16 --mode stream -f perftest >"$TMP/pb.txt" ||
  fail "bw -f perftest"
grep -q "BW average" "$TMP/pb.txt" || fail "perftest bandwidth columns missing: $(cat "$TMP/pb.txt")"
grep -Eq "^ *65536 +64 " "$TMP/pb.txt" || fail "perftest row: 65536 B, 64 messages: $(cat "$TMP/pb.txt")"
pass "--format perftest (lat, bw)"

# --- errors: one line, non-zero exit ----------------------------------------------------------------
expect_error "--device nosuch0: no such RDMA device" lat "${E[@]}" -d nosuch0 -s 8 -n 10
expect_error "--gid-index 5000: out of range 0.." lat "${C[@]}" -x 5000 -s 8 -n 10
expect_error "--gid-index 999: entry is empty" lat "${C[@]}" -x 999 -s 8 -n 10
expect_error "above the inline cap" lat "${C[@]}" --inline 65536 -s 8 -n 10
expect_error "--ib-port 2: out of range 1..1" lat "${C[@]}" --ib-port 2 -s 8 -n 10
expect_error "--mtu 4096: above the active MTU" lat "${C[@]}" --mtu 4096 -s 8 -n 10
expect_error "--size 0: --op read needs at least 1 byte" lat "${C[@]}" --op read -s 0
expect_error "limit of $MAXMSG bytes" lat "${C[@]}" -s $((MAXMSG + 1)) -n 2
# Both sides fail alike: said once, not "X (here: X)" (issue 35 item 13).
! grep -q "(here: " "$TMP/err" || fail "the size limit said twice: $(cat "$TMP/err")"
expect_error "--tx-depth" lat "${C[@]}" --tx-depth 100000000 -s 8 -n 10
pass "errors: bad device, GID index out of range, inline above cap, port, MTU, 0 B read, size above max_msg_sz, depth"

# --- a dead server never leaves the client spinning; Ctrl-C tears down ------------------------------
P2=18651
"$RB" server --bind "$RXE_IP" --port $P2 --quiet &
S2=$!
PIDS+=("$S2")
wait_port $P2
# Killed after the first result row (1 B done; 1 MiB x 8000 messages takes minutes on rxe).
rc=0
timeout 600 "$RB" bw -t verbs "$RXE_IP" --port $P2 --op write -s 1,1M -n 500 -w 16 -f csv \
  --timeout 5 >"$TMP/dead.out" 2>"$TMP/dead.err" &
CL=$!
wait_for "$TMP/dead.out" '^bw,verbs,write,false,false,16,1,500,[0-9]' "$CL"
start=$(date +%s)
kill -9 "$S2"
wait "$CL" || rc=$?
took=$(($(date +%s) - start))
[ "$rc" != 0 ] || fail "client survived a killed server with exit 0"
[ "$rc" != 124 ] || fail "client spun until killed after the server died"
[ "$(wc -l <"$TMP/dead.err")" = 1 ] || fail "dead server: expected one error line: $(cat "$TMP/dead.err")"
pass "killed server: client exit $rc after ${took}s: $(cat "$TMP/dead.err")"

# Ctrl-C after the first result row: the client is past its start (a SIGINT during start-up
# in the slow VM once killed it before main() ran), in the middle of the 1 MiB size.
rc=0
timeout 600 env --default-signal=INT "$RB" bw "${C[@]}" -s 1,1M -n 500 -w 16 -f csv >"$TMP/int.out" 2>"$TMP/int.err" &
CL=$!
wait_for "$TMP/int.out" '^bw,verbs,send,false,false,16,1,500,[0-9]' "$CL"
kill -INT "$CL"
wait "$CL" || rc=$?
[ "$rc" = 4 ] || fail "Ctrl-C: exit $rc, expected 4: $(cat "$TMP/int.err")"
grep -q "interrupted" "$TMP/int.err" || fail "Ctrl-C: no 'interrupted' message: $(cat "$TMP/int.err")"
run after lat "${C[@]}" -s 8 -n 50
kill -0 "$SERVER" || fail "the server died after an interrupted client"
pass "Ctrl-C: client exit 4 ($(cat "$TMP/int.err")); the server serves the next client"

# Memory registration cost (issue 39, docs/reg.md): ibv_reg_mr / ibv_dereg_mr on rxe0, every
# size with its iterations (counts, not times).
timeout 300 "$RB" reg -t verbs -d "$DEV" -m 4K:4M -n 5 -f json -o "$TMP/reg.json" 2>"$TMP/reg.err" ||
  fail "reg -t verbs: $(cat "$TMP/reg.err")"
json_check "$TMP/reg.json" "d['run']['register_call']=='ibv_reg_mr' and d['run']['device']=='$DEV' and [r['bytes'] for r in d['rows']]==[4096<<i for i in range(11)] and all(r['iterations']==5 and r['reg_us']['t_min']>0 and r['dereg_us']['t_min']>0 and r['reg_gb_per_s']>0 for r in d['rows'])"
timeout 300 "$RB" reg -t verbs -d "$DEV" -m 2M:4M -n 3 --pages thp --no-prefault -f json \
  -o "$TMP/regthp.json" 2>"$TMP/reg.err" || fail "reg -t verbs --pages thp: $(cat "$TMP/reg.err")"
json_check "$TMP/regthp.json" "d['run']['pages']=='thp' and d['run']['prefault'] is False and len(d['rows'])==2"
timeout 300 "$RB" reg -t ofi --provider 'verbs;ofi_rxm' -d "$DEV" -m 4K:1M -n 3 -f json \
  -o "$TMP/regofi.json" 2>"$TMP/reg.err" || fail "reg -t ofi verbs;ofi_rxm: $(cat "$TMP/reg.err")"
json_check "$TMP/regofi.json" "d['run']['register_call']=='fi_mr_reg' and d['run']['mr_cache'] is False and len(d['rows'])==9 and all(r['reg_gb_per_s']>0 for r in d['rows'])"
pass "reg -t verbs: ibv_reg_mr on $DEV, 4K..4M x 5, and thp without prefault; fi_mr_reg on verbs;ofi_rxm, its MR cache off"

# Connection setup rate (issue 39, docs/connect.md): 50 RC QPs out of band and 20 through
# rdma_cm, both sides in one process; every step once per connection (counts, not times).
timeout 300 "$RB" connect -t verbs -d "$DEV" -n 50 -f json -o "$TMP/conn.json" 2>"$TMP/conn.err" ||
  fail "connect -t verbs: $(cat "$TMP/conn.err")"
json_check "$TMP/conn.json" "[s['step'] for s in d['steps']]==['create','connect','first_message','destroy'] and d['run']['connections']==50 and 'INIT -> RTR -> RTS' in d['run']['method'] and all(s['min_us']>0 for s in d['steps'])"
timeout 300 "$RB" connect -t verbs -d "$DEV" -R --bind "$RXE_IP" -n 20 -f json -o "$TMP/conncm.json" \
  2>"$TMP/conn.err" || fail "connect -t verbs -R: $(cat "$TMP/conn.err")"
json_check "$TMP/conncm.json" "len(d['steps'])==4 and d['run']['connections']==20 and 'rdma_cm' in d['run']['method']"
pass "connect -t verbs: 50 QPs out of band, 20 through rdma_cm"

check_all
echo "PASSED: rdmabench CLI on $DEV loopback ($(($(date +%s) - T0)) s)"
