# --ifname / $RDMABENCH_IFNAME on a multi-homed host (docs/cli.md): a netns host with two
# addressed interfaces (a veth pair, both ends inside it: ia 10.81.X.1, ib 10.82.X.1), one
# that is down (ic) and one that is up without an address (id0). The ranks' data-plane addresses in the pairs report, and under mpirun rank
# 0's store address published through PMIx, must be those of the selected interface; an
# interface that does not exist, is down or has no IPv4 address is a one-line error naming it.
source "$(dirname "$0")/lib.sh"
need_root
command -v mpirun >/dev/null || { [ "${CI:-}" = true ] && fail "mpirun missing (ci/install-deps.sh installs openmpi-bin)"; skip "mpirun (openmpi-bin) is not installed"; }

id=$$
NS=rbIf$id A=10.81.$((id % 200)).1 B=10.82.$((id % 200)).1
ip netns add "$NS"; CLEANUP+=("ip netns del $NS")
ip -n "$NS" link set lo up
ip -n "$NS" link add ia type veth peer name ib
ip -n "$NS" link add ic type veth peer name id0
ip -n "$NS" addr add "$A/24" dev ia
ip -n "$NS" addr add "$B/24" dev ib
ip -n "$NS" addr add "10.83.$((id % 200)).1/24" dev ic
ip -n "$NS" link set ia up
ip -n "$NS" link set ib up
ip -n "$NS" link set id0 up  # up, no IPv4 address
IN=(ip netns exec "$NS" env -i PATH="$PATH" HOME="${HOME:-/root}" TMPDIR=/tmp)
PAIRS=(pairs -n 50 --warmup 5 --bw-size 4K -w 2 --bw-iters 2 --timeout 20 -f json)

"${IN[@]}" timeout 60 "$RB" "${PAIRS[@]}" --np 2 --ifname ib -o "$TMP/ib.json" >"$TMP/out" 2>&1 ||
  fail "pairs --np 2 --ifname ib: $(tail -n 20 "$TMP/out")"
json_check "$TMP/ib.json" "[r['address'] for r in d['ranks']]==['$B','$B'] and len(d['links'])==2"
"${IN[@]}" RDMABENCH_IFNAME=^lo,ib timeout 60 "$RB" "${PAIRS[@]}" --np 2 -o "$TMP/ia.json" >"$TMP/out" 2>&1 ||
  fail "pairs --np 2 with RDMABENCH_IFNAME=^lo,ib: $(tail -n 20 "$TMP/out")"
json_check "$TMP/ia.json" "[r['address'] for r in d['ranks']]==['$A','$A'] and len(d['links'])==2"
pass "--ifname ib and RDMABENCH_IFNAME=^lo,ib: the ranks' data-plane addresses are $B, then $A"

# Under mpirun (PMIx), rank 0 publishes the selected interface's address for its store.
"${IN[@]}" timeout 60 mpirun --allow-run-as-root --oversubscribe -np 2 "$RB" "${PAIRS[@]}" \
  --ifname =ib -o "$TMP/pmix.json" >"$TMP/out" 2>&1 || fail "mpirun pairs --ifname =ib: $(tail -n 20 "$TMP/out")"
json_check "$TMP/pmix.json" "d['run']['extra']['launch']=='pmix' and ' (tcp $B:' in d['run']['extra']['rendezvous'] and [r['address'] for r in d['ranks']]==['$B','$B']"
pass "mpirun --ifname =ib: rank 0's store published at $B through PMIx, data plane on $B"

expect_status 2 "rdmabench: error: rank 0 on $(hostname): --ifname nosuch0: no such interface on this host (interfaces: lo, " \
  "${IN[@]}" "$RB" barrier --np 1 -n 5 --ifname nosuch0
expect_status 2 "--ifname ic: no usable IPv4 address on ic (down)" "${IN[@]}" "$RB" barrier --np 1 -n 5 --ifname ic
expect_status 2 "--ifname id0: no usable IPv4 address on id0 (no IPv4 address)" "${IN[@]}" "$RB" barrier --np 1 -n 5 --ifname id0
expect_status 2 "rdmabench: error: --ifname '': no interface name" "${IN[@]}" "$RB" barrier --ifname ""
expect_status 2 "rdmabench: error: --ifname ib and --bind $A: give only one" "${IN[@]}" "$RB" barrier --ifname ib --bind "$A"
pass "--ifname naming a missing or down interface, or with --bind: one error line each, exit 2"
