#!/usr/bin/env bash
# System test: two VMs = two nodes. `rdmabench server` in VM 1, short verbs latency and
# bandwidth runs from VM 2 across the emulated wire (RoCE v2 between two kernels), JSON checked;
# then a path that drops frames above 1500 B under a 4096 B path MTU: the path-MTU hint.
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
# Path MTU (issue #13): 9000 B on both NICs (rxe's path MTU becomes 4096) while this VM's egress
# drops IP packets above 1500 B, like a switch port with a smaller MTU. 8 B and 1 KiB pass, 2 KiB
# exceeds the retry count: the error must name the path MTU and suggest --mtu 1024, and that
# advice must work.
ip link set dev "\$RXE_NETDEV" mtu 9000
i=0
until ibv_devinfo -d "\$RXE_DEV" | grep -q 'active_mtu:.*4096'; do
  i=\$((i + 1)); [ \$i -lt 100 ] || { echo "FAIL: rxe active_mtu did not follow the 9000 B netdev MTU"; exit 1; }
  sleep 0.1
done
tc qdisc add dev "\$RXE_NETDEV" root handle 1: prio
tc filter add dev "\$RXE_NETDEV" parent 1: protocol ip basic match 'cmp(u16 at 2 layer network gt 1500)' action drop
if "$RB" lat -t verbs "\$PEER_IP" -s 8,1024,2048 -n 5 --warmup 1 --timeout 20 >/tmp/mtu.out 2>/tmp/mtu.err; then
  echo "FAIL: 2 KiB passed a path that drops frames above 1500 B"; exit 1
fi
grep -q "sizes up to 1024 B passed and 2048 B failed: .*path MTU of 4096 B); try --mtu 1024" /tmp/mtu.err ||
  { echo "FAIL: no path-MTU hint:"; cat /tmp/mtu.err; exit 1; }
"$RB" lat -t verbs "\$PEER_IP" -s 2048 -n 5 --warmup 1 --mtu 1024 --timeout 20 -f json -o /tmp/mtu.json
python3 -c 'import json; d=json.load(open("/tmp/mtu.json")); c=d["run"]["local"]["connection"]; assert c["mtu"]==1024 and d["rows"][0]["bytes"]==2048, c; print("path MTU hint ok: 2 KiB failed with the hint, passed with --mtu 1024")'
CLIENT
)
# The server's NIC gets a 9000 B MTU too (its rxe path MTU 4096) for the path-MTU case.
server="ip link set dev \$RXE_NETDEV mtu 9000 && \"$RB\" server --quiet"
timeout 600 "$VM" pair --timeout 300 --server "$server" --client "$client"
rc=$?
[ "$rc" -eq 0 ] || fail "two-VM client exited with $rc"
pass "rdmabench server in one VM, lat and bw from the other over RoCE v2, path-MTU hint ($(($(date +%s) - T0)) s)"
