#!/usr/bin/env bash
# System test: the integration tests that need an RDMA device, for real, inside the soft-RoCE VM
# (rxe0): the verbs transport tests, the verbs collective cases (every algorithm, barrier, ring,
# 1..16 ranks), libfabric verbs;ofi_rxm (RDM) and verbs FI_EP_MSG. Asserts that they ran and
# passed; skips go through the skip guard (ci/check-skips.py scope "vm"): under CI=true a skip
# not in ci/skip-allowlist.txt fails.
# Usage: bash tests/system/test_rxe_integration.sh <path-to-rdmabench>   (integration_tests is
# taken from <build>/tests/). Exit 0 pass, 1 fail, 77 SKIPPED (not root only).
source "$(dirname "$0")/rxe/common.sh"
IT=$BUILD/tests/integration_tests
[ -x "$IT" ] || fail "$IT not built"
FILTER='Verbs*:*/verbs_ofi_rxm:Providers/OfiMsgTransport.*/verbs:*Collective.*/verbs_*'
expected=$("$IT" --gtest_filter="$FILTER" --gtest_list_tests | grep -c '^  ')
[ "$expected" -ge 80 ] || fail "only $expected tests match $FILTER"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
timeout 1500 "$VM" run --timeout 1380 -- "$IT" --gtest_filter="$FILTER" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || fail "integration tests in the VM exited with $rc"
python3 "$SRC/ci/check-skips.py" vm --gtest-log "$log" || fail "unlisted skips inside the VM (above)"
ok=$(grep -c '^\[       OK \] ' "$log")
skipped=$(grep -c '^\[  SKIPPED \] .* (' "$log")
[ $((ok + skipped)) -eq "$expected" ] || fail "$expected tests selected, $ok passed, $skipped skipped"
pass "$ok of $expected verbs, verbs collective, verbs;ofi_rxm and verbs FI_EP_MSG integration tests passed on rxe0, $skipped skipped ($(($(date +%s) - T0)) s)"
