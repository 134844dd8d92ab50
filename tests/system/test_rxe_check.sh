#!/usr/bin/env bash
# System test: `rdmabench check` on soft-RoCE with the known answers of issue 34 (docs/check.md).
#  - one VM, check measuring in loopback on rxe0: clean within the clean link's own counter spread
#    (exit 0), the budget on busy vCPUs, the link down (tests/system/rxe/check_verbs.sh);
#  - two VMs, check --peer against `rdmabench server --token` in the other VM: the regression
#    against a recorded baseline under netem delay, and the error counters under netem loss 2%
#    (tests/system/rxe/check_pair_verbs.sh). These need the traffic on a wire: in one VM rxe hands
#    a packet for its own address straight to its receive path, past every qdisc (measured: netem
#    loss 2% on veth0 and lo left every counter unmoved and check exited 0).
# Usage: bash tests/system/test_rxe_check.sh <path-to-rdmabench>
# Exit 0 pass, 1 fail, 77 SKIPPED (not root only).
source "$(dirname "$0")/rxe/common.sh"
timeout 700 "$VM" run --timeout 600 -- bash "$SRC/tests/system/rxe/check_verbs.sh" "$RB"
rc=$?
[ "$rc" -eq 0 ] || fail "check_verbs.sh in the VM exited with $rc"
T1=$(date +%s)
TOKEN=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
timeout 900 "$VM" pair --timeout 700 --server-grace 2 \
  --server "RDMABENCH_TOKEN=$TOKEN \"$RB\" server --quiet" \
  --client "bash \"$SRC/tests/system/rxe/check_pair_verbs.sh\" \"$RB\" $TOKEN"
rc=$?
[ "$rc" -eq 0 ] || fail "check_pair_verbs.sh in the client VM exited with $rc"
pass "rdmabench check on rxe0: one VM (clean, budget, link down) $((T1 - T0)) s; two VMs (regression, loss) $(($(date +%s) - T1)) s"
