#!/usr/bin/env bash
# System test: two VMs = two nodes. `rdmabench server` in VM 1, short verbs latency and
# bandwidth runs from VM 2 across the emulated wire (RoCE v2 between two kernels), JSON checked.
# Usage: bash tests/system/test_rxe_pair.sh <path-to-rdmabench>
# Exit 0 pass, 1 fail, 77 SKIPPED (not root only).
source "$(dirname "$0")/rxe/common.sh"
client=$(cat <<CLIENT
set -e
"$RB" lat -t verbs "\$PEER_IP" -s 8 -n 20 --warmup 2 --timeout 30 --check -f json -o /tmp/lat.json
"$RB" bw -t verbs "\$PEER_IP" --op write -s 65536 -n 2 -w 8 --timeout 30 -f json -o /tmp/bw.json
python3 - <<'PY'
import json
lat = json.load(open('/tmp/lat.json')); bw = json.load(open('/tmp/bw.json'))
for d in (lat, bw):
    c = d['run']['local']['connection']
    assert c['state'] == 'RTS' and c['rnr_retry'] == 7, c
    assert c['local_gid'] != c['remote_gid'], c       # two nodes, two GIDs
    # Two nodes: each end's RoCE v2 GID is its own VM's address (client 10.98.0.2, server
    # 10.98.0.1). Host names cannot tell: both VMs boot the host's root file system.
    assert c['local_gid'] == '::ffff:10.98.0.2' and c['remote_gid'] == '::ffff:10.98.0.1', c
r = lat['rows'][0]; b = bw['rows'][0]
assert r['bytes'] == 8 and r['latency_us']['median'] > 0, r
assert b['bytes'] == 65536 and b['mb_per_s'] > 0, b
print("pair ok: lat 8 B median %.1f us, bw write 64 KiB %.2f MB/s, %s -> %s" % (
    r['latency_us']['median'], b['mb_per_s'], lat['run']['local']['connection']['local_gid'],
    lat['run']['local']['connection']['remote_gid']))
PY
CLIENT
)
timeout 600 "$VM" pair --timeout 300 --server "\"$RB\" server --quiet" --client "$client"
rc=$?
[ "$rc" -eq 0 ] || fail "two-VM client exited with $rc"
pass "rdmabench server in one VM, lat and bw from the other over RoCE v2 ($(($(date +%s) - T0)) s)"
