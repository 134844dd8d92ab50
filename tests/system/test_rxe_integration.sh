#!/usr/bin/env bash
# System test: the verbs and verbs;ofi_rxm integration tests for real, inside the soft-RoCE VM
# (rxe0), asserting that they ran and that none of them was skipped.
# Usage: bash tests/system/test_rxe_integration.sh <path-to-rdmabench>   (integration_tests is
# taken from <build>/tests/). Exit 0 pass, 1 fail, 77 SKIPPED (not root only).
source "$(dirname "$0")/rxe/common.sh"
IT=$BUILD/tests/integration_tests
[ -x "$IT" ] || fail "$IT not built"
FILTER='Verbs*:*/verbs_ofi_rxm'
expected=$("$IT" --gtest_filter="$FILTER" --gtest_list_tests | grep -c '^  ')
[ "$expected" -ge 20 ] || fail "only $expected tests match $FILTER"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
timeout 600 "$VM" run --timeout 420 -- "$IT" --gtest_filter="$FILTER" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || fail "integration tests in the VM exited with $rc"
grep -q '^\[  PASSED  \] '"$expected"' test' "$log" || fail "expected $expected passed tests"
if grep -q '^\[  SKIPPED \]' "$log"; then
  grep '^\[  SKIPPED \]' "$log"
  fail "verbs / verbs;ofi_rxm integration tests were skipped inside the VM"
fi
pass "$expected verbs and verbs;ofi_rxm integration tests passed on rxe0, none skipped ($(($(date +%s) - T0)) s)"
