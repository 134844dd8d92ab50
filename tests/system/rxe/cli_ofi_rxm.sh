#!/usr/bin/env bash
# Runs INSIDE the soft-RoCE VM (ci/rxe-vm run): issue #4's verbs;ofi_rxm part through the real
# CLI. `rdmabench lat|bw -t ofi --provider "verbs;ofi_rxm" --domain rxe0` against
# `rdmabench server` on the VM's own address (loopback on rxe0), at 0/1/inject_size/16384/
# 16385/65536/131072/131073/1 MiB (bw from 1 B) with --check; JSON parsed with python3.
# FI_UNIVERSE_SIZE=64 keeps ofi_rxm's verbs CQ under rxe's max_cqe (docs/transport-ofi.md).
# Usage: bash tests/system/rxe/cli_ofi_rxm.sh /path/to/rdmabench    Exit 0 = pass, 1 = fail.
set -euo pipefail

RB=$(readlink -f "${1:?usage: $0 /path/to/rdmabench}")
[ -n "${RXE_IP:-}" ] || { echo "FAIL: RXE_IP not set (run me inside ci/rxe-vm)" >&2; exit 1; }
DEV=${RXE_DEV:-rxe0}
export FI_UNIVERSE_SIZE=${FI_UNIVERSE_SIZE:-64}
TMP=$(mktemp -d /tmp/rxe-ofi.XXXXXX)
SERVER=
cleanup() {
  [ -z "$SERVER" ] || kill -9 "$SERVER" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
T0=$(date +%s)

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
    c = d['run']['local'].get('connection', {}) if isinstance(d, dict) and 'run' in d else {}
    if not eval(expr):
        bad += 1
        print("JSON check failed:", path, expr, json.dumps(d)[:1500], file=sys.stderr)
print("JSON checks: %d of %d passed" % (len(lines) - bad, len(lines)))
sys.exit(1 if bad else 0)
PY
}
# json_num FILE KEY: the first numeric value of "KEY" in FILE (no python start).
json_num() { grep -o "\"$2\":[0-9]*" "$1" | head -1 | cut -d: -f2; }

PORT=18660
"$RB" server --bind "$RXE_IP" --port $PORT --quiet &
SERVER=$!
for i in $(seq 1 200); do
  bash -c "exec 3<>/dev/tcp/$RXE_IP/$PORT" 2>/dev/null && break
  sleep 0.05
done
C=(-t ofi --provider "verbs;ofi_rxm" --domain "$DEV" --remote-device "$DEV" "$RXE_IP" --port $PORT)

run() {
  local name=$1; shift
  timeout 90 "$RB" "$@" -f json -o "$TMP/$name.json" 2>"$TMP/$name.err" ||
    fail "rdmabench $* (exit $?): $(cat "$TMP/$name.err")"
}

run first lat "${C[@]}" -s 1 -n 50 --check
json_check "$TMP/first.json" "d['run']['local']['provider']=='verbs;ofi_rxm' and d['run']['remote']['provider']=='verbs;ofi_rxm' and r['bytes']==1"
INJ=$(json_num "$TMP/first.json" inline_bytes)
[ "$INJ" -gt 0 ] || fail "inject_size is $INJ"
pass "lat -t ofi verbs;ofi_rxm on $DEV (inject_size $INJ)"

list="0,1,$INJ,16384,16385,65536,131072,131073,1048576"
run lat lat "${C[@]}" -s "$list" -n 10 --warmup 2 --check
json_check "$TMP/lat.json" "[x['bytes'] for x in d['rows']]==[$list] and all(x['iterations']==10 and x['latency_us']['median']>0 for x in d['rows']) and d['run']['extra']['check']"
run bw bw "${C[@]}" -s "${list#0,}" -n 2 -w 4 --check
json_check "$TMP/bw.json" "[x['bytes'] for x in d['rows']]==[${list#0,}] and all(x['mb_per_s']>0 for x in d['rows'])"
pass "verbs;ofi_rxm lat (--check) and bw at 0, 1, $INJ, 16384, 16385, 65536, 131072, 131073, 1048576 B"

# Event mode: both sides' CQs get FI_WAIT_FD and sleep between completions.
run ev lat "${C[@]}" -e -s 1,65536 -n 50 --check
json_check "$TMP/ev.json" "d['run']['local']['event_mode'] and d['run']['remote']['event_mode'] and all(x['wrong']==0 and x['latency_us']['median']>0 for x in d['rows'])"
pass "verbs;ofi_rxm lat -e (FI_WAIT_FD + fi_trywait) at 1 and 65536 B, --check"
# Issue 35 item 13: the README's A/B example as written, FI_UNIVERSE_SIZE unset for the client
# and the server (lat, bw and server set 64 themselves when it is unset: 256 x (128 + 128) CQ
# entries exceed rxe's max_cqe of 32767 and fi_enable failed).
P3=18662
env -u FI_UNIVERSE_SIZE "$RB" server --bind "$RXE_IP" --port $P3 --quiet &
S3=$!
for i in $(seq 1 200); do
  bash -c "exec 3<>/dev/tcp/$RXE_IP/$P3" 2>/dev/null && break
  sleep 0.05
done
rc=0
env -u FI_UNIVERSE_SIZE timeout 120 "$RB" lat "$RXE_IP" --port $P3 --compare 'verbs,ofi:verbs;ofi_rxm' \
  -s 8 -n 20 -f json -o "$TMP/readme_ab.json" 2>"$TMP/readme_ab.err" || rc=$?
kill -9 $S3 2>/dev/null || true
[ "$rc" = 0 ] || fail "README A/B example (exit $rc): $(cat "$TMP/readme_ab.err")"
json_check "$TMP/readme_ab.json" "[v['label'] for v in d['variants']]==['verbs','ofi:verbs;ofi_rxm'] and all(len(v['rows'])==1 and 'error' not in v for v in d['variants'])"
pass "README: lat --compare 'verbs,ofi:verbs;ofi_rxm' with FI_UNIVERSE_SIZE unset on both sides"
check_all
echo "PASSED: rdmabench -t ofi verbs;ofi_rxm on $DEV ($(($(date +%s) - T0)) s)"
