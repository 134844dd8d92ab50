# `rdmabench check` on the host (issue 34), on a fake sysfs tree ($RDMABENCH_CHECK_SYSFS): exit
# codes and the drain reason line (no device with and without --require-rdma, a DOWN port, a port
# whose measurement cannot run), -f json and -o, the history (--record twice at once, --baseline
# with too few runs, a corrupt and another node's history: exit 3, file untouched), bad input
# (exit 2), and the noise step naming a pinned hog on its core. The RDMA cases with a real device
# are in tests/system/test_rxe_check.sh (soft-RoCE VMs; --peer against a server here). About 15 s.
source "$(dirname "$0")/lib.sh"

SYS=$TMP/sys
mkdir -p "$SYS/class"
run() { # run NAME ARGS...: stdout NAME.out, stderr NAME.err, status in $rc
  local name=$1
  shift
  rc=0
  RDMABENCH_CHECK_SYSFS=$SYS timeout 60 "$RB" check "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
}
first() { head -1 "$TMP/$1.out"; }

# No RDMA device: healthy with a note, unhealthy with --require-rdma (the reason first).
run none --skip measure --skip noise
[ "$rc" = 0 ] || fail "no device: exit $rc, expected 0: $(cat "$TMP/none.out" "$TMP/none.err")"
grep -q "^note no RDMA device under $SYS/class/infiniband" "$TMP/none.out" || fail "no note: $(cat "$TMP/none.out")"
run req --skip measure --skip noise --require-rdma
[ "$rc" = 1 ] || fail "--require-rdma: exit $rc, expected 1"
[ "$(first req)" = "rdmabench check: node: no RDMA device (--require-rdma)" ] || fail "reason: $(first req)"
pass "no device: exit 0 with a note; --require-rdma: exit 1 with the reason first"

# A RoCE port DOWN (fake tree): fails on port state, nothing measured on it.
D=$SYS/class/infiniband/mlx5_0
mkdir -p "$D/ports/1/gids" "$D/ports/1/gid_attrs/types" "$D/ports/1/gid_attrs/ndevs" \
  "$D/ports/1/counters" "$D/ports/1/hw_counters" "$SYS/class/net/eth9/statistics"
echo 20.1.2 >"$D/fw_ver"
echo "1: DOWN" >"$D/ports/1/state"
echo "3: Disabled" >"$D/ports/1/phys_state"
echo "100 Gb/sec (4X EDR)" >"$D/ports/1/rate"
echo Ethernet >"$D/ports/1/link_layer"
echo 0000:0000:0000:0000:0000:ffff:0a63:0001 >"$D/ports/1/gids/1"
echo "RoCE v2" >"$D/ports/1/gid_attrs/types/1"
echo eth9 >"$D/ports/1/gid_attrs/ndevs/1"
echo 0 >"$D/ports/1/counters/symbol_error"
echo 7 >"$D/ports/1/hw_counters/np_cnp_sent"
echo down >"$SYS/class/net/eth9/operstate"
echo 9000 >"$SYS/class/net/eth9/mtu"
echo 0 >"$SYS/class/net/eth9/statistics/rx_errors"
run down --skip noise
[ "$rc" = 1 ] || fail "DOWN port: exit $rc, expected 1: $(cat "$TMP/down.out" "$TMP/down.err")"
[ "$(first down)" = "rdmabench check: mlx5_0/1: port state DOWN (physical state Disabled), netdev eth9 down" ] ||
  fail "DOWN reason: $(first down)"
grep -q "measure skipped: no ACTIVE port" "$TMP/down.out" || fail "skip not stated: $(cat "$TMP/down.out")"
pass "DOWN port: exit 1, the drain reason names port, state and netdev"

# The port ACTIVE in sysfs but no such verbs device here: the measurement fails, says which
# connection it used, and the check stays within its budget.
echo "4: ACTIVE" >"$D/ports/1/state"
echo "5: LinkUp" >"$D/ports/1/phys_state"
echo up >"$SYS/class/net/eth9/operstate"
start=$(date +%s)
run active --skip noise --budget 10 -f json -o "$TMP/active.json"
took=$(($(date +%s) - start))
[ "$rc" = 1 ] || fail "unmeasurable port: exit $rc, expected 1: $(cat "$TMP/active.err")"
[ "$took" -le 15 ] || fail "check --budget 10 took ${took}s"
grep -q "^rdmabench check: mlx5_0/1: loopback measurement failed: " "$TMP/active.err" ||
  fail "reason on stderr with -o: $(cat "$TMP/active.err")"
python3 - "$TMP/active.json" <<'PY' || fail "json document"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["test"] == "check" and d["verdict"] == "unhealthy", d["verdict"]
m = d["measurements"][0]
assert m["connection"].startswith("mlx5_0/1 -> mlx5_0/1 (one port to itself, verbs RC"), m
p = d["inventory"]["devices"][0]["ports"][0]
assert p["gids"][0]["type"] == "RoCE v2" and p["netdev"]["mtu"] == 9000, p
c = {x["name"]: x for x in d["counters"][0]["counters"]}
assert c["hw_counters/np_cnp_sent"]["class"] == "congestion", c
assert c["counters/symbol_error"]["class"] == "error", c
assert c["netdev/rx_errors"]["class"] == "error", c
assert [s["name"] for s in d["steps"]][:2] == ["inventory", "measure"], d["steps"]
PY
pass "unmeasurable port: exit 1 naming the connection, JSON with inventory and counters, ${took}s"

# libfabric after verbs: this host's libfabric has no verbs domain mlx5_0 (no RDMA here), so the
# ofi run is not measured and says why in a note; a missing transport is not an unhealthy node.
run ofi --skip noise --skip verbs --budget 10 -f json -o "$TMP/ofi.json"
[ "$rc" = 0 ] || fail "--skip verbs, no libfabric domain: exit $rc, expected 0: $(cat "$TMP/ofi.err")"
python3 - "$TMP/ofi.json" <<'PY' || fail "ofi run not stated as not measured: $(cat "$TMP/ofi.json")"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["measurements"]
assert len(m) == 1 and m[0]["subject"] == "mlx5_0/1 ofi:verbs;ofi_rxm", m
assert m[0]["transport"] == "ofi" and m[0]["skipped"] and not m[0]["error"], m[0]
assert any(n.startswith("measure mlx5_0/1 ofi:verbs;ofi_rxm: not measured: libfabric") for n in d["notes"]), d["notes"]
print("ofi:", m[0]["skipped"])
PY
pass "libfabric absent for the device: a note, exit 0"

# --peer: the measurement goes to `rdmabench server` on the peer (here one on 127.0.0.1 with a
# token; the known answers across a wire are in tests/system/rxe/check_pair_verbs.sh). The
# subject names port and peer; a wrong token and a peer with no server are named on the first
# line, within the budget.
PPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
RDMABENCH_TOKEN=right "$RB" server -p "$PPORT" --quiet &
SPID=$!
for i in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$PPORT") 2>/dev/null && break; sleep 0.1; done
run peer1 --skip noise --budget 10 --peer "127.0.0.1:$PPORT" --token wrong -f json -o "$TMP/peer1.json"
[ "$rc" = 1 ] || fail "--peer with a wrong token: exit $rc, expected 1: $(cat "$TMP/peer1.err")"
grep -q "^rdmabench check: mlx5_0/1->127.0.0.1: measurement against the peer failed: latency: server 127.0.0.1:$PPORT refused: access refused: wrong token" "$TMP/peer1.err" ||
  fail "--peer wrong token reason: $(cat "$TMP/peer1.err")"
python3 -c "import json; m=json.load(open('$TMP/peer1.json'))['measurements'][0]; assert m['peer']=='127.0.0.1' and m['connection'].startswith('mlx5_0/1 -> 127.0.0.1:$PPORT (verbs RC, \`rdmabench server\` on the peer'), m" ||
  fail "--peer JSON measurement"
kill "$SPID"
wait "$SPID" 2>/dev/null
run peer2 --skip noise --budget 10 --peer 127.0.0.1 -p "$PPORT"
[ "$rc" = 1 ] && grep -q "^rdmabench check: mlx5_0/1->127.0.0.1: measurement against the peer failed: latency: connect to 127.0.0.1:$PPORT (is .rdmabench server. running there?)" "$TMP/peer2.out" ||
  fail "--peer without a server: exit $rc: $(cat "$TMP/peer2.out" "$TMP/peer2.err")"
run peer3 --skip noise --peer ''
[ "$rc" = 2 ] && grep -q "^rdmabench: error: --peer '': empty host name" "$TMP/peer3.err" ||
  fail "--peer '': exit $rc: $(cat "$TMP/peer3.err")"
pass "--peer: wrong token and no server named on the first line (exit 1), --peer '' (exit 2)"

# Usage errors: exit 2, one line naming the option.
run bad --budget 2
[ "$rc" = 2 ] && grep -q "^rdmabench: error: --budget 2: out of range 5..3600" "$TMP/bad.err" ||
  fail "--budget 2: exit $rc: $(cat "$TMP/bad.err")"
run bad2 --expect 'lat_p99=3us'
[ "$rc" = 2 ] && grep -q "expect 'lat_p99=3us': no operator" "$TMP/bad2.err" ||
  fail "bad --expect: exit $rc: $(cat "$TMP/bad2.err")"
run bad3 --baseline "$TMP/nodir"
[ "$rc" = 2 ] && grep -q -- "--baseline $TMP/nodir: No such file or directory" "$TMP/bad3.err" ||
  fail "missing --baseline dir: exit $rc: $(cat "$TMP/bad3.err")"
pass "bad input: exit 2 with one line naming the option"

# History: two checks at once both land; too few runs judge nothing and say so.
rm -rf "$D"
H=$TMP/hist
mkdir -p "$H"
run rec1 --skip measure --budget 15 --record "$H" --node n1 &
p1=$!
run rec2 --skip measure --budget 15 --record "$H" --node n1
wait "$p1" || true
python3 -c "import json,sys; d=json.load(open('$H/n1.json')); assert len(d['runs'])==2 and d['node']=='n1' and d['version']==1, d" ||
  fail "two concurrent --record runs did not both land: $(cat "$H/n1.json")"
run few --skip measure --budget 15 --baseline "$H" --node n1
[ "$rc" = 0 ] || fail "too few runs: exit $rc: $(cat "$TMP/few.out")"
grep -q "^note baseline $H/n1.json: could not judge 1 of 1 figure(s), too few healthy runs (e.g. node noise_stolen_pct (2 of 5 runs needed))" \
  "$TMP/few.out" || fail "no could-not-judge note: $(cat "$TMP/few.out")"
pass "two --record at once both land; 2 of 5 runs: passes, says it could not judge"

# A corrupt history and another node's: exit 3 before measuring, one line naming the file,
# the file untouched.
printf '{"schema": "rdmabench-check-hist' >"$H/n2.json"
cp "$H/n2.json" "$TMP/n2.before"
run corrupt --skip measure --skip noise --record "$H" --node n2
[ "$rc" = 3 ] || fail "corrupt history: exit $rc, expected 3"
grep -q "^rdmabench check: could not run: history $H/n2.json: " "$TMP/corrupt.err" || fail "corrupt: $(cat "$TMP/corrupt.err")"
cmp -s "$H/n2.json" "$TMP/n2.before" || fail "the corrupt history was changed"
cp "$H/n1.json" "$H/n3.json"
run other --skip measure --skip noise --baseline "$H" --node n3 -f json
[ "$rc" = 3 ] || fail "other node's history: exit $rc"
grep -q "the history of node 'n1', not of this node 'n3'" "$TMP/other.err" || fail "other: $(cat "$TMP/other.err")"
python3 -c "import json; d=json.load(open('$TMP/other.out')); assert d['verdict']=='error' and d['exit_status']==3" ||
  fail "json error document: $(cat "$TMP/other.out")"
pass "corrupt / other node's history: exit 3, one line naming it, file untouched"

# The noise step names a hog pinned on cpu 1 (tests/system/noise_injector.c, 20% of the core,
# SCHED_FIFO above check's threads as in test_noise.sh, so other load on the host cannot move it).
if [ "$(id -u)" = 0 ] && [ "$(nproc)" -ge 2 ] && command -v "${CC:-cc}" >/dev/null; then
  "${CC:-cc}" -O2 -Wall -Wextra -Werror -o "$TMP/inj" "$SRC/tests/system/noise_injector.c" ||
    fail "building noise_injector.c"
  chrt -f 30 "$TMP/inj" 1 2000 10000 15 rbcheckhog >"$TMP/inj.out" 2>&1 &
  INJ=$!
  CLEANUP+=("kill -9 $INJ")
  wait_for "$TMP/inj.out" '^ready' "$INJ" 10
  rc=0
  RDMABENCH_CHECK_SYSFS=$SYS timeout 60 chrt -f 20 "$RB" check --skip measure --budget 30 -f json \
    >"$TMP/hog.json" 2>"$TMP/hog.err" || rc=$?
  [ "$rc" = 0 ] || fail "check with a hog: exit $rc: $(cat "$TMP/hog.err")"
  python3 - "$TMP/hog.json" <<'PY' || fail "hog not named on its core"
import json, sys
d = json.load(open(sys.argv[1]))
cores = {c["cpu"]: c for c in d["noise"]["cores"]}
print("cpu 1:", cores[1]["stolen_pct"], cores[1]["sources"][:2])
assert any("rbcheckhog" in s for s in cores[1]["sources"]), cores[1]
assert not any("rbcheckhog" in s for s in cores[0]["sources"]), cores[0]
assert cores[1]["stolen_pct"] > cores[0]["stolen_pct"], cores
PY
  kill -9 "$INJ" 2>/dev/null || true
  pass "noise step: the hog pinned on cpu 1 is named there, not on cpu 0"
else
  [ "${CI:-}" = true ] && fail "CI must run as root with 2 CPUs and a C compiler (the hog case)"
  echo "hog case not run: needs root (chrt), 2 CPUs and a C compiler"
fi
